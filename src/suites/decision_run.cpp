// The decision's measurement (decision.h): each condition's candidates in
// interleaved rounds, judged after every round by the schedule's selection.
#include "iolab/suites/decision.h"

#include <memory>

#include <fmt/core.h>

#include "decision_trials.h"
#include "iolab/base/clock.h"
#include "iolab/base/units.h"
#include "iolab/decision/trust.h"
#include "iolab/decision/verdict.h"
#include "iolab/io/registry.h"

namespace iolab::suites {

namespace {

// A device-bound condition's repetition time over the plan's: its passes
// wait for the device, whose speed swings (a flush took 1-9 ms here), so
// its repetitions get more headroom over the too-short bound.
constexpr double kDeviceBoundMinTimeFactor = 1.5;

// A condition's runner: repetitions of at least `min_time`. A device-bound
// one's passes wait for a device whose speed swings (a flush every 16 KiB
// took 24-250 ms per pass here within a minute): its passes are sized after
// a second calibration repetition, so passes sized while the device works
// off the candidates' setup do not leave every later repetition under the
// too-short bound (which withdrew all of a condition's candidates).
harness::RunConfig trial_config(harness::RunConfig c, double min_time, bool device_bound) {
  c.min_time = min_time;
  if (device_bound) c.calibration_reps = std::max(2u, c.calibration_reps);
  return c;
}

void add_facts(results::Result& r, const RecordFacts& f, const decision::DesignedCondition& d) {
  namespace k = decision::keys;
  r.extra[k::kStop] = decision::to_string(f.stop);
  if (!f.why.empty()) r.extra[k::kStopWhy] = f.why;
  r.extra[k::kRounds] = f.rounds;
  r.extra[k::kIndifference] = f.indifference;
  r.extra[k::kConfidence] = f.confidence;
  r.extra[k::kFirstStage] = f.first_stage;
  if (f.pick && *f.pick < d.candidates.size()) r.extra[k::kPick] = d.candidates[*f.pick].label;
  nlohmann::json within = nlohmann::json::array();
  for (std::size_t i : f.within)
    if (i < d.candidates.size()) within.push_back(d.candidates[i].label);
  if (!within.empty()) r.extra[k::kWithin] = std::move(within);
}

}  // namespace

RecordFacts facts_of(const decision::Selection& s, const decision::ConditionTrial::Ending& ending) {
  return {ending.stop,         ending.why,        s.rounds(), s.guarantee().indifference, s.guarantee().confidence,
          s.first_stage(),     s.pick(),          s.survivors()};
}

nlohmann::json to_json(const RecordFacts& f) {
  return {{"stop", decision::to_string(f.stop)},
          {"why", f.why},
          {"rounds", f.rounds},
          {"indifference", f.indifference},
          {"confidence", f.confidence},
          {"first_stage", f.first_stage},
          {"pick", f.pick ? nlohmann::json(*f.pick) : nlohmann::json(nullptr)},
          {"within", f.within}};
}

RecordFacts facts_from(const nlohmann::json& j) {
  RecordFacts f{decision::stop_named(j.at("stop").get<std::string>()).value_or(decision::Stop::Budget),
                j.at("why").get<std::string>(), j.at("rounds").get<unsigned>(),
                j.at("indifference").get<double>(), j.at("confidence").get<double>(), j.at("first_stage").get<unsigned>(),
                std::nullopt, j.at("within").get<std::vector<std::size_t>>()};
  if (!j.at("pick").is_null()) f.pick = j.at("pick").get<std::size_t>();
  return f;
}

RoundsTrial::RoundsTrial(const harness::RunConfig& config, io::ScratchDir& scratch, const decision::DesignedCondition& d,
                         std::uint64_t seed, unsigned first_stage, double min_time, std::vector<results::Result>& out,
                         std::string workload, std::vector<harness::WorkloadCandidate> workloads)
    : min_time_(d.device_bound ? kDeviceBoundMinTimeFactor * min_time : min_time),
      runner_(trial_config(config, min_time_, d.device_bound), scratch), d_(d), seed_(seed), first_stage_(first_stage), out_(out),
      retired_(d.candidates.size(), false), workload_(std::move(workload)), workloads_(std::move(workloads)) {}

RoundsTrial::~RoundsTrial() { remove_prepared(); }

std::vector<std::string> RoundsTrial::start() {
  rounds_ = workload_.empty()
                ? std::make_unique<harness::Rounds>(runner_, prepared(d_.experiments), seed_, first_stage_)
                : std::make_unique<harness::Rounds>(runner_, workloads_, seed_, first_stage_);
  rounds_->start();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < d_.candidates.size(); ++i) out.push_back(rounds_->not_running(i).value_or(""));
  return out;
}

decision::ConditionTrial::Round RoundsTrial::round(const std::vector<bool>& in_play,
                                                   const std::function<bool()>& more) {
  const std::size_t k = d_.candidates.size();
  // The selection's losers and withdrawn take no more turns (what it decided is its records' to say).
  for (std::size_t i = 0; i < k; ++i)
    if (!in_play[i] && !retired_[i]) {
      rounds_->retire(i, fmt::format("out of the selection after {} rounds", rounds_->rounds()));
      retired_[i] = true;
    }
  Round r;
  r.rates.assign(k, 0.0);
  r.untrusted.assign(k, std::nullopt);
  if (!rounds_->round(more)) return r;
  r.complete = true;
  const unsigned index = rounds_->rounds() - 1;  // this round, 0-based
  const auto rates = rounds_->rates();
  for (std::size_t i = 0; i < k; ++i) {
    if (!in_play[i]) continue;
    if (rates[i].size() == rounds_->rounds()) r.rates[i] = rates[i].back();
    // The one trust filter, on the record as it stands after this round.
    results::Result now = rounds_->provisional(i);
    auto u = decision::untrusted(now);
    if (u && u->round_unknown) {
      rounds_->set_extra(i, decision::kUntrustedFromRound, index);
      u->from_round = index;
    }
    if (u && u->from_round <= index) r.untrusted[i] = u->why;
  }
  return r;
}

void RoundsTrial::finish(const decision::Selection& selection, const Ending& ending) {
  finish_with(facts_of(selection, ending));
}

void RoundsTrial::finish_with(const RecordFacts& facts) {
  namespace k = decision::keys;
  std::vector<results::Result> records = rounds_->finish();
  for (std::size_t i = 0; i < records.size(); ++i) {
    auto& r = records[i];
    if (workload_.empty())
      r.extra[k::kCondition] = d_.condition.key();
    else
      r.extra[k::kWorkload] = workload_;
    r.extra[k::kCandidate] = d_.candidates[i].label;
    r.extra[k::kIndex] = i;
    nlohmann::json traits = nlohmann::json::array();
    for (std::string_view t : io::trait_names(d_.candidates[i].traits)) traits.push_back(std::string(t));
    r.extra[k::kTraits] = std::move(traits);
    r.extra[k::kMinTime] = min_time_;
    add_facts(r, facts, d_);
    out_.push_back(std::move(r));
  }
  rounds_.reset();
  remove_prepared();
}

// The candidates' reads at one condition, all of one length: one file for
// them all (the same bytes, made warm once for a warm condition), written
// once instead of once per candidate. Each still proves its cache state
// before every timed pass and verifies every byte in its verification pass.
std::vector<harness::FileExperiment> RoundsTrial::prepared(std::vector<harness::FileExperiment> row) {
  if (row.empty() || row[0].op != results::Op::Read) return row;
  if (!row[0].prepared_file.empty()) return row;  // the caller's (the past-memory child's)
  const std::uint64_t length = harness::file_length(row[0]);
  for (const auto& e : row)
    if (e.op != results::Op::Read || harness::file_length(e) != length) return row;
  if (harness::resource_problem(row[0], runner_.scratch().path())) return row;  // each candidate says why
  prepared_.push_back(runner_.scratch().create_unique_file("shared"));
  harness::write_pattern_file(prepared_.back(), length, runner_.config().seed);
  if (row[0].cache == results::CacheState::Warm) harness::make_warm_from_disk(prepared_.back());
  for (auto& e : row) e.prepared_file = prepared_.back();
  return row;
}

void RoundsTrial::remove_prepared() noexcept {
  for (const auto& f : prepared_) {
    try {
      runner_.scratch().remove_file(f);
    } catch (...) {  // already gone
    }
  }
  prepared_.clear();
}

DecisionRun run_decision(harness::Runner& runner, const decision::DesignRequest& request,
                         const decision::ScheduleSettings& settings, std::uint64_t seed, const ExtraConditions& extra) {
  namespace k = decision::keys;
  DecisionRun out;
  // Every condition the plan considers, at a stable address for its trial.
  std::vector<std::unique_ptr<decision::DesignedCondition>> designs;
  auto make = [&](const decision::Condition& c) {
    designs.push_back(std::make_unique<decision::DesignedCondition>(decision::design(c, request)));
    const decision::DesignedCondition& d = *designs.back();
    // The condition's place in the grid, for its seed: the same condition gets the same orders in every run.
    const std::uint64_t condition_seed = seed * 1000003u + std::hash<std::string>{}(c.key()) % 1000003u;
    decision::ScheduledCondition sc;
    sc.condition = c;
    sc.candidates = d.unmeasurable.empty() ? d.candidates.size() : 0;
    sc.unmeasurable = d.unmeasurable;
    sc.device_bound = d.device_bound;
    sc.make = [&runner, &d, &out, &settings, condition_seed](double min_time) -> std::unique_ptr<decision::ConditionTrial> {
      const bool past_memory = d.condition.row.column == decision::Column::PastMemory ||
                               d.condition.row.column == decision::Column::PastMemoryDirect;
      if (past_memory) return make_memory_trial(runner, d, condition_seed, settings.first_stage, min_time, out.records);
      return std::make_unique<RoundsTrial>(runner.config(), runner.scratch(), d, condition_seed, settings.first_stage,
                                           min_time, out.records);
    };
    sc.skipped = [&runner, &d, &out, &settings](const std::string& why, decision::Stop stop) {
      results::Result r;
      r.suite = "decision";
      r.experiment = d.condition.key();
      r.op = d.condition.row.op;
      r.block_size = d.condition.size;
      r.skipped = why;
      r.extra[k::kCondition] = d.condition.key();
      nlohmann::json labels = nlohmann::json::array();
      for (const auto& cand : d.candidates) labels.push_back(cand.label);
      r.extra[k::kCandidates] = std::move(labels);
      RecordFacts facts;
      facts.stop = stop;
      facts.indifference = settings.guarantee.indifference;
      facts.confidence = settings.guarantee.confidence;
      facts.first_stage = settings.first_stage;
      add_facts(r, facts, d);
      if (runner.config().on_result) runner.config().on_result(r);
      out.records.push_back(std::move(r));
    };
    return sc;
  };
  decision::ScheduleSettings with_extra = settings;
  if (extra) with_extra.extra = [&extra, &out] { return extra(out.records); };
  out.schedule = decision::run_schedule(decision::rows(request), request, make, with_extra,
                                        [] { return static_cast<double>(steady_ns()) / 1e9; });
  return out;
}

}  // namespace iolab::suites
