// The decision as text (decision_text.h).
#include "iolab/report/decision_text.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

using decision::ConditionVerdict;
using decision::Decision;
using decision::Stop;

std::string row_label(const decision::Row& r) {
  return fmt::format("{} {} {}", harness::to_string(r.op), r.op == harness::Op::Read ? "-" : r.flush,
                     decision::to_string(r.column));
}

// The map's cell: the pick, "~" when others stood within the zone, "!" when
// the budget ended it; "." when not measured.
std::string cell_text(const ConditionVerdict& c) {
  if (!c.measured() || !c.pick) return ".";
  std::string s = short_label(visible(c.candidates[*c.pick].label));
  if (c.within.size() > 1) s += "~";
  if (c.stop == Stop::Budget) s += "!";
  return s;
}

std::string interval_text(const harness::RatioInterval& r) {
  if (!r.available) return fmt::format("{}x (no interval at {} rounds)", sig(r.estimate, 3), r.n_a);
  return fmt::format("{}x ({}..{}, {:.1f}% interval, {} rounds)", sig(r.estimate, 3), sig(r.lo, 3), sig(r.hi, 3),
                     100 * r.coverage, r.n_a);
}

std::string counters_text(const decision::CandidateVerdict& c) {
  std::string s = visible(c.label);
  if (c.calls_per_mib < 0) return s;
  s += fmt::format(": {} calls/MiB, {} minor faults/MiB, {} ms kernel CPU/MiB", sig(c.calls_per_mib, 3),
                   sig(c.minor_faults_per_mib, 3), sig(c.kernel_ms_per_mib, 3));
  if (c.flushes_per_pass >= 0) s += fmt::format(", {} flushes per pass", sig(c.flushes_per_pass, 3));
  if (c.major_faults_per_mib >= 0) s += fmt::format(", {} major faults/MiB", sig(c.major_faults_per_mib, 3));
  if (c.device_bytes_per_byte >= 0) s += fmt::format(", {} device bytes read per byte", sig(c.device_bytes_per_byte, 3));
  return s;
}

std::string names(const ConditionVerdict& c, const std::vector<std::size_t>& which) {
  std::string s;
  for (std::size_t i : which) s += (s.empty() ? "" : ", ") + visible(c.candidates[i].label);
  return s;
}

// One condition's line of why.
std::string explain_line(const ConditionVerdict& c) {
  std::string s = fmt::format("{} at {}: ", row_label(c.condition.row), exact_size(c.condition.size));
  if (!c.measured()) return s + std::string(decision::to_string(c.stop)) + (c.why.empty() ? "" : ": " + visible(c.why));
  if (!c.pick) return s + "no pick";
  s += visible(c.candidates[*c.pick].label);
  if (c.within.size() > 1)
    s += fmt::format(" (within {:.2f}x of it, not told apart: {})", c.indifference,
                     names(c, std::vector<std::size_t>(c.within.begin() + 1, c.within.end())));
  if (c.runner_up)
    s += fmt::format("; over {} {} (within this run)", visible(c.candidates[*c.runner_up].label),
                     interval_text(c.candidates[*c.runner_up].pick_over));
  s += fmt::format("; {} after {} rounds of {} candidates at indifference {:.2f}x", c.stop == Stop::Budget ? "budget" : c.within_zone ? "selected, within the zone" : "selected", c.rounds,
                   c.candidates.size(), c.indifference);
  if (c.left_out) s += fmt::format(", {} left out", c.left_out);
  if (!c.replay_agrees) s += " (replayed from the records, the selection ends differently than the run recorded)";
  s += "\n      why: " + counters_text(c.candidates[*c.pick]);
  if (c.runner_up) s += "; " + counters_text(c.candidates[*c.runner_up]);
  for (const auto& cand : c.candidates) {
    if (!cand.skipped.empty()) s += fmt::format("\n      {}: skipped: {}", visible(cand.label), visible(cand.skipped));
    if (!cand.withdrawn.empty()) s += fmt::format("\n      {}: withdrawn {}", visible(cand.label), visible(cand.withdrawn));
  }
  return s;
}

std::string safe_text(const decision::SafeChoice& s) {
  if (s.worst_ratio <= 1.0) return fmt::format("{}, the pick at every size", visible(s.method));
  return fmt::format("{}, never more than {}x behind the pick (at {})", visible(s.method), sig(s.worst_ratio, 3),
                     exact_size(s.worst_at));
}

}  // namespace

std::string short_label(const std::string& label) {
  // Longest words first; built anew rather than replaced in place (GCC 12 misreads replace's overlap).
  static constexpr std::pair<std::string_view, std::string_view> kShort[] = {
      {"io_uring", "uring"}, {" MADV_RANDOM", "/rnd"}, {" O_DIRECT", "/D"}, {" QD", "@"}};
  std::string out;
  for (std::size_t i = 0; i < label.size();) {
    bool swapped = false;
    for (const auto& [from, to] : kShort)
      if (std::string_view(label).substr(i).starts_with(from)) {
        out += to;
        i += from.size();
        swapped = true;
        break;
      }
    if (!swapped) out += label[i++];
  }
  return out;
}

std::string procedure_text(const Decision& d) {
  double indifference = 1.05, confidence = 0.95, widest = 0;
  unsigned n0 = decision::kFirstStage;
  for (const auto& c : d.conditions)
    if (c.measured()) indifference = std::min(indifference, c.indifference), confidence = c.confidence, n0 = c.first_stage,
                      widest = std::max(widest, c.indifference);
  std::string s = fmt::format(
      "Each condition: every candidate in interleaved rounds (one repetition each per round, the repetitions "
      "alternating a few passes at a time in a fresh seeded order), judged after every round by Kim & Nelson's fully "
      "sequential selection (KN, 2001) on log rates: after {} rounds a candidate is out once its mean falls behind "
      "another's by more than the pair's continuation width; the pick is the last one left, or the best of the "
      "survivors once every pair of them is within half the indifference of each other (\"~\"). Guarantee asked: "
      "with probability {:.0f}% the pick is within {:.2f}x of the best",
      n0, 100 * confidence, indifference);
  if (widest > indifference + 1e-9)
    s += fmt::format(" (some conditions at up to {:.2f}x, where the budget could not pay for the rounds their row needed: "
                     "each says so)",
                     widest);
  s += "; simulated over 2,000 conditions per configuration, the wrong picks stay under that (docs/report.md).\n";
  return s;
}

std::string format_text(const Decision& d, bool explain) {
  // Every size of the run, ascending.
  std::set<std::uint64_t> all;
  for (const auto& c : d.conditions) all.insert(c.condition.size);
  const std::vector<std::uint64_t> sizes(all.begin(), all.end());
  TextTable table({TextTable::Align::Left});
  std::vector<std::string> head{"ROW"};
  for (auto s : sizes) head.push_back(exact_size(s));
  table.add(head);
  std::map<std::string, std::string> legend;
  std::size_t measured = 0, selected = 0, within = 0, budget = 0;
  std::string unmeasured;
  for (const auto& row : d.rows) {
    std::vector<std::string> cells{row_label(row.row)};
    for (auto size : sizes) {
      auto it = std::find_if(row.conditions.begin(), row.conditions.end(),
                             [&](std::size_t ci) { return d.conditions[ci].condition.size == size; });
      if (it == row.conditions.end()) {
        cells.push_back("");
        continue;
      }
      const ConditionVerdict& c = d.conditions[*it];
      cells.push_back(cell_text(c));
      if (c.measured()) {
        ++measured;
        selected += c.stop == Stop::Selected;
        within += c.within.size() > 1;
        budget += c.stop == Stop::Budget;
        if (c.pick) {
          const std::string& l = c.candidates[*c.pick].label;
          if (short_label(l) != l) legend[short_label(visible(l))] = visible(l);
        }
      } else {
        unmeasured += fmt::format("  {} at {}: {}: {}\n", row_label(row.row), exact_size(c.condition.size),
                                  decision::to_string(c.stop), visible(c.why));
      }
    }
    table.add(cells);
  }
  std::string out = table.render();
  out += "\n~ other methods within the zone (the rounds could not tell them apart from the pick); ! the budget ended "
         "it (the best so far); . not measured here (below)\n";
  std::string keys;
  for (const auto& [k, v] : legend) keys += fmt::format("{}{} = {}", keys.empty() ? "" : ", ", k, v);
  if (!keys.empty()) out += keys + "\n";
  out += fmt::format("\n{} measured conditions: {} ended by the rule ({} with a set within the zone), {} by the budget.\n",
                     measured, selected, within, budget);
  if (d.unverified) out += fmt::format("{} records left out as unverified.\n", d.unverified);
  std::string safes;
  for (const auto& row : d.rows) {
    if (!row.safe) continue;
    safes += fmt::format("  {}: {}\n", row_label(row.row), safe_text(*row.safe));
    for (const auto& [band, s] : row.bands)
      if (s.method != row.safe->method || s.worst_ratio < row.safe->worst_ratio - 1e-9)
        safes += fmt::format("      {}: {}\n", band, safe_text(s));
  }
  if (!safes.empty())
    out += "\nSafe choice per row (the method whose worst ratio to the per-size pick is smallest), and per band where "
           "it differs:\n" + safes;
  if (explain) {
    out += "\nWhy, per condition (the pick's counters per MiB moved, and the best method the rule ruled out):\n";
    for (const auto& c : d.conditions)
      if (c.measured()) out += "  " + explain_line(c) + "\n";
  }
  if (!unmeasured.empty()) out += "\nNot measured here:\n" + unmeasured;
  out += "\n" + procedure_text(d);
  return out;
}

std::string format_text(const std::vector<decision::SeedRuleRow>& rules) {
  std::string s, elsewhere;
  std::size_t absent = 0;
  for (const auto& r : rules) {
    if (r.row.empty()) {
      elsewhere += fmt::format("{}{} ({}: {})", elsewhere.empty() ? "" : "; ", r.seed, r.says, r.machine);
      continue;
    }
    if (r.agrees == "not in this table") {
      ++absent;
      continue;
    }
    s += fmt::format("  {} {} [{}]\n      {} {}: {} -> {}\n", r.seed, r.says, r.expects, r.row, r.sizes, visible(r.machine),
                     r.agrees);
  }
  std::string out = "\nThe seeds' rules beside this machine's picks, size by size:\n" + s;
  if (absent) out += fmt::format("  ({} more ask about conditions this run did not measure)\n", absent);
  if (!elsewhere.empty()) out += "  Not in this decision: " + elsewhere + "\n";
  return out;
}

std::string format_markdown(const Decision& d) {
  std::set<std::uint64_t> all;
  for (const auto& c : d.conditions) all.insert(c.condition.size);
  std::vector<std::string> header{"row"};
  for (auto s : all) header.push_back(exact_size(s));
  MarkdownTable table(header);
  for (const auto& row : d.rows) {
    std::vector<std::string> cells{row_label(row.row)};
    for (auto size : all) {
      auto it = std::find_if(row.conditions.begin(), row.conditions.end(),
                             [&](std::size_t ci) { return d.conditions[ci].condition.size == size; });
      cells.push_back(it == row.conditions.end() ? std::string() : cell_text(d.conditions[*it]));
    }
    table.add(cells);
  }
  return table.render();
}


namespace {

// Workload `w`'s record of candidate `i`, or nullptr.
const harness::Result* record_of(const ConditionVerdict& w, std::span<const harness::Result> records, std::size_t i) {
  namespace k = decision::keys;
  for (const auto& r : records) {
    auto name = r.extra.find(k::kWorkload);
    auto index = r.extra.find(k::kIndex);
    if (name != r.extra.end() && name->is_string() && *name == w.workload && index != r.extra.end() &&
        index->is_number() && index->get<double>() == static_cast<double>(i))
      return &r;
  }
  return nullptr;
}

// The per-method figures a workload's verdict shows, from its verdict and record.
struct MethodFigures {
  double ops_per_s = 0, bytes_per_s = 0;
  double cpu_us_per_op = -1, device_bytes_per_op = -1;
  nlohmann::json latency_by_kind = nlohmann::json::object();  // kind -> {p50_ns, p99_ns, samples}
};

MethodFigures figures_of(const decision::CandidateVerdict& c, const harness::Result* r, bool counts_bytes) {
  MethodFigures f;
  if (!r || c.rounds == 0) return f;
  // Every method's pass does the same operations and moves the same bytes (verified), so one rate gives the other.
  const double ops = static_cast<double>(r->ops), bytes = static_cast<double>(r->bytes);
  f.ops_per_s = counts_bytes ? (bytes > 0 ? c.rate * ops / bytes : 0) : c.rate;
  f.bytes_per_s = counts_bytes ? c.rate : 0;
  if (ops > 0) {
    f.cpu_us_per_op = 1e6 * (r->user_s + r->sys_s) / ops;
    if (r->device_read_bytes || r->device_write_bytes)
      f.device_bytes_per_op =
          static_cast<double>(r->device_read_bytes.value_or(0) + r->device_write_bytes.value_or(0)) / ops;
  }
  if (auto l = r->extra.find("latency_by_kind"); l != r->extra.end() && l->is_object()) f.latency_by_kind = *l;
  return f;
}

std::string stop_words(const ConditionVerdict& w) {
  if (w.stop == Stop::Budget) return fmt::format("stopped by the budget ({})", visible(w.why));
  if (w.stop == Stop::Selected)
    return w.within_zone ? "selected: the survivors are within the zone of each other" : "selected: one survivor";
  return std::string(decision::to_string(w.stop)) + (w.why.empty() ? "" : ": " + visible(w.why));
}

}  // namespace

std::string format_workload_text(const ConditionVerdict& w, std::span<const harness::Result> records) {
  std::string out = fmt::format("trace {}: ", visible(w.workload));
  if (w.pick) {
    out += fmt::format("use {}", visible(w.candidates[*w.pick].label));
    if (w.within.size() > 1)
      out += fmt::format(" (or {}: within {:.2f}x of it, not told apart)",
                         names(w, std::vector<std::size_t>(w.within.begin() + 1, w.within.end())), w.indifference);
  } else {
    out += "no pick";
  }
  out += fmt::format("\n  {} after {} rounds of {} methods; guarantee asked: with probability {:.0f}% the pick is "
                     "within {:.2f}x of the best method for this trace{}\n",
                     stop_words(w), w.rounds, w.candidates.size(), 100 * w.confidence, w.indifference,
                     w.replay_agrees ? "" : " (replayed from the records, the selection ends differently than the run recorded)");
  // The operation kinds any method timed, in a fixed order; opens, closes and
  // mappings (nothing, or a flush, in a replay) are in the JSON only.
  std::vector<std::string> kinds;
  for (std::size_t i = 0; i < w.candidates.size(); ++i)
    if (const harness::Result* r = record_of(w, records, i))
      if (auto l = r->extra.find("latency_by_kind"); l != r->extra.end() && l->is_object())
        for (const auto& [kind, _] : l->items())
          if (kind != "open" && kind != "close" && kind != "map" && kind != "unmap" &&
              std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            kinds.push_back(kind);
  std::sort(kinds.begin(), kinds.end());
  TextTable t;
  std::vector<std::string> head = {"method", "ops/s", "MiB/s", "pick over it"};
  for (const auto& k : kinds) head.push_back(visible(k) + " p50/p99");
  head.insert(head.end(), {"CPU/op", "device B/op", "verified"});
  t.add(head);
  for (std::size_t i = 0; i < w.candidates.size(); ++i) {
    const auto& c = w.candidates[i];
    const harness::Result* r = record_of(w, records, i);
    if (!c.skipped.empty()) {
      t.add({visible(c.label), "skipped: " + visible(c.skipped)}, false);
      continue;
    }
    const MethodFigures f = figures_of(c, r, w.counts_bytes);
    std::vector<std::string> row = {visible(c.label) + (w.pick == i ? " *" : ""),
                                    c.rounds ? sig(f.ops_per_s, 3) : "-",
                                    f.bytes_per_s > 0 ? sig(f.bytes_per_s / (1024.0 * 1024.0), 3) : "-",
                                    c.pick_over.n_a > 0 ? interval_text(c.pick_over) : (w.pick == i ? "the pick" : "-")};
    for (const auto& k : kinds) {
      auto l = f.latency_by_kind.find(k);
      row.push_back(l == f.latency_by_kind.end() ? "-"
                                                 : duration_text(l->value("p50_ns", 0.0) / 1e9) + " / " +
                                                       duration_text(l->value("p99_ns", 0.0) / 1e9));
    }
    row.push_back(f.cpu_us_per_op >= 0 ? sig(f.cpu_us_per_op, 3) + " µs" : "-");
    row.push_back(f.device_bytes_per_op >= 0 ? sig(f.device_bytes_per_op, 3) : "-");
    row.push_back(r && r->verified ? "yes" : "no");
    t.add(row);
    if (!c.withdrawn.empty()) t.add({"", "withdrawn " + visible(c.withdrawn)}, false);
    else if (c.eliminated)
      t.add({"", fmt::format("out after {} rounds, behind {}", c.eliminated->after_rounds,
                             visible(w.candidates[c.eliminated->by].label))},
            false);
  }
  out += t.render();
  out += "  * the pick. ops/s: the whole trace replayed as fast as it goes (geometric mean over rounds); latency from "
         "a separate pass timing each operation; CPU: user + system of a repetition per operation.\n";
  return out;
}

nlohmann::json workload_json(const ConditionVerdict& w, std::span<const harness::Result> records) {
  auto label = [&](std::optional<std::size_t> i) { return i ? nlohmann::json(w.candidates[*i].label) : nlohmann::json(nullptr); };
  nlohmann::json within = nlohmann::json::array(), methods = nlohmann::json::array();
  for (auto i : w.within) within.push_back(w.candidates[i].label);
  std::uint64_t ops = 0;
  for (std::size_t i = 0; i < w.candidates.size(); ++i) {
    const auto& c = w.candidates[i];
    const harness::Result* r = record_of(w, records, i);
    nlohmann::json j = {{"method", c.label}};
    if (!c.skipped.empty()) {
      j["skipped"] = c.skipped;
      methods.push_back(std::move(j));
      continue;
    }
    if (r) ops = std::max(ops, r->ops);
    const MethodFigures f = figures_of(c, r, w.counts_bytes);
    j["verified"] = r && r->verified;
    j["rounds"] = c.rounds;
    if (c.rounds > 0) {
      j["ops_per_s"] = f.ops_per_s;
      if (f.bytes_per_s > 0) j["bytes_per_s"] = f.bytes_per_s;
    }
    if (!c.withdrawn.empty()) j["withdrawn"] = c.withdrawn;
    if (c.eliminated)
      j["eliminated"] = {{"after_rounds", c.eliminated->after_rounds}, {"by", w.candidates[c.eliminated->by].label}};
    if (c.pick_over.n_a > 0)
      j["pick_over_it"] = {{"estimate", c.pick_over.estimate}, {"lo", c.pick_over.lo}, {"hi", c.pick_over.hi},
                           {"coverage", c.pick_over.coverage}, {"rounds", c.pick_over.n_a}};
    if (f.cpu_us_per_op >= 0) j["cpu_us_per_op"] = f.cpu_us_per_op;
    if (f.device_bytes_per_op >= 0) j["device_bytes_per_op"] = f.device_bytes_per_op;
    if (!f.latency_by_kind.empty()) j["latency_by_kind"] = f.latency_by_kind;
    methods.push_back(std::move(j));
  }
  return {{"format", "iolab-trace-decision"},
          {"format_version", 1},
          {"trace", w.workload},
          {"ops", ops},
          {"pick", label(w.pick)},
          {"within", within},
          {"stop", decision::to_string(w.stop)},
          {"within_zone", w.within_zone},
          {"why", w.why},
          {"rounds", w.rounds},
          {"indifference", w.indifference},
          {"confidence", w.confidence},
          {"first_stage", w.first_stage},
          {"replay_agrees", w.replay_agrees},
          {"methods", methods}};
}

}  // namespace iolab::report
