// The designed decision table from its records (decision_table.h).
#include "iolab/report/decision_table.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

std::string text_of(const nlohmann::json& extra, const char* key) {
  auto it = extra.find(key);
  return it != extra.end() && it->is_string() ? it->get<std::string>() : "";
}
double number_of(const nlohmann::json& extra, const char* key, double otherwise) {
  auto it = extra.find(key);
  return it != extra.end() && it->is_number() ? it->get<double>() : otherwise;
}

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = key.find('|', from)) != std::string::npos; from = at + 1) parts.push_back(key.substr(from, at - from));
  parts.push_back(key.substr(from));
  return parts;
}

// Whether a record's figure can stand in the comparison: its data verified,
// and it was taken in the state it is labelled with and long enough.
// Outliers are kept: the interval ranks the repetitions, so one far-off
// repetition moves it little (and dropping whole candidates for one would
// bias the table toward the quiet ones).
enum class Use { Keep, Unverified, Untrusted };
Use use_of(const harness::Result& r) {
  if (!r.verified) return Use::Unverified;
  for (const auto& k : distrust(r))
    if (k != harness::to_string(harness::WarningKind::Outliers)) return Use::Untrusted;
  return Use::Keep;
}

// One line from the counters: calls, faults and kernel CPU per MiB, and flushes.
std::string counters(const std::string& label, const harness::Result& r) {
  double mib = static_cast<double>(r.bytes) / (1024.0 * 1024.0);
  if (mib <= 0) return visible(label);
  std::string s = fmt::format("{}: {} calls/MiB, {} minor faults/MiB, {} ms kernel CPU/MiB", visible(label),
                              sig(static_cast<double>(r.io_calls) / mib, 3), sig(static_cast<double>(r.minor_faults) / mib, 3),
                              sig(1000 * r.sys_s / mib, 3));
  if (std::string f = flushes_text(r); !f.empty()) s += ", " + f;
  // Reads past memory (the larger-than-memory column's records carry these): faults that went to the
  // device, and what the device read per byte delivered (readahead that eviction wasted).
  if (r.extra.contains("major_faults_per_mib"))
    s += fmt::format(", {} major faults/MiB", sig(number_of(r.extra, "major_faults_per_mib", 0), 3));
  if (r.extra.contains("device_read_bytes_per_byte"))
    s += fmt::format(", {} bytes read from the device per byte", sig(number_of(r.extra, "device_read_bytes_per_byte", 0), 3));
  return s;
}

std::string list(const std::vector<std::string>& names, const std::vector<std::size_t>& which) {
  std::string s;
  for (std::size_t i : which) s += (s.empty() ? "" : ", ") + visible(names[i]);
  return s;
}

std::string sizes(const std::vector<std::uint64_t>& conditions) {
  std::string s;
  for (auto b : conditions) s += (s.empty() ? "" : ", ") + exact_size(b);
  return s;
}

std::string interval_text(const harness::RatioInterval& r) {
  if (!r.available) return "no interval";
  return fmt::format("{}x, {:.1f}% interval {}..{}", sig(r.estimate, 3), 100 * r.coverage, sig(r.lo, 3), sig(r.hi, 3));
}

}  // namespace

bool is_designed(std::span<const harness::Result> results) {
  return std::any_of(results.begin(), results.end(), [](const auto& r) { return !text_of(r.extra, "decision_cell").empty(); });
}

std::string DesignedCell::summary() const {
  if (!unmeasurable.empty()) return "not measured here: " + visible(unmeasurable);
  std::string of = fmt::format("of {} candidates at {}; {} rounds", candidates.size(), sizes(conditions), rounds);
  std::string left;
  if (unverified) left += fmt::format("; {} records left out as unverified", unverified);
  if (untrusted) {
    std::string kinds;
    for (const auto& [k, n] : untrusted_kinds) kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + k;
    left += fmt::format("; {} records left out for warnings ({})", untrusted, kinds);
  }
  if (!skipped.empty()) left += fmt::format("; {} skipped", skipped.size());
  const auto& v = verdict;
  std::string at = v.interval_condition < conditions.size() ? exact_size(conditions[v.interval_condition]) : "";
  switch (v.kind) {
    case harness::Verdict::Kind::Winner:
      return fmt::format("{}: over {} (closest) {} at {}; {}{}", visible(candidates[v.chosen[0]]),
                         visible(candidates[v.against]), interval_text(v.interval), at, of, left);
    case harness::Verdict::Kind::Tie:
      return fmt::format("tie: {} (widest pair {} at {}); {}{}", list(candidates, v.chosen), interval_text(v.interval),
                         at, of, left);
    case harness::Verdict::Kind::Undecided: break;
  }
  std::string why = stop == "budget"       ? "budget spent"
                    : stop == "max_rounds" ? "most rounds reached"
                    : stop == "settled"    ? "every size settled"
                    : stop == "sizes_differ" ? "its sizes' answers already differ"
                    : stop == "futile"     ? "stopped: its hardest pair would need more rounds than it could take"
                                           : stop;
  if (stop == "futile" && v.rounds_needed > rounds)
    why += std::isfinite(v.rounds_needed) ? fmt::format(", about {:.0f}", v.rounds_needed) : ", its ratio on the margin";
  return fmt::format("undecided after {} rounds ({}): {}; {}{}", rounds, why, visible(v.reason), of, left);
}

DesignedTable designed_table(std::span<const harness::Result> results) {
  DesignedTable t;
  std::map<std::string, std::size_t> index;
  // [cell][condition][candidate] -> record
  std::vector<std::map<std::size_t, std::map<std::size_t, const harness::Result*>>> recs;
  for (const auto& r : results) {
    std::string key = text_of(r.extra, "decision_cell");
    if (key.empty()) {
      t.unverified += !r.verified && measured(r);
      continue;
    }
    auto [it, fresh] = index.emplace(key, t.cells.size());
    if (fresh) {
      DesignedCell c;
      auto parts = split(key);
      parts.resize(4);
      c.op = parts[0], c.band = parts[1], c.flush = parts[2], c.column = parts[3];
      c.margin = number_of(r.extra, "decision_margin", 1.05);
      t.cells.push_back(std::move(c));
      recs.emplace_back();
    }
    DesignedCell& c = t.cells[it->second];
    std::string label = text_of(r.extra, "decision_candidate");
    if (label.empty()) {  // the cell's own record: it could not be measured
      c.unmeasurable = r.skipped.value_or("no candidates");
      if (auto it = r.extra.find("decision_candidates"); it != r.extra.end() && it->is_array())
        for (const auto& x : *it)
          if (x.is_string()) c.candidates.push_back(x.get<std::string>());
      if (auto it = r.extra.find("decision_conditions"); it != r.extra.end() && it->is_array())
        for (const auto& x : *it)
          if (x.is_number_unsigned()) c.conditions.push_back(x.get<std::uint64_t>());
      continue;
    }
    auto cand = std::find(c.candidates.begin(), c.candidates.end(), label);
    std::size_t ci = static_cast<std::size_t>(cand - c.candidates.begin());
    if (cand == c.candidates.end()) c.candidates.push_back(label);
    c.traits.resize(c.candidates.size());
    if (auto it = r.extra.find("decision_traits"); it != r.extra.end() && it->is_array() && !c.traits[ci]) {
      std::vector<std::string> names;
      for (const auto& x : *it)
        if (x.is_string()) names.push_back(x.get<std::string>());
      c.traits[ci] = io::traits_from_names(names);
    }
    auto k = static_cast<std::size_t>(number_of(r.extra, "decision_condition", 0));
    if (std::find(c.conditions.begin(), c.conditions.end(), r.block_size) == c.conditions.end()) c.conditions.push_back(r.block_size);
    c.rounds = std::max(c.rounds, static_cast<unsigned>(number_of(r.extra, "rounds", 0)));
    if (std::string s = text_of(r.extra, "decision_stop"); !s.empty()) c.stop = s;
    if (r.skipped) {
      c.skipped.push_back(label + " at " + exact_size(r.block_size) + ": " + *r.skipped);
      continue;
    }
    if (!measured(r)) {
      ++c.untrusted;
      continue;
    }
    switch (use_of(r)) {
      case Use::Unverified: ++c.unverified, ++t.unverified; continue;
      case Use::Untrusted:
        ++c.untrusted;
        for (const auto& kind : distrust(r)) ++c.untrusted_kinds[kind];
        continue;
      case Use::Keep: break;
    }
    c.with_outliers += r.has_warning(harness::WarningKind::Outliers);
    recs[it->second][k][ci] = &r;
  }
  for (std::size_t i = 0; i < t.cells.size(); ++i) {
    DesignedCell& c = t.cells[i];
    if (!c.unmeasurable.empty()) continue;
    std::vector<std::vector<std::vector<double>>> rs(c.conditions.size(),
                                                     std::vector<std::vector<double>>(c.candidates.size()));
    for (const auto& [k, by] : recs[i])
      for (const auto& [ci, r] : by)
        if (k < rs.size()) rs[k][ci] = rates(*r);
    std::vector<std::string> conds;
    for (auto b : c.conditions) conds.push_back(exact_size(b));
    c.verdict = harness::decide(rs, c.candidates, conds, c.margin);
    // Why, from the counters: the leader and its closest rival where the verdict was decided.
    const auto& v = c.verdict;
    if (v.ranking.size() >= 2) {
      std::size_t lead = v.chosen.empty() ? v.ranking[0] : v.chosen[0];
      std::size_t rival = v.kind == harness::Verdict::Kind::Winner ? v.against : v.ranking[v.ranking[0] == lead ? 1 : 0];
      std::size_t k = v.kind == harness::Verdict::Kind::Undecided ? 0 : v.interval_condition;
      auto at = recs[i].find(k);
      if (at != recs[i].end() && at->second.count(lead) && at->second.count(rival))
        c.why = "at " + exact_size(c.conditions[k]) + ": " + counters(c.candidates[lead], *at->second.at(lead)) +
                "; " + counters(c.candidates[rival], *at->second.at(rival));
    }
  }
  return t;
}

std::string format_text(const DesignedTable& t) {
  using Align = TextTable::Align;
  TextTable table({Align::Left, Align::Left, Align::Left, Align::Left, Align::Left});
  table.add({"OP", "PACKET", "FLUSH", "COLUMN", "VERDICT"});
  std::string unmeasured, whys;
  std::size_t measured_cells = 0, decided = 0;
  for (const auto& c : t.cells) {
    if (!c.unmeasurable.empty()) {
      unmeasured += fmt::format("  {} {} {} {}: {}\n", c.op, c.band, c.op == "read" ? "-" : c.flush, c.column,
                                visible(c.unmeasurable));
      continue;
    }
    ++measured_cells;
    decided += c.verdict.kind != harness::Verdict::Kind::Undecided;
    table.add({c.op, c.band, c.op == "read" ? "-" : c.flush, c.column, c.summary()});
    if (!c.why.empty()) whys += fmt::format("  {} {} {} {}: {}\n", c.op, c.band, c.op == "read" ? "-" : c.flush, c.column, c.why);
  }
  std::string out = table.render();
  out += fmt::format("\n{} of {} measured cells decided (winner or tie).\n", decided, measured_cells);
  if (t.unverified) out += fmt::format("{} records left out as unverified.\n", t.unverified);
  if (!whys.empty()) out += "\nWhy (counters per MiB moved, per repetition's median):\n" + whys;
  if (!unmeasured.empty()) out += "\nNot measured here:\n" + unmeasured;
  double margin = t.cells.empty() ? 1.05 : t.cells.front().margin;
  out += fmt::format(
      "\nEach cell: every candidate at every condition, in interleaved rounds (one repetition of each per round, a "
      "seeded random order each round), at least 6 rounds, more until decided or its share of --budget is spent; a "
      "candidate beaten at a size takes no more turns there.\n"
      "Interval: the ratio of rates (winner over rival) round by round, Hodges-Lehmann, with its exact Wilcoxon "
      "signed-rank interval, asked at 95%, the real coverage shown.\n"
      "Beaten: another's interval over it lies above {:.2f}. winner: the only one left unbeaten, at every condition; "
      "tie: the same set left unbeaten at every condition, every pairwise interval in it inside [{:.3f}, {:.2f}]; else "
      "undecided.\n",
      margin, 1 / margin, margin);
  return out;
}

std::string format_markdown(const DesignedTable& t) {
  auto cell = markdown_cell;
  std::string out = "| op | packet | flush | column | verdict |\n|---|---|---|---|---|\n";
  for (const auto& c : t.cells) {
    if (!c.unmeasurable.empty()) continue;
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c.op, cell(c.band), c.op == "read" ? "-" : c.flush, c.column,
                       cell(c.summary()));
  }
  return out;
}

nlohmann::json to_json(const DesignedTable& t) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : t.cells) {
    const auto& v = c.verdict;
    nlohmann::json winner = nullptr, tied = nlohmann::json::array(), interval = nullptr;
    if (v.kind == harness::Verdict::Kind::Winner) winner = c.candidates[v.chosen[0]];
    if (v.kind == harness::Verdict::Kind::Tie)
      for (auto i : v.chosen) tied.push_back(c.candidates[i]);
    if (v.interval.available) interval = {v.interval.lo, v.interval.hi};
    nlohmann::json best_everywhere = nlohmann::json::array();
    for (auto i : v.best_everywhere) best_everywhere.push_back(c.candidates[i]);
    // Each packet size's own answer: what a user of a cell whose answer
    // changes within the band acts on, size by size.
    nlohmann::json sizes = nlohmann::json::array();
    for (std::size_t k = 0; k < v.unbeaten.size() && k < c.conditions.size(); ++k) {
      nlohmann::json unbeaten = nlohmann::json::array();
      for (auto i : v.unbeaten[k]) unbeaten.push_back(c.candidates[i]);
      sizes.push_back({{"size", c.conditions[k]},
                       {"settled", k < v.settled.size() && v.settled[k]},
                       {"unbeaten", unbeaten}});
    }
    std::string reason = !c.unmeasurable.empty() ? c.unmeasurable : v.kind == harness::Verdict::Kind::Undecided ? v.reason : "";
    cells.push_back({{"op", c.op},
                     {"band", c.band},
                     {"flush", c.op == "read" ? nlohmann::json(nullptr) : nlohmann::json(c.flush)},
                     {"column", c.column},
                     {"measured", c.unmeasurable.empty()},
                     {"verdict", c.unmeasurable.empty() ? std::string(harness::to_string(v.kind)) : "not measured"},
                     {"winner", winner},
                     {"tied", tied},
                     {"best_at_every_size", best_everywhere},
                     {"sizes", sizes},
                     {"candidates", c.candidates},
                     {"conditions", c.conditions},
                     {"rounds", c.rounds},
                     {"stop", c.stop},
                     {"interval", interval},
                     {"interval_coverage", v.interval.available ? nlohmann::json(v.interval.coverage) : nlohmann::json(nullptr)},
                     {"estimate", v.interval.available ? nlohmann::json(v.interval.estimate) : nlohmann::json(nullptr)},
                     {"margin", c.margin},
                     {"reason", reason},
                     {"why", c.why},
                     {"skipped", c.skipped},
                     {"unverified", c.unverified},
                     {"left_out_for_warnings", c.untrusted},
                     {"with_outliers", c.with_outliers},
                     {"summary", c.summary()}});
  }
  return {{"format", "iolab-decision-table"}, {"format_version", 3}, {"designed", true}, {"cells", cells}};
}

}  // namespace iolab::report
