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

// The map's cell: the pick, "~" when others stood within the zone, "!" when
// the budget ended it; "." when not measured.
std::string cell_text(const ConditionVerdict& c) {
  if (!c.measured() || !c.pick) return ".";
  std::string s = short_label(visible(c.candidates[*c.pick].label));
  if (c.within.size() > 1) s += "~";
  if (c.stop == Stop::Budget) s += "!";
  return s;
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

// The model's prediction at a size of a row, if it made one.
const PredictedCondition* predicted_at(const DecisionPredictions* p, const decision::Row& row, std::uint64_t size) {
  if (!p) return nullptr;
  for (const auto& x : p->predicted)
    if (x.condition.row == row && x.condition.size == size) return &x;
  return nullptr;
}

}  // namespace

std::string row_label(const decision::Row& r) {
  return fmt::format("{} {} {}", results::to_string(r.op), r.op == results::Op::Read ? "-" : r.flush,
                     decision::to_string(r.column));
}

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
      "another's by more than the pair's continuation width (from the variance of the pair's differences over every "
      "round so far, as in KN++); the pick is the last one left, or the best of the "
      "survivors once every pair of them is within the indifference of each other (\"~\"). Guarantee asked: "
      "with probability {:.0f}% the pick is within {:.2f}x of the best",
      n0, 100 * confidence, indifference);
  if (widest > indifference + 1e-9)
    s += fmt::format(" (some conditions at up to {:.2f}x, where their first stage showed the budget could not pay for "
                     "the rounds: each says so)",
                     widest);
  s += "; simulated over 2,000 conditions per configuration, the wrong picks stay under that (docs/report.md).\n";
  return s;
}

std::string format_text(const Decision& d, bool explain, const DecisionPredictions* predicted) {
  // Every size of the run, ascending, with the sizes the model predicts.
  std::set<std::uint64_t> all;
  for (const auto& c : d.conditions) all.insert(c.condition.size);
  if (predicted)
    for (const auto& p : predicted->predicted) all.insert(p.condition.size);
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
        const PredictedCondition* p = predicted_at(predicted, row.row, size);
        cells.push_back(p ? predicted_cell_text(*p) : "");
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
  if (predicted && !predicted->predicted.empty()) out += std::string(kPredictedLegend) + "\n";
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
    if (predicted) out += prediction_explain_text(d, *predicted);
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


}  // namespace iolab::report
