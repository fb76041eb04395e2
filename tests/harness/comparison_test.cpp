// The statistics of interleaved comparisons: the ratio interval's coverage
// on synthetic samples with a known ratio (seeded: the same every run), the
// rounds' order, and interleaved rounds of real tiny experiments recording
// their order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "iolab/harness/comparison.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"

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

constexpr double kTrueRatio = 1.3;

// Lognormal rates around `center`, as repetitions on a noisy machine give them.
std::vector<double> sample(std::mt19937_64& rng, std::size_t n, double center, double sigma) {
  std::normal_distribution<double> z(0, sigma);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(center * std::exp(z(rng)));
  return out;
}

// Draws 2,000 intervals of a known ratio (1.3) with `draw(rng)` and checks
// they cover it as often as they say: binomial noise at 2000 trials is sd
// ~0.004, so 3 sd either side of the stated level fails.
template <typename Draw>
void expect_stated_coverage(std::uint64_t seed, std::size_t n, Draw draw) {
  std::mt19937_64 rng(seed);
  const int trials = 2000;
  int covered = 0;
  double stated = 0;
  for (int t = 0; t < trials; ++t) {
    RatioInterval r = draw(rng);
    ASSERT_TRUE(r.available);
    covered += r.lo <= kTrueRatio && kTrueRatio <= r.hi;
    stated = r.coverage;
  }
  const double seen = static_cast<double>(covered) / trials;
  EXPECT_GE(stated, 0.95) << n;
  EXPECT_GE(seen, stated - 0.012) << "n=" << n << " coverage " << seen << " stated " << stated;
  EXPECT_LE(seen, stated + 0.012) << "n=" << n << " coverage " << seen << " stated " << stated;
}

// The interval covers the true ratio at least as often as it says, at the
// repetition counts a comparison of two runs sees.
TEST(RatioInterval, CoverageOfAKnownRatioIsAtLeastItsStatedLevel) {
  for (std::size_t n : {5u, 10u, 20u})
    expect_stated_coverage(1234 + n, n, [n](std::mt19937_64& rng) {
      auto a = sample(rng, n, 100, 0.1), b = sample(rng, n, 100 * kTrueRatio, 0.1);
      return ratio_interval(a, b);
    });
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

TEST(SignedRank, ExactNullDistribution) {
  // 3 pairs: the 8 sign patterns give sums 0, 1, 2, 3, 3, 4, 5, 6.
  EXPECT_NEAR(signed_rank_cdf(3, 0), 1.0 / 8, 1e-12);
  EXPECT_NEAR(signed_rank_cdf(3, 3), 5.0 / 8, 1e-12);
  EXPECT_DOUBLE_EQ(signed_rank_cdf(3, 6), 1.0);
  // 6 pairs: T = 0, 1, 2 once each of 64.
  EXPECT_NEAR(signed_rank_cdf(6, 0), 1.0 / 64, 1e-12);
  EXPECT_NEAR(signed_rank_cdf(6, 2), 3.0 / 64, 1e-12);
  // Symmetric about n(n+1)/4.
  EXPECT_NEAR(signed_rank_cdf(10, 27), 0.5, 1e-12);
  // The normal approximation beyond the exact limit joins the exact values.
  EXPECT_NEAR(signed_rank_cdf(201, 201 * 202 / 4), 0.5, 0.01);
}

// Rounds on a drifting machine: each round's speed is shared by every
// candidate in it (a factor drawn per round, large), each repetition has
// its own noise on top. `truth` is B's factor over A.
struct Paired {
  std::vector<double> a, b;
};
Paired drifting_rounds(std::mt19937_64& rng, std::size_t n, double truth, double drift, double noise) {
  std::normal_distribution<double> d(0, drift), e(0, noise);
  Paired p;
  for (std::size_t i = 0; i < n; ++i) {
    const double machine = std::exp(d(rng));
    p.a.push_back(100 * machine * std::exp(e(rng)));
    p.b.push_back(100 * truth * machine * std::exp(e(rng)));
  }
  return p;
}

// The paired interval covers the true ratio at least as often as it says,
// at the round counts the decision table uses, however much the machine
// drifts between rounds.
TEST(PairedRatioInterval, CoverageOfAKnownRatioIsAtLeastItsStatedLevel) {
  for (std::size_t n : {6u, 10u, 20u})
    expect_stated_coverage(4321 + n, n, [n](std::mt19937_64& rng) {
      Paired p = drifting_rounds(rng, n, kTrueRatio, 0.3, 0.05);
      RatioInterval r = paired_ratio_interval(p.a, p.b);
      EXPECT_TRUE(r.paired);
      return r;
    });
}

// Pairing is what the interleaving is for: a machine whose speed moves 30%
// between rounds hides a 10% difference from the unpaired interval, not
// from the paired one.
TEST(PairedRatioInterval, DriftBetweenRoundsDropsOut) {
  std::mt19937_64 rng(99);
  Paired p = drifting_rounds(rng, 12, 1.1, 0.3, 0.01);
  RatioInterval paired = paired_ratio_interval(p.a, p.b), unpaired = ratio_interval(p.a, p.b);
  ASSERT_TRUE(paired.available);
  ASSERT_TRUE(unpaired.available);
  EXPECT_GT(paired.lo, 1.05);
  EXPECT_LT(paired.hi, 1.15);
  EXPECT_LT(unpaired.lo, 1.0);  // the drift swamps it
}

TEST(PairedRatioInterval, RealCoverageAtSmallCountsAndNoneBelowSix) {
  std::vector<double> a{100, 101, 99, 102, 98, 100}, b{150, 152, 148, 151, 149, 150};
  RatioInterval r = paired_ratio_interval(a, b);
  ASSERT_TRUE(r.available);
  EXPECT_NEAR(r.coverage, 1 - 2.0 / 64, 1e-12);  // [W(1), W(21)]: 96.9%
  EXPECT_GT(r.lo, 1.45);
  EXPECT_LT(r.hi, 1.55);
  EXPECT_NEAR(r.estimate, 1.5, 0.02);
  // 7 rounds: k = 3 of 28 Walsh averages, P(T <= 2) = 3/128 a side: 95.3%.
  a.push_back(100), b.push_back(150);
  EXPECT_NEAR(paired_ratio_interval(a, b).coverage, 1 - 6.0 / 128, 1e-12);
  // 5 rounds reach 93.75% at most: no 95% interval.
  std::vector<double> c(a.begin(), a.begin() + 5), d(b.begin(), b.begin() + 5);
  RatioInterval s = paired_ratio_interval(c, d);
  EXPECT_FALSE(s.available);
  EXPECT_TRUE(std::isinf(s.hi));
  // Pairs are the first rounds both ran: a candidate retired after 6 rounds pairs with the others' first 6.
  std::vector<double> longer = b;
  longer.insert(longer.end(), {1, 1, 1, 1});
  EXPECT_EQ(paired_ratio_interval(a, longer).n_a, 7u);
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

// A runner for real tiny experiments: one pass a repetition, no latency pass.
struct TinyRunner {
  io::ScratchDir scratch{"/tmp"};
  RunConfig config = [] {
    RunConfig c;
    c.min_time = 0;
    c.latency = false;
    return c;
  }();
  Runner runner{config, scratch};
};

// Real tiny experiments in rounds: one repetition each per round, the order
// recorded in every record and the same as round_order gives for the seed.
TEST(Rounds, RecordsEveryRoundInTheSeededOrder) {
  TinyRunner tiny_runner;
  Runner& runner = tiny_runner.runner;
  std::vector<FileExperiment> es = three_tiny_reads("rounds");
  Rounds rounds(runner, es, 99);
  rounds.start();
  for (int i = 0; i < 6; ++i) rounds.round();
  auto rates = rounds.rates();
  ASSERT_EQ(rates.size(), 3u);
  for (const auto& r : rates) EXPECT_EQ(r.size(), 6u);
  std::vector<results::Result> records = rounds.finish();
  ASSERT_EQ(records.size(), 3u);
  for (unsigned round = 0; round < 6; ++round) {
    auto order = round_order(3, 99, round * 24);
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

// A table runs each kind of experiment (operation, cache state, flush
// policy) in interleaved rounds: consecutive rows of one kind share a
// group (its seed is the run's seed plus the group's first row), a row of
// another kind starts a new one, and the records come back in table order,
// each with every repetition the run asks for.
TEST(RunInterleaved, ConsecutiveRowsOfOneKindShareRoundsInTableOrder) {
  TinyRunner tiny_runner;
  tiny_runner.config.reps = 3;
  std::vector<FileExperiment> table = three_tiny_reads("interleaved-reads");
  for (const char* m : {"pread", "syscall"}) {
    FileExperiment w = table.front();
    w.experiment = "interleaved-writes";
    w.method = m;
    w.op = results::Op::Write;
    table.push_back(w);
  }
  table.push_back(three_tiny_reads("interleaved-last-read").front());
  std::vector<std::string> started;
  RunConfig config = tiny_runner.config;
  config.on_experiment = [&](const std::string& label) { started.push_back(label); };
  Runner watched{config, tiny_runner.scratch};
  std::vector<results::Result> records = run_interleaved(watched, table);
  ASSERT_EQ(records.size(), table.size());
  const std::uint64_t group_seed[] = {0, 0, 0, 3, 3, 5};
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(records[i].experiment, table[i].experiment);
    EXPECT_EQ(records[i].method, table[i].method);
    EXPECT_FALSE(records[i].skipped) << *records[i].skipped;
    EXPECT_EQ(records[i].samples_s.size(), 3u);
    EXPECT_TRUE(records[i].verified);
    EXPECT_EQ(records[i].extra["round_seed"].get<std::uint64_t>(), config.seed + group_seed[i]) << i;
    EXPECT_EQ(records[i].extra["rounds"].get<unsigned>(), 3u);
    EXPECT_EQ(records[i].extra["round_positions"].size(), 3u);
  }
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(started[0], "test/interleaved-reads pread and 2 more, interleaved");
  EXPECT_EQ(started[2], "test/interleaved-last-read pread");
}

// A group's files exist at once: no more of them than its limit allows,
// and a row larger than the limit runs alone.
TEST(RunInterleaved, AGroupHoldsNoMoreFileBytesThanItsLimit) {
  TinyRunner tiny_runner;
  tiny_runner.config.reps = 1;
  Runner runner{tiny_runner.config, tiny_runner.scratch};
  std::vector<FileExperiment> table = three_tiny_reads("limited");  // 64 KiB files
  table.push_back(table.front());
  table[1].file_size = 256 * 1024;
  std::vector<results::Result> records = run_interleaved(runner, table, InterleaveLimits{128 * 1024});
  ASSERT_EQ(records.size(), 4u);
  const std::uint64_t group_seed[] = {0, 1, 2, 2};  // 64 KiB alone (256 KiB next), 256 KiB alone, 2 x 64 KiB
  for (std::size_t i = 0; i < records.size(); ++i)
    EXPECT_EQ(records[i].extra["round_seed"].get<std::uint64_t>(), runner.config().seed + group_seed[i]) << i;
}

// What a judge between rounds sees: each candidate's record as it would
// read if the rounds ended now, its repetitions so far as samples (these
// tiny ones shorter than a figure needs, which the decision's trust filter
// reads from them), the work of one, and extra fields set on the way.
TEST(Rounds, ProvisionalRecordsHoldTheRoundsSoFar) {
  TinyRunner tiny_runner;  // a 64 KiB read: microseconds a repetition
  Rounds tiny(tiny_runner.runner, three_tiny_reads("rounds-short"), 7);
  tiny.start();
  for (int i = 0; i < 2; ++i) tiny.round();
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_FALSE(tiny.not_running(c));
    tiny.set_extra(c, "note", c);
    results::Result r = tiny.provisional(c);
    ASSERT_EQ(r.samples_s.size(), 2u);
    EXPECT_LT(r.samples_s[0], results::thresholds::kTooShortSeconds);
    EXPECT_EQ(r.bytes, 64u * 1024u * r.passes);
    EXPECT_EQ(r.extra["note"], c);
  }
  for (const auto& r : tiny.finish()) EXPECT_TRUE(r.has_warning(results::WarningKind::TooShort));
}

// A retired candidate takes no more turns: its repetitions so far stay (in
// round order, so they still pair with the others' first rounds), its
// record says when and why, and the others' turns keep their seeded order.
TEST(Rounds, RetiredCandidatesTakeNoMoreTurns) {
  TinyRunner tiny_runner;
  Runner& runner = tiny_runner.runner;
  Rounds rounds(runner, three_tiny_reads("rounds-retire"), 11);
  rounds.start();
  for (int i = 0; i < 2; ++i) rounds.round();
  rounds.retire(1, "beaten by pread");
  EXPECT_TRUE(rounds.retired(1));
  EXPECT_TRUE(rounds.active());
  for (int i = 0; i < 3; ++i) rounds.round();
  auto rates = rounds.rates();
  EXPECT_EQ(rates[0].size(), 5u);
  EXPECT_EQ(rates[1].size(), 2u);
  EXPECT_EQ(rates[2].size(), 5u);
  rounds.retire(0, "settled");
  rounds.retire(2, "settled");
  EXPECT_FALSE(rounds.active());
  auto records = rounds.finish();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].samples_s.size(), 2u);
  EXPECT_EQ(records[1].extra["retired_after_rounds"], 2u);
  EXPECT_EQ(records[1].extra["retired_because"], "beaten by pread");
  EXPECT_EQ(records[1].extra["round_positions"].size(), 2u);
  EXPECT_EQ(records[0].extra["rounds"], 5u);
  for (std::size_t c : {0u, 2u}) {
    auto positions = records[c].extra["round_positions"].get<std::vector<std::size_t>>();
    ASSERT_EQ(positions.size(), 5u);
    for (unsigned round = 0; round < 5; ++round) {
      auto order = round_order(3, 11, round * 24);
      EXPECT_EQ(order[positions[round]], c) << "round " << round;
    }
  }
}

// A round cut short by its caller's deadline: the candidates that had their
// turn keep the repetition, the others do not, and it is not counted.
TEST(Rounds, ARoundCutShortKeepsWhatRanAndIsNotCounted) {
  TinyRunner tiny_runner;
  Runner& runner = tiny_runner.runner;
  std::vector<FileExperiment> es = three_tiny_reads("rounds-cut");
  Rounds rounds(runner, es, 5);
  rounds.start();
  EXPECT_TRUE(rounds.round());
  EXPECT_TRUE(rounds.round([] { return true; }));
  int asked = 0;
  EXPECT_FALSE(rounds.round([&] { return ++asked <= 1; }));  // one repetition, then the deadline
  EXPECT_EQ(rounds.rounds(), 2u);
  auto rates = rounds.rates();
  const auto first = round_order(3, 5, 2 * 24)[0];  // round 2, part 0
  for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(rates[c].size(), c == first ? 3u : 2u) << c;
  std::vector<results::Result> records = rounds.finish();
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(records[c].extra["round_positions"].size(), c == first ? 3u : 2u);
    EXPECT_EQ(records[c].samples_s.size(), c == first ? 3u : 2u);
  }
}

}  // namespace
}  // namespace iolab::harness
