// `iolab recommend --trace`: a recorded program's trace replayed through
// each method that can express it (replay/replay.h), judged by the
// decision's selection (decision/selection.h) over interleaved rounds, run
// as the schedule runs one condition (decision::run_selection): the pick,
// the methods within the indifference zone, a stated guarantee.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "iolab/decision/selection.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/replay/replay.h"

namespace iolab::suites {

struct TraceDecisionSettings {
  decision::Guarantee guarantee;
  unsigned first_stage = decision::kFirstStage;
  unsigned max_rounds = 400;
  double budget_s = 570;  // wall time for the whole selection, a hard bound
  std::uint64_t seed = 0x10AB;
  std::function<void(const std::string& line)> progress;  // one line when it ends
};

// One record per method, in order (decision/verdict.h's keys, with
// keys::kWorkload = the trace's name), a method that cannot replay the
// trace skipped with the reason; decision::decision_from_records judges them
// again as the run did (its `workloads`).
std::vector<results::Result> decide_trace(harness::Runner& runner, const replay::Trace& t,
                                          const std::vector<const io::Method*>& methods,
                                          const replay::Settings& replay, const TraceDecisionSettings& settings);

}  // namespace iolab::suites
