// The decision table's budget (schedule_decision) on synthetic cells and a
// fake clock: every repetition advances the clock by a known cost and draws
// seeded rates, so the outcomes are the same every run and nothing sleeps.
// The budget is a hard bound (never over by more than one repetition); the
// plan shortens repetitions before it leaves cells out, and those say "not
// run: budget"; the stopping rules: a clear difference decides in the first
// rounds, equal distributions end as a tie, overlapping noisy ones end
// undecided when the budget is spent; time left over goes to undecided cells.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "iolab/suites/decision.h"

namespace iolab::suites {
namespace {

struct BudgetClock {
  double t = 1000;  // any origin
};

// A cell of `means.size()` candidates at two conditions; a repetition costs
// `stretch` x min_time (+ `grow` more after every repetition: a machine that
// slows down), its rate a seeded draw of mean x (1 + noise x N(0,1)).
struct Synthetic {
  std::vector<double> means;
  double noise = 0.02;
  double setup = 0.5;  // seconds of setup per repetition slot
  double stretch = 1.2, grow = 0;
};

class SyntheticTrial final : public CellTrial {
 public:
  SyntheticTrial(BudgetClock& clock, const Synthetic& s, double min_time, std::uint64_t seed, double& longest_rep)
      : clock_(clock), s_(s), min_time_(min_time), rng_(seed), longest_(longest_rep),
        rates_(2, std::vector<std::vector<double>>(s.means.size())) {}
  void start() override { clock_.t += s_.setup * static_cast<double>(2 * s_.means.size()); }
  bool round(const std::function<bool()>& more) override {
    std::normal_distribution<double> z(0, 1);
    for (auto& condition : rates_)
      for (std::size_t c = 0; c < s_.means.size(); ++c) {
        if (!more()) return false;
        const double cost = s_.stretch * min_time_ + s_.grow * static_cast<double>(reps_++);
        longest_ = std::max(longest_, cost);
        clock_.t += cost;
        condition[c].push_back(s_.means[c] * (1 + s_.noise * z(rng_)));
      }
    return true;
  }
  harness::Verdict judge() override {
    std::vector<std::string> names;
    for (std::size_t c = 0; c < s_.means.size(); ++c) names.push_back(std::to_string(c));  // not "m" + ...: GCC 12 -Wrestrict
    return harness::decide(rates_, names, {"a", "b"});
  }
  void finish(const std::string&) override { clock_.t += 0.01; }

 private:
  BudgetClock& clock_;
  Synthetic s_;
  double min_time_;
  std::mt19937_64 rng_;
  double& longest_;
  std::vector<std::vector<std::vector<double>>> rates_;
  unsigned reps_ = 0;
};

struct BudgetTable {
  BudgetClock clock;
  double longest = 0;  // the longest repetition any trial ran
  std::vector<std::string> not_run;
  std::vector<ScheduledCell> cells;
  void add(const Synthetic& s, std::string cost_class = "") {
    ScheduledCell c;
    c.turns = 2 * s.means.size();
    c.cost_class = std::move(cost_class);
    const std::uint64_t seed = 77 + cells.size();
    c.make = [this, s, seed](double min_time) { return std::make_unique<SyntheticTrial>(clock, s, min_time, seed, longest); };
    c.not_run = [this](const std::string& why) { not_run.push_back(why); };
    cells.push_back(std::move(c));
  }
  std::vector<CellOutcome> run(const DecisionSettings& s) {
    const double t0 = clock.t;
    auto out = schedule_decision(cells, s, [this] { return clock.t; });
    elapsed = clock.t - t0;
    return out;
  }
  double elapsed = 0;
};

DecisionSettings budget_settings(double budget) {
  DecisionSettings s;
  s.budget_s = budget;
  s.min_time = 0.07;
  s.min_time_floor = 0.055;
  s.min_rounds = 6;
  s.max_rounds = 1000;  // only the budget stops a noisy cell
  return s;
}

TEST(DecisionBudget, NeverExceededByMoreThanOneRepetitionAndCellsLeftOutSaySo) {
  for (double budget : {30.0, 120.0, 400.0}) {
    BudgetTable t;
    // 40 cells of 9 candidates, overlapping and noisy: none decides, all want every second.
    for (int i = 0; i < 40; ++i) t.add({{100, 101, 102, 99, 100, 103, 98, 100, 101}, 0.2});
    auto out = t.run(budget_settings(budget));
    EXPECT_LE(t.elapsed, budget + t.longest + 0.01) << budget;
    ASSERT_FALSE(t.not_run.empty()) << budget;  // 40 x 18 slots x 5 rounds cannot fit
    std::size_t not_run = 0;
    for (const auto& o : out) {
      if (o.stop == "not run: budget") {
        ++not_run;
        continue;
      }
      EXPECT_EQ(o.kind, harness::Verdict::Kind::Undecided);
      EXPECT_DOUBLE_EQ(o.min_time, 0.055) << "shortened to the floor before cells were left out";
    }
    EXPECT_EQ(not_run, t.not_run.size());
    EXPECT_NE(t.not_run.front().find("not run: budget"), std::string::npos) << t.not_run.front();
  }
}

TEST(DecisionBudget, AMachineThatSlowsDownStillEndsWithinTheBudget) {
  BudgetTable t;
  Synthetic s{{100, 100.5, 99.5}, 0.2};
  s.grow = 0.004;  // each repetition 4 ms longer than the last
  for (int i = 0; i < 10; ++i) t.add(s);
  t.run(budget_settings(60));
  EXPECT_LE(t.elapsed, 60 + t.longest + 0.01);
}

TEST(DecisionBudget, ShorterRepetitionsBeforeAnyCellIsLeftOut) {
  BudgetTable t;
  for (int i = 0; i < 4; ++i) t.add({{100, 101, 99}, 0.2, 0.2});
  // 4 cells x 6 slots x (0.2 s setup + 6 x 1.2 x m): 16.9 s at 0.07, 14.3 s at 0.055; 85% of 18 s is 15.3.
  auto out = t.run(budget_settings(18));
  EXPECT_TRUE(t.not_run.empty());
  for (const auto& o : out) {
    EXPECT_GE(o.rounds, 6u);
    EXPECT_GE(o.min_time, 0.055);
  }
  EXPECT_LT(out[0].min_time, 0.07);
  EXPECT_LE(t.elapsed, 18 + t.longest + 0.01);
}

TEST(DecisionBudget, AClearDifferenceDecidesInTheFirstRounds) {
  BudgetTable t;
  t.add({{100, 200, 120}, 0.03});
  auto out = t.run(budget_settings(600));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].stop, "decided");
  EXPECT_EQ(out[0].kind, harness::Verdict::Kind::Winner);
  EXPECT_EQ(out[0].rounds, 6u);
}

TEST(DecisionBudget, EqualDistributionsEndAsATie) {
  BudgetTable t;
  t.add({{100, 100, 50}, 0.01});
  auto out = t.run(budget_settings(600));
  EXPECT_EQ(out[0].stop, "decided");
  EXPECT_EQ(out[0].kind, harness::Verdict::Kind::Tie);
  EXPECT_GE(out[0].rounds, 6u);
}

TEST(DecisionBudget, OverlappingNoisyOnesEndUndecidedAtTheBudget) {
  BudgetTable t;
  t.add({{100, 100}, 0.3});
  auto out = t.run(budget_settings(20));
  EXPECT_EQ(out[0].stop, "budget");
  EXPECT_EQ(out[0].kind, harness::Verdict::Kind::Undecided);
  EXPECT_GT(out[0].rounds, 6u) << "the time left over buys rounds beyond the minimum";
  EXPECT_LE(t.elapsed, 20 + t.longest + 0.01);
  // With a round limit instead, it stops there.
  BudgetTable u;
  u.add({{100, 100}, 0.3});
  DecisionSettings s = budget_settings(600);
  s.max_rounds = 12;
  auto capped = u.run(s);
  EXPECT_EQ(capped[0].stop, "max_rounds");
  EXPECT_EQ(capped[0].rounds, 12u);
}

// Two candidates 5% apart: their ratio sits on the margin, so no number of
// rounds makes its interval clear it. Two rounds past its first look (and
// once its interval is narrower than half the margin), the cell stops
// "futile" instead of taking every round it could, and the cell after it,
// noisy but not hopeless, gets the time.
TEST(DecisionBudget, ACellWhoseRatioSitsAtTheMarginStopsEarly) {
  BudgetTable t;
  t.add({{100, 105}, 0.01});
  t.add({{100, 100}, 0.3});  // too noisy to decide in this budget, but not hopeless: takes what it is given
  DecisionSettings s = budget_settings(60);
  s.max_rounds = 60;
  auto out = t.run(s);
  EXPECT_EQ(out[0].stop, "futile");
  EXPECT_EQ(out[0].kind, harness::Verdict::Kind::Undecided);
  EXPECT_EQ(out[0].rounds, 8u);
  EXPECT_NE(out[1].stop, "futile");
  EXPECT_GT(out[1].rounds, 2 * out[0].rounds);
}

// A cell whose pair looks resolvable takes more than its equal share of
// the spare time (up to `borrow` times it), and decides; held to its share
// (borrow 1), the same cell stops at the budget undecided.
TEST(DecisionBudget, ACellThatCanStillDecideTakesMoreThanItsShare) {
  auto run = [](double borrow) {
    BudgetTable t;
    t.add({{100, 109}, 0.06});
    for (int i = 0; i < 3; ++i) t.add({{100, 300}, 0.01});  // decide at once
    DecisionSettings s = budget_settings(40);
    s.borrow = borrow;
    auto out = t.run(s);
    EXPECT_LE(t.elapsed, 40 + t.longest + 0.01);
    for (std::size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i].stop, "decided") << i;
    return out[0];
  };
  const CellOutcome held = run(1), borrowed = run(2);
  EXPECT_EQ(held.kind, harness::Verdict::Kind::Undecided) << held.stop;
  EXPECT_EQ(borrowed.stop, "decided");
  EXPECT_EQ(borrowed.kind, harness::Verdict::Kind::Winner);
  EXPECT_GT(borrowed.rounds, held.rounds);
}

// A class of cells that costs several times the others (a flush after
// every write), one early and the rest at the end: the model calibrated
// per class plans the last ones by the first one's cost, so none is left
// out; one model for every cell underestimates them and leaves some out.
TEST(DecisionBudget, AnExpensiveClassIsPlannedByItsOwnCost) {
  auto not_run = [](bool classes) {
    BudgetTable t;
    const Synthetic cheap{{100, 100.5, 99.5}, 0.2, 0.2, 1.2, 0}, dear{{100, 100.5, 99.5}, 0.2, 1.5, 4.0, 0};
    t.add(cheap, classes ? "cheap" : "");
    t.add(dear, classes ? "dear" : "");
    for (int i = 0; i < 10; ++i) t.add(cheap, classes ? "cheap" : "");
    for (int i = 0; i < 3; ++i) t.add(dear, classes ? "dear" : "");
    t.run(budget_settings(150));
    EXPECT_LE(t.elapsed, 150 + t.longest + 0.01);
    return t.not_run.size();
  };
  EXPECT_EQ(not_run(true), 0u);
  EXPECT_GT(not_run(false), 0u);
}

TEST(DecisionBudget, CellsDecidedEarlyLeaveTheirTimeToUndecidedOnes) {
  BudgetTable t;
  t.add({{100, 200}, 0.02});   // decides at 6 rounds
  t.add({{100, 200}, 0.02});
  t.add({{100, 100}, 0.3});    // never decides in this budget
  auto out = t.run(budget_settings(40));
  EXPECT_EQ(out[0].rounds, 6u);
  EXPECT_EQ(out[1].rounds, 6u);
  EXPECT_EQ(out[2].stop, "budget");
  // Setup 3 x 2 s; two decided cells 2 x 6 x 4 x 0.084 s; the noisy one gets nearly all the rest.
  EXPECT_GT(out[2].end_s - out[2].start_s, 0.7 * (40 - out[2].start_s));
  EXPECT_LE(t.elapsed, 40 + t.longest + 0.01);
}

}  // namespace
}  // namespace iolab::suites
