// A trace's methods judged by the decision's selection (trace_decision.h).
#include "iolab/suites/trace_decision.h"

#include <fmt/core.h>

#include <algorithm>

#include "decision_trials.h"
#include "iolab/base/clock.h"
#include "iolab/decision/schedule.h"

namespace iolab::suites {

std::vector<results::Result> decide_trace(harness::Runner& runner, const replay::Trace& t,
                                          const std::vector<const io::Method*>& methods,
                                          const replay::Settings& replay, const TraceDecisionSettings& settings) {
  // The candidates as the decision's records name them: the method and its traits in the replay's options.
  decision::DesignedCondition d;
  for (const io::Method* m : methods) d.candidates.push_back({std::string(m->name()), m->traits(replay.options)});
  // A trace that syncs waits for the device, whose speed swings (an fdatasync took 0.2-4 ms here within
  // minutes): its repetitions get a flushing condition's device-bound headroom
  // over the too-short bound (longer, sized after a second calibration repetition: decision_run.cpp).
  d.device_bound = std::any_of(t.ops.begin(), t.ops.end(), [](const trace::Op& op) {
    return op.kind == trace::OpKind::Fsync || op.kind == trace::OpKind::Fdatasync || op.kind == trace::OpKind::Msync ||
           op.kind == trace::OpKind::SyncFileRange;
  });
  std::vector<results::Result> records;
  const std::uint64_t seed = settings.seed * 1000003u + std::hash<std::string>{}(t.name) % 1000003u;
  const harness::RunConfig& config = runner.config();
  RoundsTrial trial(config, runner.scratch(), d, seed, settings.first_stage, config.min_time, records,
                    t.name, replay::candidates(t, methods, replay, runner.scratch()));
  auto now = [] { return static_cast<double>(steady_ns()) / 1e9; };
  const double deadline = now() + settings.budget_s;
  const decision::SelectionRun run = decision::run_selection(trial, d.candidates.size(), settings.guarantee,
                                                             settings.first_stage, settings.max_rounds,
                                                             settings.budget_s, deadline, now);
  trial.finish(run.selection, run.ending);
  if (settings.progress)
    settings.progress(fmt::format("{}: {} after {} rounds (indifference {:.2f}){}", t.name, decision::to_string(run.ending.stop),
                                  run.selection.rounds(), run.selection.guarantee().indifference,
                                  run.ending.why.empty() ? "" : ": " + run.ending.why));
  return records;
}

}  // namespace iolab::suites
