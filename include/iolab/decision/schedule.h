// The budget's plan and the schedule that runs it: which conditions are
// measured, in what order, how long each may take, and at which
// indifference, within one wall-clock budget.
//
// The plan is made from what a round costs on this machine: the first
// conditions measured are every row's at kAnchorSize, and from what they
// cost (setup per candidate, seconds per repetition, rounds their pairs
// needed) the plan picks the finest spacing of sizes whose conditions fit
// in what is left, and says so before measuring them ("every 16x: 54
// conditions, about 430 s"). A slower machine gets coarser sizes, not every
// condition stopped at its first stage; where even the coarsest sizes do not
// fit, the conditions run are those whose planned costs the time left pays
// for, in the plan's order (each row's coarsest sizes first), and the others
// are not run, the plan's line saying how many and each condition why.
//
// Each condition runs its selection (selection.h) round by round until the
// rule ends it, or its allowance does: its share of what is left in
// proportion to its expected cost, up to twice that while the conditions
// after it still fit. Its indifference is the asked one unless its own
// first stage says the allowance cannot pay for the rounds KN's bound gives
// its survivors there; then it is widened, up to kWidestIndifference, from
// the first stage's variances alone (selection.h says why that keeps the
// guarantee) and said in its outcome.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/decision/design.h"
#include "iolab/decision/selection.h"
#include "iolab/decision/stop.h"

namespace iolab::decision {

// One condition's measurement, as the schedule drives it. The real one runs
// harness::Rounds (suites/decision_run.cpp); tests drive synthetic ones on
// a fake clock.
class ConditionTrial {
 public:
  virtual ~ConditionTrial() = default;
  // Setup, verification, warm-up and calibration of every candidate. Per
  // candidate: why it cannot run here, or "" when it runs.
  virtual std::vector<std::string> start() = 0;
  struct Round {
    bool complete = false;      // false: cut short by `more` (its repetitions are not judged)
    std::vector<double> rates;  // per candidate in play (bytes or operations per second)
    // Per candidate: why its figures cannot be trusted from this round on
    // (trust.h), or nullopt.
    std::vector<std::optional<std::string>> untrusted;
  };
  // One round of the candidates in play, interleaved; `more` is asked
  // before each repetition and a false cuts the round there.
  virtual Round round(const std::vector<bool>& in_play, const std::function<bool()>& more) = 0;
  // How a condition ended (Selected, Budget or NoCandidate), and for Budget
  // what ran out ("its allowance of 41 s", "the run's budget", "400 rounds").
  struct Ending {
    Stop stop = Stop::Selected;
    std::string why;
  };
  // The condition ended: make its records (what the selection decided is
  // in `selection`).
  virtual void finish(const Selection& selection, const Ending& ending) = 0;
};

// How one workload's selection ran (run_selection).
struct SelectionRun {
  Selection selection;
  ConditionTrial::Ending ending;
  double start_s = 0;   // the trial's start(): setup, verification, warm-up, calibration
  double rounds_s = 0;  // its rounds
  double turns = 0;     // repetitions run
  std::optional<double> noise;             // h2 x the largest S2 of the first stage's survivors
  std::optional<std::size_t> survivors;    // after the first stage
};

// Runs `trial`'s selection to its end: start(), then a round at a time,
// each judged (a candidate untrusted from a round withdrawn before its rates
// count), until the rule stops it (Selected, NoCandidate), `max_rounds`
// rounds, the next round would pass `allowance_s` seconds from the start,
// or a repetition would pass `deadline` (Budget, with what ran out). After
// the first stage the indifference is `guarantee`'s, or the least wider one
// (in steps of kIndifferenceStep, up to kWidestIndifference) whose KN
// rounds the allowance left pays for: the selection's guarantee() says
// which. The schedule runs every condition of the design through it; `recommend
// --trace` runs one replayed trace.
SelectionRun run_selection(ConditionTrial& trial, std::size_t candidates, Guarantee guarantee, unsigned first_stage,
                           unsigned max_rounds, double allowance_s, double deadline, const std::function<double()>& now);

// A condition as the schedule sees it.
struct ScheduledCondition {
  Condition condition;
  std::size_t candidates = 0;
  bool device_bound = false;
  std::string unmeasurable;  // why it cannot be measured here (then it costs nothing and is not run)
  // Its trial, repetitions lasting at least `min_time` seconds.
  std::function<std::unique_ptr<ConditionTrial>(double min_time)> make;
  // It was not run: why, and the stop (Unmeasurable, or NotRun when the
  // budget could not pay for its first stage).
  std::function<void(const std::string& why, Stop stop)> skipped;
};

// A condition the caller asks to add once the plan's have run, and why
// (`recommend`: where its cost model puts two picks' crossing).
struct ExtraCondition {
  Condition condition;
  std::string why;  // "where the model puts mmap/pread crossing (1.8 KiB..2.5 KiB)"
};

struct ScheduleSettings {
  double budget_s = 570;  // the whole decision's wall time, a hard bound
  Guarantee guarantee;
  unsigned first_stage = kFirstStage;
  unsigned max_rounds = 400;  // a condition stops (Budget) there whatever its allowance
  // Seconds a repetition lasts at least: the plan may shorten it to the
  // floor (above the 50 ms a figure needs) when the first stages would not fit.
  double min_time = 0.075, min_time_floor = 0.065;
  std::function<void(const std::string& line)> progress;  // one line per condition and one for the plan
  // Asked once, after the plan's conditions ran: more conditions to
  // measure. Only those the time left pays for (the plan's admission) are
  // run, after every condition of the plan, so none ends another early;
  // one already run, or the time left does not pay for, is not run and not
  // recorded. Each added one is said in a "plan: ... added" line.
  std::function<std::vector<ExtraCondition>()> extra;
};

// How each condition ended.
struct ConditionOutcome {
  Condition condition;
  Stop stop = Stop::NotRun;
  std::string why;         // not run, unmeasurable, budget: why
  unsigned rounds = 0;
  double indifference = 0; // the one it was judged at
  double min_time = 0;
  double start_s = 0, end_s = 0;  // on the schedule's clock
};

// What the plan chose, said before the conditions after the anchors run.
struct Plan {
  std::optional<Spacing> spacing;  // nullopt: the user named the sizes
  std::size_t conditions = 0;      // planned, anchors included
  double expected_s = 0;           // what the plan expected them to take
  std::string text;                // one line
};

struct Schedule {
  Plan plan;
  std::vector<std::string> added;  // the lines of ScheduleSettings::extra's conditions: run, or why not
  std::vector<ConditionOutcome> outcomes;  // in the order run (not-run ones where they would have run)
};

// Runs the design: `rows` x their sizes (design.h's sizes(), thinned by
// the plan unless the request names the sizes), each through `make`'s
// ScheduledCondition. `now` is seconds on any clock.
Schedule run_schedule(const std::vector<Row>& rows, const DesignRequest& request,
                      const std::function<ScheduledCondition(const Condition&)>& make, const ScheduleSettings& settings,
                      const std::function<double()>& now);

}  // namespace iolab::decision
