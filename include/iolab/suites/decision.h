// The decision's measurement (`iolab recommend`): every condition of the
// design (decision/design.h) measured in interleaved rounds on this
// machine, within the budget's schedule (decision/schedule.h), each
// condition's candidates judged after every round by the selection
// (decision/selection.h) through the one trust filter (decision/trust.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "iolab/decision/design.h"
#include "iolab/decision/schedule.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"

namespace iolab::suites {

struct DecisionRun {
  decision::Schedule schedule;
  // One record per candidate per measured condition, and one per condition
  // that was not (unmeasurable, or the budget could not pay for it), in
  // the order the conditions ran. Records carry the decision/verdict.h keys,
  // the round fields of harness::Rounds::finish, and the past-memory
  // columns' memory fields; decision_from_records replays them.
  std::vector<results::Result> records;
};

// `seed` orders the rounds (recorded in every record, with the condition's place).
// `extra`, once the plan's conditions ran, is given their records and names
// more conditions to measure on the time left (ScheduleSettings::extra).
using ExtraConditions = std::function<std::vector<decision::ExtraCondition>(const std::vector<results::Result>& records)>;
DecisionRun run_decision(harness::Runner& runner, const decision::DesignRequest& request,
                         const decision::ScheduleSettings& settings, std::uint64_t seed,
                         const ExtraConditions& extra = {});

}  // namespace iolab::suites
