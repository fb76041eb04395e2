// The budget's plan and schedule (schedule.h) on a fake clock: the spacing
// it picks from what the anchors cost, conditions it cannot pay for, the
// allowance that stops a condition and says so, the indifference it widens
// for a condition whose rounds it cannot pay, and unmeasurable conditions.
#include "iolab/decision/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "decision/synthetic_trial.h"

namespace iolab::decision {
namespace {

using testing::Outcome;
using testing::SyntheticTrial;
using testing::World;

struct Fixture {
  double clock = 0;
  World clear{"clear", {std::log(2.0), 0, 0, 0}, 0.02};
  std::map<std::string, World> worlds;  // by row key; `clear` otherwise
  std::map<std::string, Outcome> outcomes;
  std::vector<std::pair<std::string, Stop>> skipped;  // key, stop
  std::vector<std::string> lines;
  double turn_s = 0.1, setup_s = 0.2;
  std::set<std::string> unmeasurable;  // condition keys

  Schedule run(const std::vector<Row>& rows, ScheduleSettings s, DesignRequest request = {}) {
    s.progress = [this](const std::string& l) { lines.push_back(l); };
    auto make = [&](const Condition& c) {
      ScheduledCondition sc;
      sc.condition = c;
      auto w = worlds.find(c.row.key());
      const World& world = w == worlds.end() ? clear : w->second;
      sc.candidates = world.mu.size();
      if (unmeasurable.count(c.key())) {
        sc.unmeasurable = "cannot here";
        sc.candidates = 0;
      }
      const std::string key = c.key();
      sc.make = [this, &world, key](double) -> std::unique_ptr<ConditionTrial> {
        return std::make_unique<SyntheticTrial>(world, std::hash<std::string>{}(key), clock, outcomes[key], turn_s, setup_s);
      };
      sc.skipped = [this, key](const std::string&, Stop stop) { skipped.emplace_back(key, stop); };
      return sc;
    };
    return run_schedule(rows, request, make, s, [this] { return clock; });
  }
};

const Row kWarm{results::Op::Read, "none", Column::Warm}, kCold{results::Op::Read, "none", Column::Cold};

TEST(Schedule, ACheapMachineGetsEverySizeEvery4x) {
  Fixture f;
  ScheduleSettings s;
  s.budget_s = 1000;
  Schedule out = f.run({kWarm, kCold}, s);
  ASSERT_TRUE(out.plan.spacing);
  EXPECT_EQ(*out.plan.spacing, Spacing::Every4x);
  EXPECT_EQ(out.outcomes.size(), 22u);
  for (const auto& o : out.outcomes) EXPECT_EQ(o.stop, Stop::Selected) << o.condition.key();
  // The anchors first, each row once, then the rest; the plan said so in a line.
  EXPECT_EQ(out.outcomes[0].condition.size, kAnchorSize);
  EXPECT_EQ(out.outcomes[1].condition.size, kAnchorSize);
  ASSERT_FALSE(f.lines.empty());
  bool said = false;
  for (const auto& l : f.lines) said = said || (l.starts_with("plan: sizes every 4x") && l.find("22 conditions") != std::string::npos);
  EXPECT_TRUE(said);
  Fixture g;
  DesignRequest asked;
  asked.sizes = {700};
  g.run({kWarm}, ScheduleSettings{}, asked);
  said = false;
  for (const auto& l : g.lines) said = said || l == "plan: 1 condition at the sizes asked";
  EXPECT_TRUE(said);
}

TEST(Schedule, ASlowerMachineGetsCoarserSizesSaidUpFront) {
  Fixture f;
  f.turn_s = 1.0;  // ten times the cost of a turn: a condition's first stage takes ~25 s
  ScheduleSettings s;
  s.budget_s = 300;
  Schedule out = f.run({kWarm, kCold}, s);
  ASSERT_TRUE(out.plan.spacing);
  EXPECT_NE(*out.plan.spacing, Spacing::Every4x);
  EXPECT_LT(out.outcomes.size(), 22u);
  std::size_t selected = 0;
  for (const auto& o : out.outcomes) selected += o.stop == Stop::Selected;
  EXPECT_EQ(selected, out.outcomes.size()) << "coarser sizes, each ended by the rule";
  EXPECT_LE(f.clock, s.budget_s);
}

TEST(Schedule, WhatTheBudgetCannotPayForIsNotRunAndSaysWhy) {
  Fixture f;
  f.turn_s = 5.0;
  ScheduleSettings s;
  s.budget_s = 300;
  Schedule out = f.run({kWarm, kCold}, s);
  std::size_t not_run = 0;
  for (const auto& o : out.outcomes)
    if (o.stop == Stop::NotRun) {
      ++not_run;
      EXPECT_TRUE(o.why.starts_with("budget: its first stage") || o.why.starts_with("budget: about ")) << o.why;
    }
  EXPECT_GT(not_run, 0u);
  EXPECT_EQ(f.skipped.size(), not_run);
  EXPECT_LE(f.clock, s.budget_s + 5 * f.turn_s) << "a repetition starts only if it fits";
}

// Where even the coarsest sizes do not fit, the conditions run are those the
// time left pays for at their planned costs, and they end by the rule; the
// rest are not run, the plan saying how many up front and each why, instead
// of every condition cut to its first stage and ended by the budget.
TEST(Schedule, WhereTheCoarsestSizesDoNotFitFewerConditionsRunAndEndByTheRule) {
  Fixture f;
  f.turn_s = 1.0;
  // Two near candidates: a condition needs rounds past its first stage.
  World near{"near", {0, -0.08}, 0.05};
  const Row rows[] = {kWarm, kCold, Row{results::Op::Write, "none", Column::Buffered},
                      Row{results::Op::Write, "end", Column::Buffered}};
  for (const Row& r : rows) f.worlds[r.key()] = near;
  ScheduleSettings s;
  s.budget_s = 150;  // the anchors take about 50 s; the 12 conditions after them about 15 s each
  Schedule out = f.run({std::begin(rows), std::end(rows)}, s);
  ASSERT_TRUE(out.plan.spacing);
  EXPECT_EQ(*out.plan.spacing, Spacing::Every64x);
  std::size_t run = 0, by_rule = 0, left_out = 0;
  for (const auto& o : out.outcomes) {
    if (o.stop == Stop::NotRun) {
      ++left_out;
      EXPECT_TRUE(o.why.starts_with("budget: about ") && o.why.find(" s planned for it, ") != std::string::npos) << o.why;
      continue;
    }
    ++run;
    by_rule += o.stop == Stop::Selected;
  }
  EXPECT_GT(left_out, 0u);
  EXPECT_EQ(by_rule, run) << "every condition run ends by the rule";
  EXPECT_GE(run, 4u) << "the anchors at least";
  bool said = false;
  for (const auto& l : f.lines)
    said = said || (l.starts_with("plan: sizes every 64x") && l.find("measurable fit") != std::string::npos &&
                    l.find("are not run, each saying so") != std::string::npos);
  std::string all;
  for (const auto& l : f.lines) all += l + "\n";
  for (const auto& o : out.outcomes) all += o.condition.key() + " " + std::string(to_string(o.stop)) + " " + o.why + "\n";
  EXPECT_TRUE(said) << all;
  EXPECT_LE(f.clock, s.budget_s + 2 * f.turn_s);
}

TEST(Schedule, UnmeasurableConditionsCostNothing) {
  Fixture f;
  DesignRequest request;
  request.sizes = {700, 4096};
  f.unmeasurable = {Condition{kWarm, 700}.key()};
  Schedule out = f.run({kWarm}, ScheduleSettings{}, request);
  ASSERT_EQ(out.outcomes.size(), 2u);
  EXPECT_EQ(out.outcomes[0].stop, Stop::Unmeasurable);
  EXPECT_EQ(out.outcomes[0].why, "cannot here");
  EXPECT_EQ(out.outcomes[0].end_s, out.outcomes[0].start_s);
  EXPECT_EQ(f.skipped.at(0).second, Stop::Unmeasurable);
  EXPECT_EQ(f.outcomes.count(Condition{kWarm, 700}.key()), 0u) << "its trial was never made";
  EXPECT_EQ(out.outcomes[1].stop, Stop::Selected);
}

TEST(Schedule, AnAllowanceEndsANoisyTieAndSaysWhatRanOut) {
  Fixture f;
  f.worlds[kWarm.key()] = World{"noisy tie", {0, -0.6 * std::log(1.05)}, 1.0};
  DesignRequest request;
  request.sizes = {4096, 65536};
  ScheduleSettings s;
  s.budget_s = 30;
  Schedule out = f.run({kWarm}, s, request);
  ASSERT_EQ(out.outcomes.size(), 2u);
  EXPECT_EQ(out.outcomes[0].stop, Stop::Budget);
  EXPECT_NE(out.outcomes[0].why.find("allowance"), std::string::npos) << out.outcomes[0].why;
  EXPECT_EQ(f.outcomes[out.outcomes[0].condition.key()].why, out.outcomes[0].why);
}

TEST(Schedule, AConditionWhoseRoundsItsAllowanceCannotPayGetsAWiderIndifferenceStated) {
  Fixture f;
  // Three near-equal candidates with noise enough that a 5% zone needs many rounds.
  f.worlds[kWarm.key()] = World{"noisy", {0, -0.01, -0.02}, 0.2};
  DesignRequest request;
  request.sizes = {512, 4096, 32768, 262144};
  ScheduleSettings s;
  s.budget_s = 120;
  Schedule out = f.run({kWarm}, s, request);
  // Each is judged wider than asked (its first stage says so), within 1.10, and says at which.
  for (const auto& o : out.outcomes) {
    ASSERT_TRUE(o.stop == Stop::Selected || o.stop == Stop::Budget) << o.condition.key();
    EXPECT_GT(o.indifference, 1.05) << o.condition.key();
    EXPECT_LE(o.indifference, kWidestIndifference + 1e-9);
    EXPECT_DOUBLE_EQ(f.outcomes[o.condition.key()].indifference, o.indifference) << "the selection judged at it";
  }
}

// A quiet condition keeps the asked zone: widening is for the allowance, not a habit.
TEST(Schedule, AConditionItsAllowancePaysForKeepsTheAskedIndifference) {
  Fixture f;
  f.worlds[kWarm.key()] = World{"quiet", {0, -0.01, -0.02}, 0.01};
  DesignRequest request;
  request.sizes = {512, 4096};
  ScheduleSettings s;
  s.budget_s = 120;
  Schedule out = f.run({kWarm}, s, request);
  for (const auto& o : out.outcomes) {
    EXPECT_EQ(o.stop, Stop::Selected) << o.condition.key();
    EXPECT_DOUBLE_EQ(o.indifference, 1.05) << o.condition.key();
  }
}

TEST(Schedule, TheRunsDeadlineCutsARoundAndSaysSo) {
  Fixture f;
  f.worlds[kWarm.key()] = World{"noisy tie", {0, -0.01}, 0.5};
  DesignRequest request;
  request.sizes = {4096};
  ScheduleSettings s;
  s.budget_s = 5;
  Schedule out = f.run({kWarm}, s, request);
  ASSERT_EQ(out.outcomes.size(), 1u);
  EXPECT_EQ(out.outcomes[0].stop, Stop::Budget);
  EXPECT_LE(f.clock, s.budget_s + 2 * f.turn_s);
}

// The caller's extra conditions (`recommend`: where its model puts two
// picks' crossing) run after the plan's, on the time left only: with time
// to spare the added condition is measured and said; without it, it is not
// run, not recorded, and the line says so. One already measured is not asked twice.
TEST(Schedule, AnExtraConditionRunsOnlyOnTheTimeLeftAfterThePlans) {
  DesignRequest request;
  request.sizes = {512, 32768};
  auto settings = [](double budget) {
    ScheduleSettings s;
    s.budget_s = budget;
    s.extra = [] {
      return std::vector<ExtraCondition>{{Condition{kWarm, 2048}, "where the model puts a/b crossing (1.8 KiB..2.5 KiB)"},
                                         {Condition{kWarm, 512}, "already measured"}};
    };
    return s;
  };
  Fixture roomy;
  Schedule out = roomy.run({kWarm}, settings(1000), request);
  ASSERT_EQ(out.outcomes.size(), 3u);
  EXPECT_EQ(out.outcomes[0].condition.size, 512u);
  EXPECT_EQ(out.outcomes[1].condition.size, 32768u);
  EXPECT_EQ(out.outcomes[2].condition.size, 2048u) << "after every condition of the plan";
  EXPECT_EQ(out.outcomes[2].stop, Stop::Selected);
  ASSERT_EQ(out.added.size(), 1u);
  EXPECT_EQ(out.added[0], "plan: read|none|warm: 2 KiB added, where the model puts a/b crossing (1.8 KiB..2.5 KiB)");
  EXPECT_NE(std::find(roomy.lines.begin(), roomy.lines.end(), out.added[0]), roomy.lines.end());

  // A budget that pays for the plan's two conditions and not a third.
  Fixture tight;
  Schedule cut = tight.run({kWarm}, settings(9), request);
  ASSERT_EQ(cut.outcomes.size(), 2u) << "the added condition is not run, nor recorded as not run";
  for (const auto& o : cut.outcomes) EXPECT_EQ(o.stop, Stop::Selected) << o.condition.key();
  EXPECT_TRUE(tight.skipped.empty());
  EXPECT_EQ(tight.outcomes.count(Condition{kWarm, 2048}.key()), 0u) << "its trial was never made";
  ASSERT_EQ(cut.added.size(), 1u);
  EXPECT_NE(cut.added[0].find("2 KiB not added (the time left does not pay for it)"), std::string::npos) << cut.added[0];
}

}  // namespace
}  // namespace iolab::decision
