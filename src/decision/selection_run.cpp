// One workload's selection run to its end on the schedule's clock (schedule.h).
#include <algorithm>

#include <fmt/format.h>

#include "iolab/decision/schedule.h"

namespace iolab::decision {

// One workload's selection to its end (schedule.h).
SelectionRun run_selection(ConditionTrial& trial, std::size_t candidates, Guarantee guarantee, unsigned first_stage,
                           unsigned max_rounds, double allowance_s, double deadline, const std::function<double()>& now) {
  const double s0 = now();
  const std::vector<std::string> cannot = trial.start();
  const double s1 = now();
  SelectionRun run{Selection(candidates, guarantee, first_stage), {}, s1 - s0, 0, 0, std::nullopt, std::nullopt};
  Selection& sel = run.selection;
  for (std::size_t i = 0; i < cannot.size() && i < candidates; ++i)
    if (!cannot[i].empty()) sel.withdraw(i);
  // The hard bound: a repetition starts only if the longest one so far still fits.
  double last = s1, longest = 0;
  auto more = [&] {
    const double t = now();
    longest = std::max(longest, t - last);
    last = t;
    return t + longest <= deadline;
  };
  // After the first stage: the asked indifference if the allowance left
  // pays for the rounds KN's bound gives its survivors there, else the
  // least wider one that it pays for, up to the widest (selection.h says
  // why a zone chosen from the first stage's variances keeps the guarantee).
  sel.choose_zone_after_first_stage([&](const Selection& s) {
    const double widest = std::max(guarantee.indifference, kWidestIndifference);
    const double t = now();
    const double per_turn = run.turns > 0 ? (t - s1) / run.turns : 0;
    const double left = std::min(allowance_s - (t - s0), deadline - t);
    const std::vector<std::size_t> in = s.survivors();
    for (int step = 0;; ++step) {
      const double g = guarantee.indifference + step * kIndifferenceStep;
      if (g >= widest - 1e-9) return widest;
      double turns = 0;
      for (std::size_t i : in) turns += s.rounds_bound(i, g) - s.rounds();
      if (turns * per_turn <= left) return g;
    }
  });
  std::string budget_why;
  std::vector<std::size_t> first_survivors;
  while (!sel.done()) {
    std::vector<bool> in_play(candidates);
    std::size_t playing = 0;
    for (std::size_t i = 0; i < candidates; ++i) playing += (in_play[i] = sel.in_play(i));
    if (sel.rounds() >= first_stage) {
      const double per_round = (now() - s1) / std::max(1.0, run.turns) * static_cast<double>(playing);
      if (sel.rounds() >= max_rounds) budget_why = fmt::format("{} rounds, the most a condition takes", max_rounds);
      else if (now() - s0 + per_round > allowance_s)
        budget_why = fmt::format("its allowance of {:.0f} s", allowance_s);
      if (!budget_why.empty()) {
        sel.stop_for_budget();
        break;
      }
    }
    last = now();
    ConditionTrial::Round r = trial.round(in_play, more);
    if (!r.complete) {
      budget_why = "the run's budget";
      sel.stop_for_budget();
      break;
    }
    run.turns += static_cast<double>(playing);
    for (std::size_t i = 0; i < candidates && i < r.untrusted.size(); ++i)
      if (r.untrusted[i] && in_play[i]) sel.withdraw(i);
    sel.add_round(r.rates);
    if (sel.rounds() == first_stage) {
      first_survivors = sel.survivors();
      run.survivors = first_survivors.size();
    }
  }
  if (run.survivors) {
    // What the row's next conditions plan their indifference by: the
    // first stage's survivors' pairs, each over every round both ran (the
    // selection's own estimate, not the first stage's alone).
    const auto& s = first_survivors;
    double most = 0;
    for (std::size_t a = 0; a < s.size(); ++a)
      for (std::size_t b = a + 1; b < s.size(); ++b) most = std::max(most, sel.h2() * sel.pair_variance(s[a], s[b]));
    run.noise = most;
  }
  // The chooser refers to this call's locals; the selection returned must not keep it.
  sel.choose_zone_after_first_stage(nullptr);
  run.rounds_s = now() - s1;
  run.ending.stop = sel.stop() == Selection::Stop::Budget        ? Stop::Budget
                    : sel.stop() == Selection::Stop::NoCandidate ? Stop::NoCandidate
                                                                 : Stop::Selected;
  run.ending.why = budget_why;
  return run;
}

}  // namespace iolab::decision
