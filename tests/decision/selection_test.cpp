// The selection procedure on hand-made rounds: KN's constant, its
// eliminations, the within-zone stop, withdrawals (selection.h).
#include "iolab/decision/selection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace iolab::decision {
namespace {

TEST(Selection, KnConstantMatchesKimAndNelsonsFormula) {
  // k = 10, n0 = 6, alpha = 0.05: eta = ((0.1 / 9)^(-0.4) - 1) / 2, h2 = 2 eta 5.
  const double eta = (std::pow(0.1 / 9, -0.4) - 1) / 2;
  EXPECT_NEAR(kn_h2(10, 6, 0.95), 10 * eta, 1e-12);
  EXPECT_GT(kn_h2(10, 6, 0.99), kn_h2(10, 6, 0.95));  // more confidence, a wider continuation region
  EXPECT_GT(kn_h2(10, 6, 0.95), kn_h2(2, 6, 0.95));   // more candidates, more pairs to cover
  EXPECT_EQ(kn_h2(1, 6, 0.95), 0);
}

TEST(Selection, GuaranteeOutsideItsRangeIsRefused) {
  EXPECT_TRUE(guarantee_problem({1.0, 0.95}));
  EXPECT_TRUE(guarantee_problem({0.9, 0.95}));
  EXPECT_TRUE(guarantee_problem({1.05, 0.5}));
  EXPECT_TRUE(guarantee_problem({1.05, 1.0}));
  EXPECT_TRUE(guarantee_problem({std::nan(""), 0.95}));
  EXPECT_FALSE(guarantee_problem({1.05, 0.95}));
  EXPECT_THROW(Selection(3, Guarantee{1.0, 0.95}), std::invalid_argument);
}

// Rates a factor `ahead` apart with a small round-to-round wobble shared by all.
std::vector<double> round_of(const std::vector<double>& base, int round) {
  std::vector<double> r;
  for (std::size_t i = 0; i < base.size(); ++i) r.push_back(base[i] * (1 + 0.01 * ((round * 7 + static_cast<int>(i) * 3) % 5 - 2)));
  return r;
}

TEST(Selection, AFarLeaderIsPickedAtTheEndOfTheFirstStage) {
  Selection s(3, Guarantee{}, 6);
  const std::vector<double> base{100, 300, 90};
  for (int r = 0; r < 5; ++r) {
    s.add_round(round_of(base, r));
    EXPECT_FALSE(s.done()) << "no elimination before the first stage ends";
  }
  s.add_round(round_of(base, 5));
  ASSERT_TRUE(s.done());
  EXPECT_EQ(s.stop(), Selection::Stop::One);
  EXPECT_EQ(s.pick(), 1u);
  ASSERT_TRUE(s.eliminated(0));
  EXPECT_EQ(s.eliminated(0)->after_rounds, 6u);
  EXPECT_EQ(s.eliminated(0)->by, 1u);
}

TEST(Selection, IdenticalCandidatesStopTogetherWithinTheZone) {
  Selection s(3, Guarantee{}, 6);
  for (int r = 0; r < 6; ++r) s.add_round(std::vector<double>{100, 100, 100});
  ASSERT_TRUE(s.done());
  EXPECT_EQ(s.stop(), Selection::Stop::Within);
  EXPECT_EQ(s.survivors().size(), 3u);
}

TEST(Selection, ANearTieTakesMoreRoundsThanAFarLead) {
  auto rounds_to_decide = [](double ahead) {
    Selection s(2, Guarantee{}, 6);
    for (int r = 0; r < 1000 && !s.done(); ++r) {
      const double wobble = 1 + 0.1 * ((r * 5) % 7 - 3) / 3.0;  // a pair difference that varies round to round
      s.add_round(std::vector<double>{100 * ahead * wobble, 100});
    }
    return s.rounds();
  };
  EXPECT_LT(rounds_to_decide(2.0), rounds_to_decide(1.04));
}

TEST(Selection, AWithdrawnCandidateIsNeitherPickedNorEliminated) {
  Selection s(3, Guarantee{}, 6);
  for (int r = 0; r < 3; ++r) s.add_round(round_of({100, 300, 90}, r));
  s.withdraw(1);
  EXPECT_FALSE(s.in_play(1));
  for (int r = 3; r < 6; ++r) s.add_round(round_of({100, 300, 90}, r));
  ASSERT_TRUE(s.done());
  EXPECT_TRUE(s.withdrawn(1));
  EXPECT_FALSE(s.eliminated(1));
  EXPECT_EQ(s.pick(), 0u);
}

TEST(Selection, ARateThatIsNoFigureWithdrawsItsCandidate) {
  Selection s(2, Guarantee{}, 6);
  s.add_round(std::vector<double>{100, std::nan("")});
  EXPECT_TRUE(s.withdrawn(1));
  s.add_round(std::vector<double>{100, 0});
  EXPECT_TRUE(s.in_play(0));
}

TEST(Selection, EveryCandidateWithdrawnEndsWithNoCandidate) {
  Selection s(2, Guarantee{}, 6);
  s.withdraw(0);
  s.withdraw(1);
  EXPECT_EQ(s.stop(), Selection::Stop::NoCandidate);
  EXPECT_FALSE(s.pick());
}

TEST(Selection, BudgetKeepsTheSurvivorsAndPicksTheBestMean) {
  Selection s(3, Guarantee{}, 6);
  for (int r = 0; r < 4; ++r) s.add_round(std::vector<double>{100, 103, 101});
  s.stop_for_budget();
  EXPECT_EQ(s.stop(), Selection::Stop::Budget);
  EXPECT_EQ(s.survivors().size(), 3u);
  EXPECT_EQ(s.pick(), 1u);
  s.add_round(std::vector<double>{1000, 1, 1});  // ignored once done
  EXPECT_EQ(s.rounds(), 4u);
}

TEST(Selection, TheRoundsBoundFollowsKnsFormula) {
  Selection s(2, Guarantee{}, 6);
  const double d[] = {0.02, -0.02, 0.01, -0.01, 0.03, -0.03};
  for (double x : d) s.add_round(std::vector<double>{100 * std::exp(x), 100});
  if (!s.done()) {
    const double delta = std::log(1.05);
    EXPECT_EQ(s.rounds_bound(),
              static_cast<unsigned>(std::floor(s.h2() * s.pair_variance(0, 1) / (delta * delta)) + 1));
  }
}

TEST(Selection, APairsVarianceComesFromEveryRoundSoFarNotTheFirstStageAlone) {
  // A noisy first stage, then identical rounds: the pair's variance falls as
  // they come in (KN++), where the first stage's alone would stay as it was.
  Selection s(2, Guarantee{1.05, 0.95}, 6);
  const double d[] = {0.2, -0.2, 0.2, -0.2, 0.2, -0.2, 0, 0, 0, 0};
  std::vector<double> diffs;
  for (double x : d) {
    if (s.done()) break;
    s.add_round(std::vector<double>{100 * std::exp(x), 100});
    diffs.push_back(x);
    double mean = 0, ss = 0;
    for (double v : diffs) mean += v / static_cast<double>(diffs.size());
    for (double v : diffs) ss += (v - mean) * (v - mean);
    if (diffs.size() >= 2) {
      EXPECT_NEAR(s.pair_variance(0, 1), ss / static_cast<double>(diffs.size() - 1), 1e-12);
    }
    EXPECT_EQ(s.pair_variance(0, 1), s.pair_variance(1, 0));
  }
  EXPECT_EQ(s.rounds(), 10u);
  EXPECT_LT(s.pair_variance(0, 1), 0.048 * 6 / 9);  // the first stage's 0.048, diluted by the quiet rounds
}

}  // namespace
}  // namespace iolab::decision
