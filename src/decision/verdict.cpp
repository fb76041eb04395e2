// The decision rebuilt from its records (verdict.h).
#include "iolab/decision/verdict.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/decision/trust.h"

namespace iolab::decision {

namespace {

std::string text_of(const nlohmann::json& extra, const char* key) {
  auto it = extra.find(key);
  return it != extra.end() && it->is_string() ? it->get<std::string>() : "";
}
double number_of(const nlohmann::json& extra, const char* key, double otherwise) {
  auto it = extra.find(key);
  return it != extra.end() && it->is_number() ? it->get<double>() : otherwise;
}
// A count the replay runs by (rounds, the first stage): a whole number in
// [least, most], `otherwise` when absent; anything else is refused naming
// the key, rather than replayed as a count it never was.
unsigned count_of(const nlohmann::json& extra, const char* key, unsigned otherwise, unsigned least, unsigned most,
                  const std::string& condition) {
  auto it = extra.find(key);
  if (it == extra.end()) return otherwise;
  const double v = it->is_number() ? it->get<double>() : -1;
  if (!(v >= least && v <= most) || v != std::floor(v))
    throw Error("read", "decision record of " + condition,
                fmt::format("{} is {}, not a whole number from {} to {}", key, it->dump(), least, most));
  return static_cast<unsigned>(v);
}

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = key.find('|', from)) != std::string::npos; from = at + 1) parts.push_back(key.substr(from, at - from));
  parts.push_back(key.substr(from));
  return parts;
}

// "read|4096|none|warm" -> Condition; throws Error naming the key.
Condition condition_of(const std::string& key) {
  auto bad = [&](const std::string& why) { return Error("read", "decision condition '" + key + "'", why); };
  auto parts = split(key);
  if (parts.size() != 4) throw bad("expected op|size|flush|column");
  Condition c;
  if (parts[0] != "read" && parts[0] != "write") throw bad("unknown op");
  c.row.op = parts[0] == "read" ? results::Op::Read : results::Op::Write;
  if (parts[1].empty() || parts[1].size() > 19 || parts[1].find_first_not_of("0123456789") != std::string::npos)
    throw bad("the size is not a number of bytes");
  c.size = std::stoull(parts[1]);
  if (std::find(std::begin(kFlushes), std::end(kFlushes), parts[2]) == std::end(kFlushes)) throw bad("unknown flush policy");
  c.row.flush = parts[2];
  auto column = column_named(parts[3]);
  if (!column || !column_fits(c.row.op, *column)) throw bad("unknown column");
  c.row.column = *column;
  return c;
}

double work(const results::Result& r) { return r.bytes > 0 ? static_cast<double>(r.bytes) : static_cast<double>(r.ops); }

void add_counters(CandidateVerdict& v, const results::Result& r) {
  const double mib = static_cast<double>(r.bytes) / (1024.0 * 1024.0);
  if (mib <= 0) return;
  v.calls_per_mib = static_cast<double>(r.io_calls) / mib;
  v.minor_faults_per_mib = static_cast<double>(r.minor_faults) / mib;
  v.kernel_ms_per_mib = 1000 * r.sys_s / mib;
  if (r.sync.flushes()) v.flushes_per_pass = number_of(r.extra, "flushes", -1);
  v.major_faults_per_mib = number_of(r.extra, "major_faults_per_mib", -1);
  v.device_bytes_per_byte = number_of(r.extra, "device_read_bytes_per_byte", -1);
}

// One condition's records, by candidate.
struct Gathered {
  ConditionVerdict verdict;
  std::vector<const results::Result*> records;  // by candidate index
  std::string recorded_stop, recorded_why;
  unsigned recorded_rounds = 0;
  std::optional<std::string> recorded_pick;  // the live selection's (records from before it kept none: nullopt)
  std::vector<std::string> recorded_within;
};

// The selection replayed over the recorded rounds, as the run made it
// (schedule.cpp's loop: a candidate untrusted from a round is withdrawn
// before that round is added).
void replay(Gathered& g) {
  ConditionVerdict& v = g.verdict;
  const std::size_t k = v.candidates.size();
  Selection sel(k, Guarantee{v.indifference, v.confidence}, v.first_stage);
  std::vector<std::optional<Untrusted>> distrust(k);
  for (std::size_t i = 0; i < k; ++i) {
    const results::Result* r = g.records[i];
    if (!r) {
      v.candidates[i].skipped = "no record";
      sel.withdraw(i);
      continue;
    }
    distrust[i] = untrusted(*r);
    if (r->skipped) v.candidates[i].skipped = *r->skipped;
    if (distrust[i] && distrust[i]->from_round == 0) sel.withdraw(i);
  }
  std::vector<double> rates(k, 0.0);
  for (unsigned round = 0; !sel.done(); ++round) {
    // A round's withdrawals come before its rates, as in the run. One may
    // end the selection before the round counts: the run then stopped at
    // `round` rounds with that round's repetitions measured, so the
    // withdrawals of the round after the last counted one are replayed too.
    for (std::size_t i = 0; i < k; ++i)
      if (sel.in_play(i) && distrust[i] && distrust[i]->from_round <= round) sel.withdraw(i);
    if (sel.done() || round >= g.recorded_rounds) break;
    for (std::size_t i = 0; i < k; ++i) {
      rates[i] = 0;
      if (!sel.in_play(i)) continue;
      const auto& s = g.records[i]->samples_s;
      rates[i] = round < s.size() && s[round] > 0 ? work(*g.records[i]) / s[round] : 0;
    }
    sel.add_round(rates);
  }
  if (!sel.done() && g.recorded_stop == to_string(Stop::Budget)) sel.stop_for_budget();
  v.rounds = sel.rounds();
  v.stop = sel.stop() == Selection::Stop::Budget || sel.stop() == Selection::Stop::Running ? Stop::Budget
           : sel.stop() == Selection::Stop::NoCandidate                                   ? Stop::NoCandidate
                                                                                          : Stop::Selected;
  v.within_zone = sel.stop() == Selection::Stop::Within;
  v.within = sel.survivors();
  if (sel.rounds() > 0 && !v.within.empty()) v.pick = v.within.front();
  if (v.stop == Stop::Budget) v.why = g.recorded_why;
  // The replay must end as the live selection did: same rounds, stop, pick and survivors.
  v.replay_agrees = v.rounds == g.recorded_rounds && std::string(to_string(v.stop)) == g.recorded_stop;
  if (g.recorded_pick) {
    std::vector<std::string> within;
    for (std::size_t i : v.within) within.push_back(v.candidates[i].label);
    v.replay_agrees = v.replay_agrees && v.pick && v.candidates[*v.pick].label == *g.recorded_pick &&
                      within == g.recorded_within;
  }
  for (std::size_t i = 0; i < k; ++i) {
    CandidateVerdict& c = v.candidates[i];
    c.eliminated = sel.eliminated(i);
    if (sel.withdrawn(i) && c.skipped.empty() && distrust[i])
      c.withdrawn = fmt::format("from round {}: {}", distrust[i]->from_round + 1, distrust[i]->why);
    v.left_out += !c.skipped.empty() || !c.withdrawn.empty();
    const results::Result* r = g.records[i];
    if (!r || !c.skipped.empty()) continue;
    // Its trusted rounds: those the selection took (eliminated: up to then; withdrawn: before it).
    unsigned n = std::min<unsigned>(static_cast<unsigned>(r->samples_s.size()), sel.rounds());
    if (c.eliminated) n = std::min(n, c.eliminated->after_rounds);
    if (distrust[i]) n = std::min(n, distrust[i]->from_round);
    c.rounds = n;
    c.mean_log_rate = sel.mean_log_rate(i);
    c.rate = c.rounds > 0 ? std::exp(c.mean_log_rate) : 0;
    add_counters(c, *r);
  }
  // The pick over each other candidate, over their common trusted rounds.
  if (v.pick) {
    const std::size_t p = *v.pick;
    auto series = [&](std::size_t i) {
      std::vector<double> out;
      const results::Result* r = g.records[i];
      for (unsigned j = 0; r && j < v.candidates[i].rounds && j < r->samples_s.size(); ++j)
        out.push_back(work(*r) / r->samples_s[j]);
      return out;
    };
    const std::vector<double> pick_rates = series(p);
    for (std::size_t i = 0; i < k; ++i)
      if (i != p && v.candidates[i].rounds > 0)
        v.candidates[i].pick_over = harness::paired_ratio_interval(series(i), pick_rates);
    // The best of those the rule ruled out.
    for (std::size_t i = 0; i < k; ++i)
      if (v.candidates[i].eliminated && v.candidates[i].rounds > 0 &&
          (!v.runner_up || v.candidates[i].mean_log_rate > v.candidates[*v.runner_up].mean_log_rate))
        v.runner_up = i;
  }
}

std::optional<SafeChoice> safe_over(const Decision& d, const std::vector<std::size_t>& conds) {
  // Per method label: its worst ratio to the pick over the conditions.
  std::map<std::string, SafeChoice> by;
  std::map<std::string, std::size_t> seen;
  std::size_t measured = 0;
  for (std::size_t ci : conds) {
    const ConditionVerdict& c = d.conditions[ci];
    if (!c.measured() || !c.pick) continue;
    ++measured;
    for (std::size_t i = 0; i < c.candidates.size(); ++i) {
      const CandidateVerdict& cand = c.candidates[i];
      double ratio = 0;
      if (i == *c.pick) ratio = 1;
      else if (cand.pick_over.n_a > 0) ratio = cand.pick_over.estimate;
      else continue;
      SafeChoice& s = by[cand.label];
      s.method = cand.label;
      if (seen[cand.label]++ == 0 || ratio > s.worst_ratio) s.worst_ratio = ratio, s.worst_at = c.condition.size;
    }
  }
  std::optional<SafeChoice> best;
  for (auto& [label, s] : by) {
    if (seen[label] != measured || measured == 0) continue;  // measured at every size, or not a choice for all of them
    if (!best || s.worst_ratio < best->worst_ratio) best = s;
  }
  if (!best) return std::nullopt;
  best->sizes = measured;
  best->from = UINT64_MAX, best->to = 0;
  for (std::size_t ci : conds)
    if (d.conditions[ci].measured() && d.conditions[ci].pick) {
      best->from = std::min(best->from, d.conditions[ci].condition.size);
      best->to = std::max(best->to, d.conditions[ci].condition.size);
    }
  return best;
}

nlohmann::json interval_json(const harness::RatioInterval& r) {
  if (!r.available) return {{"estimate", r.estimate}, {"rounds", r.n_a}, {"interval", nullptr}};
  return {{"estimate", r.estimate}, {"rounds", r.n_a}, {"interval", {r.lo, r.hi}}, {"coverage", r.coverage}};
}

}  // namespace

std::string_view band_of(std::uint64_t size) {
  return size < 64 ? "< 64 B" : size < 4096 ? "64 B..4 KiB" : size < 1024 * 1024 ? "4 KiB..1 MiB" : ">= 1 MiB";
}

bool holds_decision(std::span<const results::Result> results) {
  return std::any_of(results.begin(), results.end(), [](const auto& r) {
    return !text_of(r.extra, keys::kCondition).empty() || !text_of(r.extra, keys::kWorkload).empty() ||
           !text_of(r.extra, keys::kOldCell).empty();
  });
}

Decision decision_from_records(std::span<const results::Result> results) {
  Decision d;
  std::map<std::string, std::size_t> index;
  std::vector<Gathered> gathered;
  for (const auto& r : results) {
    if (!text_of(r.extra, keys::kOldCell).empty() && text_of(r.extra, keys::kCondition).empty())
      throw Error("read", "the decision records",
                  "they come from an older iolab's table of per-band cells, which cannot be replayed as conditions; "
                  "measure again with `iolab recommend`");
    const std::string workload = text_of(r.extra, keys::kWorkload);
    // A workload's records (a replayed trace) are judged as a condition's are; their key cannot be a condition's.
    const std::string key = workload.empty() ? text_of(r.extra, keys::kCondition) : "workload " + workload;
    if (key.empty()) {
      d.unverified += !r.verified && !r.skipped;
      continue;
    }
    auto [it, fresh] = index.emplace(key, gathered.size());
    if (fresh) {
      Gathered g;
      if (workload.empty())
        g.verdict.condition = condition_of(key);
      else
        g.verdict.workload = workload;
      gathered.push_back(std::move(g));
    }
    Gathered& g = gathered[it->second];
    ConditionVerdict& v = g.verdict;
    auto guarantee_of = [&] {
      v.indifference = number_of(r.extra, keys::kIndifference, v.indifference);
      v.confidence = number_of(r.extra, keys::kConfidence, v.confidence);
      v.first_stage = count_of(r.extra, keys::kFirstStage, v.first_stage, 2, 1000, key);
      v.min_time = number_of(r.extra, keys::kMinTime, v.min_time);
      if (std::string s = text_of(r.extra, keys::kStop); !s.empty()) g.recorded_stop = s;
      g.recorded_why = text_of(r.extra, keys::kStopWhy);
      if (std::string s = text_of(r.extra, keys::kPick); !s.empty()) g.recorded_pick = s;
      if (auto w = r.extra.find(keys::kWithin); w != r.extra.end() && w->is_array()) {
        g.recorded_within.clear();
        for (const auto& x : *w)
          if (x.is_string()) g.recorded_within.push_back(x.get<std::string>());
      }
    };
    const std::string label = text_of(r.extra, keys::kCandidate);
    if (label.empty()) {  // the condition's own record: not measured
      guarantee_of();
      auto stop = stop_named(g.recorded_stop);
      v.stop = stop && (*stop == Stop::NotRun || *stop == Stop::Unmeasurable) ? *stop : Stop::Unmeasurable;
      v.why = r.skipped.value_or("not measured");
      if (auto listed = r.extra.find(keys::kCandidates); listed != r.extra.end() && listed->is_array())
        for (const auto& x : *listed)
          if (x.is_string()) {
            CandidateVerdict c;
            c.label = x.get<std::string>();
            v.candidates.push_back(std::move(c));
          }
      continue;
    }
    const double idx = number_of(r.extra, keys::kIndex, -1);
    if (!(idx >= 0 && idx < 4096)) throw Error("read", "decision record of " + key, "no valid decision_candidate_index");
    const auto i = static_cast<std::size_t>(idx);
    if (v.candidates.size() <= i) v.candidates.resize(i + 1), g.records.resize(i + 1, nullptr);
    if (g.records[i]) throw Error("read", "decision record of " + key, "two records for candidate " + label);
    v.candidates[i].label = label;
    if (auto t = r.extra.find(keys::kTraits); t != r.extra.end() && t->is_array()) {
      std::vector<std::string> names;
      for (const auto& x : *t)
        if (x.is_string()) names.push_back(x.get<std::string>());
      v.candidates[i].traits = io::traits_from_names(names);
    }
    g.records[i] = &r;
    guarantee_of();
    g.recorded_rounds = count_of(r.extra, keys::kRounds, 0, 0, 1000000, key);
    if (r.bytes == 0 && r.ops > 0) v.counts_bytes = false;
    d.unverified += !r.verified && !r.skipped;
  }
  for (auto& g : gathered) {
    ConditionVerdict& v = g.verdict;
    if (!g.records.empty()) {
      if (auto problem = guarantee_problem(Guarantee{v.indifference, v.confidence}))
        throw Error("read", "decision records of " + (v.workload.empty() ? v.condition.key() : v.workload), *problem);
      replay(g);
    }
    (v.workload.empty() ? d.conditions : d.workloads).push_back(std::move(v));
  }
  // Rows in the design's order, sizes ascending.
  std::sort(d.conditions.begin(), d.conditions.end(), [](const ConditionVerdict& a, const ConditionVerdict& b) {
    auto rank = [](const Row& r) {
      const auto& fl = kFlushes;
      const auto f = std::find(std::begin(fl), std::end(fl), r.flush) - std::begin(fl);
      return std::tuple(static_cast<int>(r.op), f, static_cast<int>(r.column));
    };
    return std::tuple(rank(a.condition.row), a.condition.size) < std::tuple(rank(b.condition.row), b.condition.size);
  });
  for (std::size_t ci = 0; ci < d.conditions.size(); ++ci) {
    const Row& row = d.conditions[ci].condition.row;
    if (d.rows.empty() || !(d.rows.back().row == row)) d.rows.push_back(RowVerdict{row, {}, std::nullopt, {}});
    d.rows.back().conditions.push_back(ci);
  }
  for (RowVerdict& row : d.rows) {
    row.safe = safe_over(d, row.conditions);
    std::map<std::string_view, std::vector<std::size_t>> bands;
    std::vector<std::string_view> order;
    for (std::size_t ci : row.conditions) {
      auto b = band_of(d.conditions[ci].condition.size);
      if (!bands.count(b)) order.push_back(b);
      bands[b].push_back(ci);
    }
    for (auto b : order)
      if (auto s = safe_over(d, bands[b]); s && s->sizes >= 2) row.bands.emplace_back(std::string(b), *s);
  }
  return d;
}

nlohmann::json to_json(const Decision& d) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const auto& c : d.conditions) {
    auto label = [&](std::optional<std::size_t> i) { return i ? nlohmann::json(c.candidates[*i].label) : nlohmann::json(nullptr); };
    nlohmann::json within = nlohmann::json::array(), cands = nlohmann::json::array();
    for (auto i : c.within) within.push_back(c.candidates[i].label);
    for (std::size_t i = 0; i < c.candidates.size(); ++i) {
      const auto& x = c.candidates[i];
      nlohmann::json j = {{"method", x.label}, {"rounds", x.rounds}};
      if (!x.skipped.empty()) j["skipped"] = x.skipped;
      if (!x.withdrawn.empty()) j["withdrawn"] = x.withdrawn;
      if (x.rounds > 0) j[c.counts_bytes ? "bytes_per_s" : "ops_per_s"] = x.rate;
      if (x.eliminated)
        j["eliminated"] = {{"after_rounds", x.eliminated->after_rounds}, {"by", c.candidates[x.eliminated->by].label}};
      if (x.pick_over.n_a > 0) j["pick_over_it"] = interval_json(x.pick_over);
      if (x.traits) {
        nlohmann::json t = nlohmann::json::array();
        for (auto n : io::trait_names(*x.traits)) t.push_back(std::string(n));
        j["traits"] = t;
      }
      cands.push_back(std::move(j));
    }
    nlohmann::json runner_up = nullptr;
    if (c.runner_up)
      runner_up = {{"method", c.candidates[*c.runner_up].label},
                   {"pick_over_it", interval_json(c.candidates[*c.runner_up].pick_over)},
                   {"note", "within this run: the interval covers this run's rounds, not another day's"}};
    conditions.push_back({{"op", results::to_string(c.condition.row.op)},
                          {"size", c.condition.size},
                          {"flush", c.condition.row.flush},
                          {"column", to_string(c.condition.row.column)},
                          {"stop", to_string(c.stop)},
                          {"predicted", false},
                          {"within_zone", c.within_zone},
                          {"pick", label(c.pick)},
                          {"within", within},
                          {"runner_up", runner_up},
                          {"rounds", c.rounds},
                          {"indifference", c.indifference},
                          {"confidence", c.confidence},
                          {"first_stage", c.first_stage},
                          {"min_time_s", c.min_time},
                          {"rate_unit", c.counts_bytes ? "bytes/s" : "ops/s"},
                          {"why", c.why},
                          {"replay_agrees", c.replay_agrees},
                          {"candidates", cands}});
  }
  nlohmann::json rows = nlohmann::json::array();
  auto safe_json = [](const SafeChoice& s) {
    return nlohmann::json{{"method", s.method}, {"worst_ratio", s.worst_ratio}, {"worst_at", s.worst_at},
                          {"from", s.from}, {"to", s.to}, {"sizes", s.sizes}};
  };
  for (const auto& r : d.rows) {
    nlohmann::json picks = nlohmann::json::array(), bands = nlohmann::json::array();
    for (std::size_t ci : r.conditions) {
      const auto& c = d.conditions[ci];
      picks.push_back({{"size", c.condition.size},
                       {"pick", c.pick ? nlohmann::json(c.candidates[*c.pick].label) : nlohmann::json(nullptr)},
                       {"within", c.within.size()},
                       {"stop", to_string(c.stop)}});
    }
    for (const auto& [band, s] : r.bands) bands.push_back({{"band", band}, {"safe", safe_json(s)}});
    rows.push_back({{"op", results::to_string(r.row.op)},
                    {"flush", r.row.flush},
                    {"column", to_string(r.row.column)},
                    {"picks", picks},
                    {"safe", r.safe ? safe_json(*r.safe) : nlohmann::json(nullptr)},
                    {"bands", bands}});
  }
  return {{"format", "iolab-decision"}, {"format_version", 5}, {"conditions", conditions}, {"rows", rows},
          {"unverified_records", d.unverified}};
}

}  // namespace iolab::decision
