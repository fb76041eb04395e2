#include "iolab/report/recommend.h"
#include "iolab/io/registry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common.h"
#include "iolab/units.h"

namespace iolab::report {

namespace {

constexpr Band kBands[] = {Band::Under64, Band::To4K, Band::To1M, Band::Over1M};
constexpr const char* kFlushes[] = {"none", "every-16k", "async-16k", "every"};
constexpr const char* kCaches[] = {"warm", "cold"};

// The flush policy of a write as the table names it. A single flush at the
// end counts as "none": the data is not flushed while being written.
std::string table_flush(const harness::Result& r) {
  std::string c = sync_class(r);
  return c == "end" ? "none" : c;
}

// The table's cache column. Writes go to a fresh file (the runner records no
// cache state for buffered ones): buffered and O_DIRECT writes compete in the
// first column, which for writes means "a fresh file".
std::string table_cache(const harness::Result& r) {
  if (r.op == harness::Op::Write && (!r.cache || r.cache == harness::CacheState::Direct)) return "warm";
  return cache_class(r);
}

// What must be equal for two methods' figures to be compared directly.
using Condition = std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::string>;
Condition condition_of(const harness::Result& r) {
  // A flush at the end and no flush at all are different work: keep them apart.
  return {r.suite, harness::pattern_name(r), r.block_size, r.file_size, sync_class(r)};
}

double speed(const harness::Result& r) { return rate(r).median; }

void fill(Cell& cell, const std::vector<const harness::Result*>& records) {
  // A method's buffer is named only when the cell has it with several.
  std::map<std::string, std::set<std::string>> buffers_of;
  for (const auto* r : records) buffers_of[r->method].insert(harness::buffer_name(*r));
  auto label = [&](const harness::Result& r) { return buffers_of[r.method].size() > 1 ? method_label(r) : r.method; };
  // condition -> method -> record (the first one seen).
  std::map<Condition, std::map<std::string, const harness::Result*>> by_condition;
  for (const auto* r : records) {
    std::string m = label(*r);
    by_condition[condition_of(*r)].emplace(m, r);
    if (std::find(cell.methods.begin(), cell.methods.end(), m) == cell.methods.end()) cell.methods.push_back(m);
    if (std::find(cell.block_sizes.begin(), cell.block_sizes.end(), r->block_size) == cell.block_sizes.end())
      cell.block_sizes.push_back(r->block_size);
  }
  std::sort(cell.methods.begin(), cell.methods.end());
  std::sort(cell.block_sizes.begin(), cell.block_sizes.end());
  if (cell.methods.size() == 1) {
    cell.best = cell.methods.front();
    return;
  }
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
      s.first += std::log(std::max(speed(*r), 1e-300) / top);
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
          p.first += std::log(std::max(speed(*ra), 1e-300) / std::max(speed(*rb), 1e-300));
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
  // The best is ahead of every method it met; with none such, the best score
  // leads and the cell has no clear winner.
  cell.best = ranked[0].first;
  for (const auto& [m, score] : ranked)
    if (ahead_of_all(m)) {
      cell.best = m;
      cell.ahead_of_all = true;
      break;
    }
  // The runner-up is the closest competitor the best met.
  double closest = 0;
  for (const auto& [o, p] : pair[cell.best]) {
    double r = head_to_head(cell.best, o);
    if (cell.runner_up.empty() || r < closest) cell.runner_up = o, closest = r;
  }

  double log_sum = 0, rel_var = 0;
  bool reps_enough = true;
  for (const auto& [cond, methods] : by_condition) {
    auto b = methods.find(cell.best), r = methods.find(cell.runner_up);
    if (b == methods.end() || r == methods.end()) continue;
    Speedup s = speedup(*b->second, *r->second);
    ++cell.shared;
    reps_enough &= s.noise_known;
    // The least favourable pairing of repetitions: best's slowest vs runner-up's fastest.
    double worst = rate(*b->second).slowest / std::max(rate(*r->second).fastest, 1e-300);
    cell.worst_ratio = cell.shared == 1 ? worst : std::min(cell.worst_ratio, worst);
    if (s.noise_known && worst > 1) ++cell.shared_beyond_noise;
    // Medians for the margin (as for the ranking); the noise from the spread.
    log_sum += std::log(std::max(speed(*b->second), 1e-300) / std::max(speed(*r->second), 1e-300));
    rel_var += s.ratio > 0 ? (s.stddev / s.ratio) * (s.stddev / s.ratio) : 0;
  }
  if (cell.shared == 0) return;
  double k = static_cast<double>(cell.shared);
  cell.margin = std::exp(log_sum / k);
  cell.margin_stddev = cell.margin * std::sqrt(rel_var) / k;
  cell.noise_known = reps_enough;
  cell.clear = cell.ahead_of_all && reps_enough && cell.shared_beyond_noise == cell.shared;
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
  if (methods.empty()) return "no data";
  if (methods.size() == 1) return "only " + methods.front() + " measured";
  if (runner_up.empty() || shared == 0) return "no clear winner";
  return clear ? best : "no clear winner";
}

std::string Cell::summary() const {
  if (methods.empty()) return "no data";
  if (methods.size() == 1) return "only " + methods.front() + " measured (" + std::to_string(block_sizes.size()) +
                                  (block_sizes.size() == 1 ? " size)" : " sizes)");
  if (runner_up.empty() || shared == 0) return "no clear winner (methods never measured side by side)";
  std::string ratio = sig(margin, 3) + "x";
  std::string where = shared == 1 ? "" : " at " + std::to_string(shared) + " conditions";
  std::string worst = noise_known ? "at worst " + sig(worst_ratio, 3) + "x" : "one repetition: noise unknown";
  if (clear) return best + ": " + ratio + " over " + runner_up + where + " (" + worst + ")";
  if (!ahead_of_all)
    return "no clear winner: each method is behind another somewhere (" + best + " leads overall; " + runner_up + " is " +
           sig(1 / margin, 3) + "x faster where they met)";
  return "no clear winner: " + best + " " + ratio + " vs " + runner_up + where + " (" + worst + ")";
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
      if (cell.op == "write" && table_flush(r) != cell.flush) continue;
      in.push_back(&r);
    }
    fill(cell, in);
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
  rows.push_back({"OP", "PACKET", "FLUSH", "READS WARM / WRITES", "READS COLD OR O_DIRECT"});
  for (const auto& c : t.cells) {
    if (c.cache != "warm") continue;
    const Cell* cold = t.find(c.op, c.band, c.flush, "cold");
    rows.push_back({c.op, std::string(to_string(c.band)), c.op == "read" ? "-" : c.flush, c.summary(),
                    cold_text(c, cold)});
  }
  std::array<std::size_t, 4> w{};
  for (const auto& r : rows)
    for (std::size_t i = 0; i < 4; ++i) w[i] = std::max(w[i], r[i].size() - (r[i].find("±") != std::string::npos));
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < 4; ++i) {
      // "±" is two bytes, one column.
      std::size_t cols = r[i].size() - (r[i].find("±") != std::string::npos);
      line += r[i] + std::string(w[i] - cols + 2, ' ');
    }
    out += line + r[4] + "\n";
  }
  out +=
      "\nmargin: best's median speed / runner-up's (its closest competitor), geometric mean over the conditions (size, "
      "file, pattern, suite) where both ran.\nat worst: best's slowest repetition / runner-up's fastest, at the least "
      "favourable condition; the winner is clear when that is above 1.\nreads warm: the file was resident; reads cold: evicted first, or "
      "O_DIRECT. writes: to a fresh file, buffered or O_DIRECT.\n";
  return out;
}

std::string format_markdown(const DecisionTable& t) {
  std::string out = "| op | packet | flush | reads warm / writes | reads cold or O_DIRECT |\n|---|---|---|---|---|\n";
  for (const auto& c : t.cells) {
    if (c.cache != "warm") continue;
    const Cell* cold = t.find(c.op, c.band, c.flush, "cold");
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c.op, to_string(c.band), c.op == "read" ? "-" : c.flush, c.summary(),
                       cold_text(c, cold));
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
                     {"margin_stddev", c.shared ? nlohmann::json(c.margin_stddev) : nlohmann::json(nullptr)},
                     {"clear", c.clear},
                     {"ahead_of_all", c.ahead_of_all},
                     {"shared_conditions", c.shared},
                     {"beyond_noise_conditions", c.shared_beyond_noise},
                     {"worst_ratio", c.shared && c.noise_known ? nlohmann::json(c.worst_ratio) : nlohmann::json(nullptr)},
                     {"methods", c.methods},
                     {"block_sizes", c.block_sizes},
                     {"summary", c.summary()}});
  }
  return {{"format", "iolab-decision-table"}, {"format_version", 1}, {"cells", cells}};
}

std::vector<harness::FileExperiment> table_experiments(std::uint64_t max_file, harness::Eviction eviction) {
  using harness::FileExperiment;
  std::vector<FileExperiment> out;
  // One packet size per band; file sizes keep the slowest case (32 B calls) short.
  struct Size {
    std::uint64_t block, file;
  };
  const Size sizes[] = {{32, 2u << 20}, {1024, 8u << 20}, {64u << 10, 32u << 20}, {1u << 20, 64u << 20}};
  auto base = [&](const Size& s, std::string method, harness::Op op) {
    FileExperiment e;
    e.suite = "recommend";
    e.method = std::move(method);
    e.op = op;
    e.block_size = s.block;
    e.file_size = std::max<std::uint64_t>(std::min(s.file, max_file) / s.block * s.block, s.block);
    e.eviction = eviction;
    return e;
  };
  for (const auto& s : sizes) {
    for (auto cache : {harness::CacheState::Warm, harness::CacheState::Cold}) {
      std::vector<std::string> methods = {"stdio", "syscall", "pread", "mmap", "io_uring"};
      if (cache == harness::CacheState::Cold && s.block >= 4096) methods.push_back("direct");  // O_DIRECT needs aligned sizes
      for (const auto& m : methods) {
        FileExperiment e = base(s, m, harness::Op::Read);
        e.experiment = "read " + size_label(s.block) + " " + std::string(harness::to_string(cache));
        // A method that bypasses the page cache is O_DIRECT's column (its buffer chosen aligned by the runner).
        e.cache = io::find_file_method(m).traits().bypasses_page_cache ? harness::CacheState::Direct : cache;
        out.push_back(std::move(e));
      }
    }
    for (const char* flush : kFlushes) {
      std::vector<std::string> methods = {"stdio", "syscall", "pread", "mmap"};
      if (s.block >= 4096) methods.push_back("direct");
      for (const auto& m : methods) {
        FileExperiment e = base(s, m, harness::Op::Write);
        if (io::find_file_method(m).traits().bypasses_page_cache) e.cache = harness::CacheState::Direct;
        e.experiment = "write " + size_label(s.block) + " flush " + flush;
        // The flush is each method's own data sync (MethodTraits::data_sync).
        if (std::string_view(flush) != "none") e.sync = harness::parse_sync_policy(flush);
        if (std::string_view(flush) == "every") {
          // A flush per call costs 0.1..5 ms: bound the calls, not the file.
          e.ops = std::clamp<std::uint64_t>(e.file_size / s.block, 1, std::clamp<std::uint64_t>(max_file >> 18, 4, 256));
          e.file_size = e.ops * s.block;
        }
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

}  // namespace iolab::report
