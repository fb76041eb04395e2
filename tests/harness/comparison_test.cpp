// The statistics of interleaved comparisons: the ratio interval's coverage
// on synthetic samples with a known ratio (seeded: the same every run), the
// rounds' order, the winner/tie/undecided rule, and interleaved rounds of
// real tiny experiments recording their order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "iolab/harness/comparison.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/thresholds.h"

namespace iolab::harness {
namespace {

TEST(MannWhitney, ExactNullDistribution) {
  // 5 vs 5: C(10,5) = 252 orderings; U = 0, 1, 2 have 1, 1, 2 of them.
  EXPECT_NEAR(mann_whitney_cdf(5, 5, 0), 1.0 / 252, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(5, 5, 2), 4.0 / 252, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(5, 5, 12), 0.5, 1e-12);  // symmetric about mn/2 = 12.5
  EXPECT_NEAR(mann_whitney_cdf(3, 4, 0), 1.0 / 35, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_cdf(4, 4, 16), 1.0);
}

// Lognormal rates around `center`, as repetitions on a noisy machine give them.
std::vector<double> sample(std::mt19937_64& rng, std::size_t n, double center, double sigma) {
  std::normal_distribution<double> z(0, sigma);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(center * std::exp(z(rng)));
  return out;
}

// The interval covers the true ratio at least as often as it says, at the
// repetition counts the decision table uses.
TEST(RatioInterval, CoverageOfAKnownRatioIsAtLeastItsStatedLevel) {
  for (std::size_t n : {5u, 10u, 20u}) {
    std::mt19937_64 rng(1234 + n);
    const double truth = 1.3;
    const int trials = 2000;
    int covered = 0;
    double stated = 0;
    for (int t = 0; t < trials; ++t) {
      auto a = sample(rng, n, 100, 0.1), b = sample(rng, n, 100 * truth, 0.1);
      RatioInterval r = ratio_interval(a, b);
      ASSERT_TRUE(r.available);
      covered += r.lo <= truth && truth <= r.hi;
      stated = r.coverage;
    }
    double seen = static_cast<double>(covered) / trials;
    EXPECT_GE(stated, 0.95) << n;
    // Binomial noise at 2000 trials: sd ~0.004; 3 sd below the stated level fails.
    EXPECT_GE(seen, stated - 0.012) << "n=" << n << " coverage " << seen << " stated " << stated;
    EXPECT_LE(seen, stated + 0.012) << "n=" << n << " coverage " << seen << " stated " << stated;
  }
}

TEST(RatioInterval, RealCoverageAtSmallCountsAndNoneBelowFour) {
  std::vector<double> a{100, 101, 99, 102, 98}, b{150, 152, 148, 151, 149};
  RatioInterval r = ratio_interval(a, b);
  ASSERT_TRUE(r.available);
  EXPECT_NEAR(r.coverage, 1 - 2 * 4.0 / 252, 1e-12);  // k = 3: P(U <= 2) = 4/252 a side, 96.8%
  EXPECT_GT(r.lo, 1.4);
  EXPECT_LT(r.hi, 1.6);
  EXPECT_NEAR(r.estimate, 1.5, 0.02);
  // 3 vs 3 reaches 90% at most: no 95% interval.
  std::vector<double> c{100, 101, 99}, d{150, 152, 148};
  RatioInterval s = ratio_interval(c, d);
  EXPECT_FALSE(s.available);
  EXPECT_TRUE(std::isinf(s.hi));
}

TEST(RoundOrder, EveryCandidateOncePerRoundAndReproducibleFromTheSeed) {
  std::set<std::vector<std::size_t>> seen;
  for (unsigned round = 0; round < 20; ++round) {
    auto order = round_order(6, 42, round);
    auto sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(order, round_order(6, 42, round));  // the recorded seed gives it back
    seen.insert(order);
  }
  EXPECT_GT(seen.size(), 10u);  // a fresh order most rounds
  EXPECT_NE(round_order(6, 42, 0), round_order(6, 43, 0));
}

using Rates = std::vector<std::vector<std::vector<double>>>;

Rates cell(std::mt19937_64& rng, std::size_t n, const std::vector<double>& centers, double sigma, std::size_t conditions = 2) {
  Rates r(conditions);
  for (auto& cond : r)
    for (double c : centers) cond.push_back(sample(rng, n, c, sigma));
  return r;
}

TEST(Decide, AClearDifferenceDecidesInTheFirstRounds) {
  std::mt19937_64 rng(7);
  Rates r = cell(rng, 5, {100, 200, 120}, 0.03);
  Verdict v = decide(r, {"a", "b", "c"}, {"8 B", "63 B"});
  ASSERT_EQ(v.kind, Verdict::Kind::Winner) << v.reason;
  EXPECT_EQ(v.chosen, std::vector<std::size_t>{1});
  EXPECT_EQ(v.against, 2u);  // its closest rival
  EXPECT_GT(v.interval.lo, 1.05);
}

TEST(Decide, EqualDistributionsEndAsATieAndOthersMustBeBeaten) {
  std::mt19937_64 rng(8);
  Rates r = cell(rng, 30, {100, 100, 50}, 0.01);
  Verdict v = decide(r, {"a", "b", "c"}, {});
  ASSERT_EQ(v.kind, Verdict::Kind::Tie) << v.reason;
  std::vector<std::size_t> tied = v.chosen;
  std::sort(tied.begin(), tied.end());
  EXPECT_EQ(tied, (std::vector<std::size_t>{0, 1}));
}

TEST(Decide, OverlappingNoisyOnesStayUndecidedWithTheReason) {
  std::mt19937_64 rng(9);
  Rates r = cell(rng, 8, {100, 103}, 0.15);
  Verdict v = decide(r, {"a", "b"}, {"4k", "1020k"});
  EXPECT_EQ(v.kind, Verdict::Kind::Undecided);
  EXPECT_NE(v.reason.find("no winner"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("no tie"), std::string::npos) << v.reason;
}

TEST(Decide, AWinnerMustWinAtEveryCondition) {
  std::mt19937_64 rng(10);
  Rates r(2);
  r[0] = {sample(rng, 6, 200, 0.01), sample(rng, 6, 100, 0.01)};
  r[1] = {sample(rng, 6, 100, 0.01), sample(rng, 6, 101, 0.01)};  // a tie at the second size
  Verdict v = decide(r, {"a", "b"}, {"x", "y"});
  EXPECT_EQ(v.kind, Verdict::Kind::Undecided) << to_string(v.kind);
  // Fewer than 4 rounds: no interval, never decided.
  Rates few = cell(rng, 3, {100, 300}, 0.01);
  EXPECT_EQ(decide(few, {"a", "b"}, {}).kind, Verdict::Kind::Undecided);
}

// Three tiny warm-read candidates for the Rounds tests.
std::vector<FileExperiment> three_tiny_reads(const char* experiment) {
  std::vector<FileExperiment> es;
  for (const char* m : {"pread", "syscall", "stdio"}) {
    FileExperiment e;
    e.suite = "test";
    e.experiment = experiment;
    e.method = m;
    e.block_size = 4096;
    e.file_size = 64 * 1024;
    e.latency = false;
    es.push_back(e);
  }
  return es;
}

// Real tiny experiments in rounds: one repetition each per round, the order
// recorded in every record and the same as round_order gives for the seed.
TEST(Rounds, RecordsEveryRoundInTheSeededOrder) {
  io::ScratchDir scratch("/tmp");
  RunConfig config;
  config.min_time = 0;
  config.latency = false;
  Runner runner(config, scratch);
  std::vector<FileExperiment> es = three_tiny_reads("rounds");
  Rounds rounds(runner, es, 99);
  rounds.start();
  for (int i = 0; i < 6; ++i) rounds.round();
  auto rates = rounds.rates();
  ASSERT_EQ(rates.size(), 3u);
  for (const auto& r : rates) EXPECT_EQ(r.size(), 6u);
  std::vector<Result> records = rounds.finish();
  ASSERT_EQ(records.size(), 3u);
  for (unsigned round = 0; round < 6; ++round) {
    auto order = round_order(3, 99, round);
    for (std::size_t turn = 0; turn < 3; ++turn)
      EXPECT_EQ(records[order[turn]].extra["round_positions"][round].get<std::size_t>(), turn);
  }
  for (const auto& r : records) {
    EXPECT_FALSE(r.skipped) << *r.skipped;
    EXPECT_EQ(r.samples_s.size(), 6u);
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.extra["round_seed"].get<std::uint64_t>(), 99u);
    EXPECT_EQ(r.extra["rounds"].get<unsigned>(), 6u);
  }
}

// What a comparison may use: a candidate whose repetitions came out under
// the too-short bound has no rates there (its record will say too_short and
// the table leaves it out), so a verdict during the run rests on what the
// table's will. Repetitions long enough keep theirs.
TEST(Rounds, RatesLongEnoughLeaveOutCandidatesWithTooShortRepetitions) {
  io::ScratchDir scratch("/tmp");
  RunConfig config;
  config.min_time = 0;  // a 64 KiB read: microseconds a repetition
  config.latency = false;
  Runner runner(config, scratch);
  Rounds tiny(runner, three_tiny_reads("rounds-short"), 7);
  tiny.start();
  for (int i = 0; i < 2; ++i) tiny.round();
  for (const auto& r : tiny.rates()) EXPECT_EQ(r.size(), 2u);
  for (const auto& r : tiny.rates_long_enough()) EXPECT_TRUE(r.empty());
  for (const auto& r : tiny.finish()) EXPECT_TRUE(r.has_warning(WarningKind::TooShort));

  config.min_time = 2 * thresholds::kTooShortSeconds;
  Runner long_enough(config, scratch);
  std::vector<FileExperiment> one = three_tiny_reads("rounds-long");
  one.resize(1);
  Rounds rounds(long_enough, one, 7);
  rounds.start();
  rounds.round();
  ASSERT_EQ(rounds.rates_long_enough().size(), 1u);
  EXPECT_EQ(rounds.rates_long_enough()[0], rounds.rates()[0]);
  EXPECT_EQ(rounds.rates()[0].size(), 1u);
  rounds.finish();
}

// A round cut short by its caller's deadline: the candidates that had their
// turn keep the repetition, the others do not, and it is not counted.
TEST(Rounds, ARoundCutShortKeepsWhatRanAndIsNotCounted) {
  io::ScratchDir scratch("/tmp");
  RunConfig config;
  config.min_time = 0;
  config.latency = false;
  Runner runner(config, scratch);
  std::vector<FileExperiment> es = three_tiny_reads("rounds-cut");
  Rounds rounds(runner, es, 5);
  rounds.start();
  EXPECT_TRUE(rounds.round());
  EXPECT_TRUE(rounds.round([] { return true; }));
  int asked = 0;
  EXPECT_FALSE(rounds.round([&] { return ++asked <= 1; }));  // one repetition, then the deadline
  EXPECT_EQ(rounds.rounds(), 2u);
  auto rates = rounds.rates();
  const auto first = round_order(3, 5, 2)[0];
  for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(rates[c].size(), c == first ? 3u : 2u) << c;
  std::vector<Result> records = rounds.finish();
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(records[c].extra["round_positions"].size(), c == first ? 3u : 2u);
    EXPECT_EQ(records[c].samples_s.size(), c == first ? 3u : 2u);
  }
}

}  // namespace
}  // namespace iolab::harness
