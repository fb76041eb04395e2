#include "iolab/report/recommend.h"


#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common.h"
#include "iolab/harness/thresholds.h"
#include "iolab/io/registry.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

constexpr Band kBands[] = {Band::Under64, Band::To4K, Band::To1M, Band::Over1M};
// "end" (one flush after the last write) is a row of its own: the data is
// durable when the timed region ends, which "none" does not promise.
constexpr const char* kFlushes[] = {"none", "end", "every-16k", "async-16k", "every"};
constexpr const char* kCaches[] = {"warm", "cold"};

// The table's cache column. Buffered writes go to a fresh file (the runner
// records no cache state for them) and end in the page cache: the first
// column. O_DIRECT writes end on the device, which is other work: the second
// column, beside O_DIRECT reads.
std::string table_cache(const harness::Result& r) {
  if (r.op == harness::Op::Write) return r.cache == harness::CacheState::Direct ? "cold" : "warm";
  return cache_class(r);
}

// The file methods that usually compete for a cell (those the table's own
// experiments measure there), so a verdict can say which of them a results
// file lacks.
std::vector<std::string> usual_methods(const Cell& c) {
  const bool aligned = c.band == Band::To1M || c.band == Band::Over1M;  // O_DIRECT needs 512 B multiples here
  if (c.op == "read") {
    if (c.cache == "warm") return {"io_uring", "mmap", "pread", "stdio", "syscall"};
    std::vector<std::string> m = {"io_uring", "mmap", "pread", "stdio", "syscall"};
    if (aligned) m.insert(m.begin(), "direct");
    return m;
  }
  if (c.cache == "warm") return {"mmap", "pread", "stdio", "syscall"};
  return aligned ? std::vector<std::string>{"direct"} : std::vector<std::string>{};
}

// What must be equal for two methods' figures to be compared directly.
using Condition = std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::string>;
Condition condition_of(const harness::Result& r) {
  return {r.suite, harness::pattern_name(r), r.block_size, r.file_size, sync_class(r)};
}

double speed(const harness::Result& r) { return rate(r).median; }

using ByCondition = std::map<Condition, std::map<std::string, const harness::Result*>>;

// Ranks the methods of a cell: the best (ahead of every method it met, else
// the best score), its closest competitor and the margin between them.
void rank(Cell& cell, const ByCondition& by_condition) {
  // Score: geometric mean of speed relative to the condition's best, over the
  // conditions where the method met at least one other.
  std::map<std::string, std::pair<double, int>> log_score;
  for (const auto& [cond, methods] : by_condition) {
    if (methods.size() < 2) continue;
    double top = 0;
    for (const auto& [m, r] : methods) top = std::max(top, speed(*r));
    if (top <= 0) continue;
    for (const auto& [m, r] : methods) {
      auto& s = log_score[m];
      s.first += std::log(speed(*r) / top);
      ++s.second;
    }
  }
  if (log_score.size() < 2) return;  // the methods never ran side by side
  std::vector<std::pair<std::string, double>> ranked;
  for (const auto& [m, s] : log_score) ranked.emplace_back(m, s.first / s.second);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  // Head to head: geometric mean of speed ratios where two methods met.
  std::map<std::string, std::map<std::string, std::pair<double, int>>> pair;
  for (const auto& [cond, methods] : by_condition)
    for (const auto& [a, ra] : methods)
      for (const auto& [b, rb] : methods)
        if (a != b) {
          auto& p = pair[a][b];
          p.first += std::log(speed(*ra) / speed(*rb));
          ++p.second;
        }
  auto head_to_head = [&](const std::string& a, const std::string& b) {
    const auto& p = pair[a][b];
    return std::exp(p.first / p.second);
  };
  auto ahead_of_all = [&](const std::string& m) {
    for (const auto& [o, p] : pair[m])
      if (head_to_head(m, o) <= 1) return false;
    return true;
  };
  cell.best = ranked[0].first;
  for (const auto& [m, score] : ranked)
    if (ahead_of_all(m)) {
      cell.best = m;
      cell.ahead_of_all = true;
      break;
    }
  double closest = 0;
  for (const auto& [o, p] : pair[cell.best]) {
    double r = head_to_head(cell.best, o);
    if (cell.runner_up.empty() || r < closest) cell.runner_up = o, closest = r;
  }
  cell.margin = closest;
  for (const auto& [cond, methods] : by_condition)
    cell.shared += methods.count(cell.best) && methods.count(cell.runner_up);
}

// Whether a record left out for warnings could still beat `best`: a figure
// from the wrong cache state says nothing about the right one, and an
// imprecise one (too short, outliers) counts unless even its fastest
// repetition loses clearly.
bool not_ruled_out(const harness::Result& best, const harness::Result& left) {
  for (const auto& k : distrust(left))
    if (k == harness::to_string(harness::WarningKind::NotWarm) || k == harness::to_string(harness::WarningKind::NotCold))
      return true;
  return !clearly_faster(best, left);
}

// The clear-winner rule, condition by condition: the best must have run at
// each contested condition and clearly beaten every other method there,
// including those whose figures were left out for warnings (marked, not
// ignored: a competitor that cannot be trusted cannot be ruled out either).
void judge(Cell& cell, const ByCondition& by_condition, const ByCondition& left) {
  std::set<Condition> conditions;
  for (const auto& [cond, methods] : by_condition) conditions.insert(cond);
  for (const auto& [cond, methods] : left) conditions.insert(cond);
  static const std::map<std::string, const harness::Result*> none;
  bool reps_enough = true, first = true;
  for (const Condition& cond : conditions) {
    auto t = by_condition.find(cond), l = left.find(cond);
    const auto& trusted = t == by_condition.end() ? none : t->second;
    const auto& untrusted = l == left.end() ? none : l->second;
    std::set<std::string> present;
    for (const auto& [m, r] : trusted) present.insert(m);
    for (const auto& [m, r] : untrusted) present.insert(m);
    if (present.size() < 2) continue;
    ++cell.contested;
    for (const auto& [m, r] : trusted) reps_enough &= r->samples_s.size() >= 2;
    auto b = trusted.find(cell.best);
    if (b == trusted.end()) {
      ++cell.absent;
      continue;
    }
    bool beats_all = true;
    for (const auto& [m, r] : trusted) {
      if (m == cell.best) continue;
      beats_all &= clearly_faster(*b->second, *r);
      // The least favourable pairing of repetitions: best's slowest vs the other's fastest.
      double worst = rate(*b->second).slowest / rate(*r).fastest;
      if (first || worst < cell.worst_ratio) {
        cell.worst_ratio = worst;
        cell.worst_against = m;
        cell.worst_block = r->block_size;
        first = false;
      }
    }
    for (const auto& [m, r] : untrusted) {
      if (m == cell.best || !not_ruled_out(*b->second, *r)) continue;
      beats_all = false;
      if (cell.unresolved++ == 0) cell.unresolved_by = m, cell.unresolved_block = r->block_size;
    }
    cell.won += beats_all;
  }
  cell.noise_known = reps_enough;
  cell.clear = cell.ahead_of_all && reps_enough && cell.absent == 0 && cell.contested > 0 && cell.won == cell.contested;
}

void fill(Cell& cell, const std::vector<const harness::Result*>& records) {
  // A method's buffer is named only when the cell has it with several; a
  // queued method's depth and options always.
  std::map<std::string, std::set<std::string>> buffers_of;
  for (const auto* r : records) buffers_of[r->method].insert(harness::buffer_name(*r));
  auto label = [&](const harness::Result& r) {
    std::string s = buffers_of[r.method].size() > 1 ? method_label(r) : r.method;
    if (std::string q = queue_label(r); !q.empty()) s += " " + q;
    return s;
  };
  ByCondition by_condition;  // condition -> method -> record (the first one seen)
  ByCondition left;          // the same for records left out for warnings
  for (const auto* r : records) {
    std::string m = label(*r);
    if (std::find(cell.methods.begin(), cell.methods.end(), m) == cell.methods.end()) cell.methods.push_back(m);
    if (std::find(cell.block_sizes.begin(), cell.block_sizes.end(), r->block_size) == cell.block_sizes.end())
      cell.block_sizes.push_back(r->block_size);
    // A figure with a warning is not evidence for or against anyone.
    if (auto kinds = distrust(*r); !kinds.empty()) {
      ++cell.left_out_records;
      for (const auto& k : kinds) ++cell.left_out[k];
      left[condition_of(*r)].emplace(m, r);
      continue;
    }
    by_condition[condition_of(*r)].emplace(m, r);
  }
  std::sort(cell.methods.begin(), cell.methods.end());
  std::sort(cell.block_sizes.begin(), cell.block_sizes.end());
  std::set<std::string> kept;
  for (const auto& [cond, methods] : by_condition)
    for (const auto& [m, r] : methods) kept.insert(m);
  if (kept.size() == 1) cell.best = *kept.begin();
  if (kept.size() < 2) return;
  rank(cell, by_condition);
  if (cell.runner_up.empty()) return;
  judge(cell, by_condition, left);
}

std::string left_out_text(const Cell& c) {
  std::string unverified = c.unverified_records == 0 ? ""
                           : std::to_string(c.unverified_records) +
                                 (c.unverified_records == 1 ? " record" : " records") + " left out as unverified";
  if (c.left_out_records == 0) return unverified;
  std::string kinds;
  for (const auto& [k, n] : c.left_out) kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  return std::to_string(c.left_out_records) + (c.left_out_records == 1 ? " record" : " records") +
         " left out for warnings (" + kinds + ")" + (unverified.empty() ? "" : "; " + unverified);
}

}  // namespace

std::string_view to_string(Band band) {
  switch (band) {
    case Band::Under64: return "< 64 B";
    case Band::To4K: return "64 B..4 KiB";
    case Band::To1M: return "4 KiB..1 MiB";
    case Band::Over1M: return ">= 1 MiB";
  }
  return "?";
}

Band band_of(std::uint64_t b) {
  if (b < 64) return Band::Under64;
  if (b < 4096) return Band::To4K;
  if (b < (1u << 20)) return Band::To1M;
  return Band::Over1M;
}

std::string Cell::verdict() const {
  if (methods.empty()) return unverified_records ? "no verified data" : "no data";
  if (methods.size() == 1) return "only " + visible(methods.front()) + " measured";
  return clear ? visible(best) : "no clear winner";
}

std::string Cell::summary() const {
  std::string left = left_out_text(*this);
  if (methods.empty()) return unverified_records ? "no verified data: " + left : "no data";
  // Every verdict says of how many methods it is, and which usual ones did not run.
  std::string of = "; of " + std::to_string(methods.size()) + (methods.size() == 1 ? " method" : " methods");
  if (!absent_methods.empty()) {
    of += " (not measured: ";
    for (std::size_t i = 0; i < absent_methods.size(); ++i) of += (i ? ", " : "") + absent_methods[i];
    of += ")";
  }
  auto with_left = [&](std::string s) { return (left.empty() ? s : s + "; " + left) + of; };
  if (methods.size() == 1)
    return with_left("only " + visible(methods.front()) + " measured (" + std::to_string(block_sizes.size()) +
                     (block_sizes.size() == 1 ? " size)" : " sizes)"));
  if (best.empty() && left_out_records > 0) return "no figures without warnings: " + left + of;
  if (runner_up.empty() && left_out_records > 0)
    return "no clear winner: only " + visible(best) + " has figures without warnings; " + left + of;
  if (runner_up.empty()) return with_left("no clear winner (methods never measured side by side)");
  std::string ratio = sig(margin, 3) + "x";
  std::string where = shared == 1 ? "" : " at " + std::to_string(shared) + " conditions";
  std::string worst = "one repetition: noise unknown";
  if (noise_known) {
    worst = "at worst " + sig(worst_ratio, 3) + "x";
    if (worst_against != runner_up) worst += " vs " + visible(worst_against);
    if (block_sizes.size() > 1 && !clear) worst += " at " + bytes_text(worst_block);
    if (!clear && worst_ratio > 1 && absent == 0 && unresolved == 0)
      worst += "; a lead within " + format_percent(harness::thresholds::kTieRatio - 1) + " is a tie";
  }
  if (absent > 0) worst += "; " + visible(best) + " not measured at " + std::to_string(absent) + " of " + std::to_string(contested) + " conditions";
  if (unresolved > 0)
    worst += "; " + visible(unresolved_by) + " at " + bytes_text(unresolved_block) +
             " has warnings and is not clearly behind" + (unresolved > 1 ? " (and " + std::to_string(unresolved - 1) + " more)" : "");
  if (clear) return with_left(visible(best) + ": " + ratio + " over " + visible(runner_up) + where + " (" + worst + ")");
  if (!ahead_of_all)
    return with_left("no clear winner: each method is behind another somewhere (" + visible(best) + " leads overall; " +
                     visible(runner_up) + " is " + sig(1 / margin, 3) + "x faster where they met)");
  return with_left("no clear winner: " + visible(best) + " " + ratio + " vs " + visible(runner_up) + where + " (" + worst + ")");
}

const Cell* DecisionTable::find(std::string_view op, Band band, std::string_view flush, std::string_view cache) const {
  for (const auto& c : cells)
    if (c.op == op && c.band == band && c.flush == flush && c.cache == cache) return &c;
  return nullptr;
}

DecisionTable decide(std::span<const harness::Result> results) {
  DecisionTable t;
  for (const char* op : {"read", "write"})
    for (Band band : kBands)
      for (const char* flush : kFlushes) {
        if (std::string_view(op) == "read" && std::string_view(flush) != "none") continue;
        for (const char* cache : kCaches) {
          Cell c;
          c.op = op;
          c.band = band;
          c.flush = flush;
          c.cache = cache;
          t.cells.push_back(std::move(c));
        }
      }
  for (auto& cell : t.cells) {
    std::vector<const harness::Result*> in;
    for (const auto& r : results) {
      if (!measured(r) || r.threads != 1 || harness::to_string(r.op) != cell.op || r.bytes == 0) continue;
      if (band_of(r.block_size) != cell.band || table_cache(r) != cell.cache) continue;
      if (cell.op == "write" && sync_class(r) != cell.flush) continue;
      // Data that did not verify is no evidence for anyone (issue 29 item 11).
      if (!r.verified) {
        ++cell.unverified_records;
        continue;
      }
      in.push_back(&r);
    }
    fill(cell, in);
    std::set<std::string> ran;
    for (const auto* r : in) ran.insert(r->method);
    if (!in.empty())
      for (const auto& m : usual_methods(cell))
        if (!ran.count(m)) cell.absent_methods.push_back(m);
  }
  return t;
}

namespace {
// Writes go to fresh files: their second column is empty unless someone measured cold writes.
std::string cold_text(const Cell& warm, const Cell* cold) {
  if (cold && !cold->methods.empty()) return cold->summary();
  return warm.op == "write" ? "-" : "no data";
}
}  // namespace

std::string format_text(const DecisionTable& t) {
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"OP", "PACKET", "FLUSH", "READS WARM / WRITES", "READS COLD OR O_DIRECT / WRITES O_DIRECT"});
  for (const auto& c : t.cells) {
    if (c.cache != "warm") continue;
    const Cell* cold = t.find(c.op, c.band, c.flush, "cold");
    rows.push_back({c.op, std::string(to_string(c.band)), c.op == "read" ? "-" : c.flush, c.summary(),
                    cold_text(c, cold)});
  }
  using Align = TextTable::Align;
  TextTable table({Align::Left, Align::Left, Align::Left, Align::Left, Align::Left});
  for (auto& r : rows) table.add({r.begin(), r.end()});
  std::string out = table.render();
  out += fmt::format(
      "\nmargin: best's median rate / runner-up's (its closest competitor), geometric mean over the conditions (suite, "
      "pattern, size, file, flush) where both ran.\n"
      "at worst: best's slowest repetition / the fastest repetition of any other method at the same condition, at the "
      "least favourable one.\n"
      "clear: best ran at every condition where methods met, and at each its slowest repetition beat every other "
      "method's fastest, with medians more than {} apart.\n"
      "Records with warnings (too short, outliers, not warm, not cold) are left out. reads warm: the file was resident; "
      "reads cold: evicted first, or O_DIRECT. writes: to a fresh file, through the page cache (first column) or "
      "O_DIRECT (second column: the bytes are on the device); flush \"end\": one flush after the last write.\n",
      format_percent(harness::thresholds::kTieRatio - 1));
  return out;
}

std::string format_markdown(const DecisionTable& t) {
  auto cell = markdown_cell;
  std::string out = "| op | packet | flush | reads warm / writes | reads cold or O_DIRECT / writes O_DIRECT |\n|---|---|---|---|---|\n";
  for (const auto& c : t.cells) {
    if (c.cache != "warm") continue;
    const Cell* cold = t.find(c.op, c.band, c.flush, "cold");
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c.op, to_string(c.band), c.op == "read" ? "-" : c.flush,
                       cell(c.summary()), cell(cold_text(c, cold)));
  }
  return out;
}

nlohmann::json to_json(const DecisionTable& t) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : t.cells) {
    cells.push_back({{"op", c.op},
                     {"band", to_string(c.band)},
                     {"flush", c.op == "read" ? nlohmann::json(nullptr) : nlohmann::json(c.flush)},
                     {"cache", c.cache},
                     {"verdict", c.verdict()},
                     {"best", c.best.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.best)},
                     {"runner_up", c.runner_up.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.runner_up)},
                     {"margin", c.shared ? nlohmann::json(c.margin) : nlohmann::json(nullptr)},
                     {"clear", c.clear},
                     {"ahead_of_all", c.ahead_of_all},
                     {"shared_conditions", c.shared},
                     {"contested_conditions", c.contested},
                     {"won_conditions", c.won},
                     {"best_absent_conditions", c.absent},
                     {"worst_ratio", c.contested && c.noise_known ? nlohmann::json(c.worst_ratio) : nlohmann::json(nullptr)},
                     {"worst_against", c.contested && c.noise_known ? nlohmann::json(c.worst_against) : nlohmann::json(nullptr)},
                     {"left_out", c.left_out},
                     {"unresolved", c.unresolved},
                     {"unverified", c.unverified_records},
                     {"methods", c.methods},
                     {"absent_methods", c.absent_methods},
                     {"block_sizes", c.block_sizes},
                     {"summary", c.summary()}});
  }
  return {{"format", "iolab-decision-table"}, {"format_version", 2}, {"cells", cells}};
}

}  // namespace iolab::report
