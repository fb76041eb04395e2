// The budget's plan and the schedule (schedule.h).
#include "iolab/decision/schedule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "iolab/base/units.h"
#include "iolab/results/statistics.h"

namespace iolab::decision {

namespace {

// The share of what is left that a plan may fill with its conditions'
// planned costs (planned(): at least a first stage, at most kBorrow of one):
// the rest pays for conditions that need more rounds than their row's
// earlier ones did.
constexpr double kPlanShare = 0.85;
// A condition may take up to this many times its share while the
// conditions after it still fit.
constexpr double kBorrow = 2;

// What conditions have cost, per row (its cost class) and over all rows.
struct Costs {
  double setup_s = 0, setup_candidates = 0;   // start(): setup, verification, warm-up, calibration
  double round_s = 0, turns_min_time = 0;     // rounds: seconds, and turns x the min_time they ran at
  std::vector<double> noise;                  // per condition: h2 x the largest S2 of the first stage's survivors
  double noise_median = 0;                    // of `noise`, kept as it grows
  double survivors = 0, conditions = 0;       // survivors after the first stage
  bool known() const { return setup_candidates > 0; }
};

class CostModel {
 public:
  explicit CostModel(const ScheduleSettings& s) : s_(s) {}

  // Seconds of setup per candidate; seconds per turn at min_time m.
  double setup_per_candidate(const Row& row) const {
    const Costs& c = of(row);
    return c.known() ? c.setup_s / c.setup_candidates : 4 * s_.min_time + 0.05;
  }
  double per_turn(const Row& row, double m, bool device_bound) const {
    const Costs& c = of(row);
    const double stretch = c.turns_min_time > 0 ? std::max(1.0, c.round_s / c.turns_min_time) : device_bound ? 2.0 : 1.3;
    return m * stretch;
  }
  // The rounds after the first stage a condition of this row is expected
  // to need at the asked indifference, and the candidates that take them,
  // from the median noise of the row's conditions. (A condition whose own
  // first stage says its allowance cannot pay for them is judged at a
  // wider zone: run_selection.)
  double extra_turns(const Row& row, std::size_t k) const {
    const Costs& c = of(row);
    const double n0 = s_.first_stage;
    if (c.noise.empty()) return n0 * std::min<double>(2, static_cast<double>(k));  // before any: a second stage as long
    const double delta = std::log(s_.guarantee.indifference);
    const double q = c.noise_median;
    const double survivors = c.conditions > 0 ? std::max(1.0, c.survivors / c.conditions) : 2;
    return std::max(0.0, q / (delta * delta) - n0) * (survivors > 1 ? survivors : 0);
  }
  double expected(const ScheduledCondition& sc, double m) const {
    const Row& row = sc.condition.row;
    const double k = static_cast<double>(sc.candidates);
    return k * setup_per_candidate(row) +
           (s_.first_stage * k + extra_turns(row, sc.candidates)) * per_turn(row, m, sc.device_bound);
  }
  // What a condition is planned to cost: its expected cost from its row's
  // noise, but at least its first stage and at most kBorrow times it, so a
  // noisy row is planned for (and given) no more than that.
  double planned(const ScheduledCondition& sc, double m) const {
    const double first = first_stage(sc, m);
    return std::clamp(expected(sc, m), first, kBorrow * first);
  }
  double first_stage(const ScheduledCondition& sc, double m) const {
    const Row& row = sc.condition.row;
    const double k = static_cast<double>(sc.candidates);
    return k * setup_per_candidate(row) + s_.first_stage * k * per_turn(row, m, sc.device_bound);
  }

  void learn(const Row& row, double setup_s, std::size_t k, double round_s, double turns, double m,
             std::optional<double> noise, std::optional<std::size_t> survivors) {
    for (Costs* c : {&all_, &own(row)}) {
      c->setup_s += setup_s;
      c->setup_candidates += static_cast<double>(k);
      if (turns > 0) {
        c->round_s += round_s;
        c->turns_min_time += turns * m;
      }
      if (noise) {
        c->noise.push_back(*noise);
        c->noise_median = results::median(c->noise);
      }
      if (survivors) {
        c->survivors += static_cast<double>(*survivors);
        c->conditions += 1;
      }
    }
  }

 private:
  // A row's costs, else every row's. Found by comparing rows, not their
  // key strings: the plan asks this for every later condition before each one.
  const Costs& of(const Row& row) const {
    for (const auto& [r, c] : by_row_)
      if (r == row) return c.known() ? c : all_;
    return all_;
  }
  Costs& own(const Row& row) {
    for (auto& [r, c] : by_row_)
      if (r == row) return c;
    return by_row_.emplace_back(row, Costs{}).second;
  }
  const ScheduleSettings& s_;
  Costs all_;
  std::vector<std::pair<Row, Costs>> by_row_;
};

// A condition that runs (an unmeasurable one costs nothing).
bool measurable(const ScheduledCondition& sc) { return sc.unmeasurable.empty() && sc.candidates > 0; }

// The sizes of a row in the order they run: the 64x points first, then
// the 16x ones, then the rest, so a plan cut short leaves the grid coarser
// rather than a range unmeasured.
int level(std::uint64_t size) {
  for (std::size_t i = 0; i < std::size(kGrid); ++i)
    if (kGrid[i] == size) return i % 3 == 0 ? 0 : i % 2 == 0 ? 1 : 2;
  return 0;
}

class Scheduler {
 public:
  Scheduler(const ScheduleSettings& s, const std::function<double()>& now)
      : s_(s), now_(now), model_(s), t0_(now()), deadline_(t0_ + s.budget_s) {}

  // Runs `queue`; `later` is the planned cost of conditions still to be
  // planned after it. A condition's share of what is left is in proportion
  // to its planned cost (CostModel::planned: at most twice its first
  // stage), so a noisy row cannot take the budget from the rest. It may
  // borrow up to twice that share while every first stage after it still fits.
  //
  // With `admit`, the conditions run are those whose planned costs the
  // time left pays for, taken in the queue's order (affordable()); the
  // others are not run, each saying so, rather than every condition cut to
  // its first stage and ended by the budget. What the plan said up front
  // is recounted before each condition, so time a condition did not use
  // goes to the next ones the plan left out. The anchors are never left
  // out this way: they are how the plan learns what a round costs.
  void run(std::vector<ScheduledCondition>& queue, double later, bool admit, std::vector<ConditionOutcome>& out) {
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const double left = deadline_ - now_();
      const double m = repetition_time(queue, i, left, later);
      const std::vector<bool> in = admit ? affordable(queue, i, m, left) : std::vector<bool>(queue.size(), true);
      if (!in[i]) {
        out.push_back(left_out(queue, i, m, left, in));
        continue;
      }
      double planned_after = later, mins_after = later / kBorrow;
      for (std::size_t j = i + 1; j < queue.size(); ++j) {
        if (!in[j]) continue;
        planned_after += model_.planned(queue[j], m);
        mins_after += model_.first_stage(queue[j], m);
      }
      const double mine = model_.planned(queue[i], m);
      const double share = mine + planned_after > 0 ? std::max(0.0, left) * mine / (mine + planned_after) : left;
      const double cap = std::max(share, std::min(kBorrow * share, left - mins_after));
      out.push_back(run_one(queue[i], m, cap, left));
    }
  }

  // Of queue[i..], the conditions whose planned costs (CostModel::planned)
  // fit in kPlanShare of `left`, taken in the queue's order (the rest of
  // `left` goes to those that need more than planned): one that does not fit is
  // passed over and the scan goes on, so a cheaper one after it may still
  // run. Conditions that cost nothing (unmeasurable) are always in.
  std::vector<bool> affordable(const std::vector<ScheduledCondition>& queue, std::size_t i, double m, double left) const {
    std::vector<bool> in(queue.size(), false);
    double sum = 0;
    for (std::size_t j = i; j < queue.size(); ++j) {
      if (!measurable(queue[j])) {
        in[j] = true;
        continue;
      }
      const double p = model_.planned(queue[j], m);
      if (sum + p <= kPlanShare * left) {
        sum += p;
        in[j] = true;
      }
    }
    return in;
  }

  // How many of `queue` affordable() takes with `left` seconds, and their planned seconds.
  std::pair<std::size_t, double> affordable_count(const std::vector<ScheduledCondition>& queue, double left) const {
    if (queue.empty()) return {0, 0};
    const double m = repetition_time(queue, 0, left, 0);
    const std::vector<bool> in = affordable(queue, 0, m, left);
    std::size_t n = 0;
    double sum = 0;
    for (std::size_t j = 0; j < queue.size(); ++j)
      if (in[j] && measurable(queue[j])) {
        ++n;
        sum += model_.planned(queue[j], m);
      }
    return {n, sum};
  }

  // Which of `queue` the time left pays for, as the plan's admission takes them.
  std::vector<bool> admitted(const std::vector<ScheduledCondition>& queue) const {
    if (queue.empty()) return {};
    return affordable(queue, 0, repetition_time(queue, 0, left(), 0), left());
  }

  double left() const { return deadline_ - now_(); }
  const CostModel& model() const { return model_; }
  double elapsed() const { return now_() - t0_; }

 private:
  // The repetition time that fits the first stages of what is left, never below the floor.
  double repetition_time(const std::vector<ScheduledCondition>& queue, std::size_t i, double left, double later) const {
    const double top = std::max(0.0, s_.min_time), floor = std::min(s_.min_time_floor, top);
    double setups = 0, turns = 0;
    for (std::size_t j = i; j < queue.size(); ++j) {
      const auto& q = queue[j];
      setups += static_cast<double>(q.candidates) * model_.setup_per_candidate(q.condition.row);
      turns += s_.first_stage * static_cast<double>(q.candidates) * model_.per_turn(q.condition.row, 1.0, q.device_bound);
    }
    if (turns <= 0 || top <= 0) return top;
    return std::clamp((kPlanShare * left - later - setups) / turns, floor, top);  // `later`: first stages too
  }

  // A condition that is not measured (Unmeasurable, or NotRun for the budget): its outcome, told to its `skipped`.
  ConditionOutcome not_measured(ScheduledCondition& sc, double m, Stop stop, std::string why) {
    ConditionOutcome o;
    o.condition = sc.condition;
    o.min_time = m;
    o.start_s = o.end_s = now_() - t0_;
    o.stop = stop;
    o.why = std::move(why);
    if (sc.skipped) sc.skipped(o.why, o.stop);
    return o;
  }

  // A condition affordable() left out: not run, saying what the time left pays for instead.
  ConditionOutcome left_out(std::vector<ScheduledCondition>& queue, std::size_t i, double m, double left,
                            const std::vector<bool>& in) {
    ScheduledCondition& sc = queue[i];
    std::size_t running = 0;
    for (std::size_t j = i + 1; j < in.size(); ++j) running += in[j] && measurable(queue[j]);
    std::string why =
        fmt::format("budget: about {:.0f} s planned for it, {:.0f} s left", model_.planned(sc, m), std::max(0.0, left));
    if (running > 0)
      why += fmt::format(", which pay for the {} condition{} after it in the plan's order", running, running == 1 ? "" : "s");
    ConditionOutcome o = not_measured(sc, m, Stop::NotRun, std::move(why));
    if (s_.progress) s_.progress(fmt::format("{}: not run ({})", sc.condition.key(), o.why));
    return o;
  }

  ConditionOutcome run_one(ScheduledCondition& sc, double m, double cap, double left) {
    if (!measurable(sc))
      return not_measured(sc, m, Stop::Unmeasurable, sc.unmeasurable.empty() ? "no candidate" : sc.unmeasurable);
    const double first = model_.first_stage(sc, m);
    if (first > left)
      return not_measured(sc, m, Stop::NotRun,
                          fmt::format("budget: its first stage of {} rounds needs about {:.0f} s; {:.0f} s of the {:.0f} "
                                      "s budget were left",
                                      s_.first_stage, first, std::max(0.0, left), s_.budget_s));
    ConditionOutcome o;
    o.condition = sc.condition;
    o.min_time = m;
    o.start_s = now_() - t0_;
    std::unique_ptr<ConditionTrial> trial = sc.make(m);
    const SelectionRun run =
        run_selection(*trial, sc.candidates, s_.guarantee, s_.first_stage, s_.max_rounds, cap, deadline_, now_);
    o.indifference = run.selection.guarantee().indifference;
    o.rounds = run.selection.rounds();
    o.stop = run.ending.stop;
    o.why = run.ending.why;
    trial->finish(run.selection, run.ending);
    model_.learn(sc.condition.row, run.start_s, sc.candidates, run.rounds_s, run.turns, m, run.noise, run.survivors);
    o.end_s = now_() - t0_;
    if (s_.progress) {
      s_.progress(fmt::format("{}: {} after {} rounds (indifference {:.2f}, {:.1f} s){}", sc.condition.key(), to_string(o.stop),
                              o.rounds, o.indifference, o.end_s - o.start_s, o.why.empty() ? "" : ": " + o.why));
    }
    return o;
  }

  const ScheduleSettings& s_;
  const std::function<double()>& now_;
  CostModel model_;
  double t0_, deadline_;
};

// After the plan's conditions: the caller's extra ones (ScheduleSettings::extra)
// that are new and the time left pays for, each said in a line.
void run_extra(Scheduler& sched, const std::function<ScheduledCondition(const Condition&)>& make,
               const ScheduleSettings& settings, Schedule& out) {
  if (!settings.extra) return;
  std::vector<ScheduledCondition> asked;
  std::vector<std::string> whys;
  for (auto& x : settings.extra()) {
    const std::string key = x.condition.key();
    auto same = [&](const auto& c) { return c.condition.key() == key; };
    if (std::any_of(out.outcomes.begin(), out.outcomes.end(), same) || std::any_of(asked.begin(), asked.end(), same))
      continue;
    asked.push_back(make(x.condition));
    whys.push_back(std::move(x.why));
  }
  const std::vector<bool> in = sched.admitted(asked);
  std::vector<ScheduledCondition> q;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const bool run = in[i] && measurable(asked[i]);
    std::string line = fmt::format("plan: {}: {} {}, {}", asked[i].condition.row.key(), exact_size(asked[i].condition.size),
                                   run ? "added" : "not added (the time left does not pay for it)", whys[i]);
    if (settings.progress) settings.progress(line);
    out.added.push_back(std::move(line));
    if (run) q.push_back(std::move(asked[i]));
  }
  sched.run(q, 0, true, out.outcomes);
}

}  // namespace

Schedule run_schedule(const std::vector<Row>& rows, const DesignRequest& request,
                      const std::function<ScheduledCondition(const Condition&)>& make, const ScheduleSettings& settings,
                      const std::function<double()>& now) {
  Schedule out;
  Scheduler sched(settings, now);
  auto build = [&](Spacing spacing, bool anchors) {
    // Round-robin over rows, each row's sizes by level: every row is measured at every level before the next.
    std::vector<std::vector<std::uint64_t>> per_row;
    for (const Row& row : rows) {
      std::vector<std::uint64_t> s;
      for (std::uint64_t size : sizes(row, spacing, request))
        if (request.sizes.empty() ? (size == kAnchorSize) == anchors : !anchors) s.push_back(size);
      std::stable_sort(s.begin(), s.end(), [](auto a, auto b) { return level(a) < level(b); });
      per_row.push_back(std::move(s));
    }
    std::vector<ScheduledCondition> q;
    for (std::size_t turn = 0;; ++turn) {
      bool any = false;
      for (std::size_t r = 0; r < rows.size(); ++r)
        if (turn < per_row[r].size()) {
          any = true;
          q.push_back(make(Condition{rows[r], per_row[r][turn]}));
        }
      if (!any) break;
    }
    return q;
  };
  if (!request.sizes.empty()) {
    std::vector<ScheduledCondition> q = build(Spacing::Every4x, false);
    out.plan.conditions = q.size();
    out.plan.text = fmt::format("plan: {} condition{} at the sizes asked", q.size(), q.size() == 1 ? "" : "s");
    if (settings.progress) settings.progress(out.plan.text);
    sched.run(q, 0, true, out.outcomes);
    run_extra(sched, make, settings, out);
    return out;
  }
  // First every row at its anchor, costed as if the coarsest plan followed.
  std::vector<ScheduledCondition> anchors = build(Spacing::Every4x, true);
  std::vector<ScheduledCondition> coarsest = build(Spacing::Every64x, false);
  double later = 0;
  for (const auto& c : coarsest) later += sched.model().planned(c, settings.min_time);
  sched.run(anchors, later, false, out.outcomes);
  // Then the finest spacing whose conditions' planned costs fit in what is left.
  std::vector<ScheduledCondition> rest;
  double planned = 0;
  for (Spacing spacing : {Spacing::Every4x, Spacing::Every16x, Spacing::Every64x}) {
    rest = build(spacing, false);
    planned = 0;
    for (const auto& c : rest) planned += sched.model().planned(c, settings.min_time);
    out.plan.spacing = spacing;
    if (planned <= kPlanShare * sched.left()) break;
  }
  out.plan.conditions = anchors.size() + rest.size();
  out.plan.expected_s = planned;
  out.plan.text = fmt::format(
      "plan: sizes {} from 8 B to 8 MiB, {} conditions ({} measured first at {} to learn this machine's costs, in {:.0f} "
      "s); the other {} planned at about {:.0f} s of the {:.0f} s left",
      to_string(*out.plan.spacing), out.plan.conditions, anchors.size(), exact_size(kAnchorSize), sched.elapsed(),
      rest.size(), planned, std::max(0.0, sched.left()));
  std::size_t runnable = 0;
  for (const auto& c : rest) runnable += measurable(c);
  if (const auto [fit, fit_s] = sched.affordable_count(rest, sched.left()); fit < runnable) {
    out.plan.expected_s = fit_s;
    out.plan.text += fmt::format(
        ": {} of the {} measurable fit (about {:.0f} s), taken in the plan's order; the other {} are not run, each "
        "saying so",
        fit, runnable, fit_s, runnable - fit);
  }
  if (settings.progress) settings.progress(out.plan.text);
  sched.run(rest, 0, true, out.outcomes);
  run_extra(sched, make, settings, out);
  return out;
}

}  // namespace iolab::decision
