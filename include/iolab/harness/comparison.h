// Comparing candidates measured side by side: the interval of a ratio of
// rates whose coverage holds at the repetitions taken (two runs apart, or
// paired round by round), and the order of the candidates in each round of
// an interleaved experiment. The decision between candidates is the
// decision layer's (decision/selection.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iolab::harness {

// The ratio of B's rates over A's (rates: bytes or operations per second,
// one per repetition) with a distribution-free confidence interval, for two
// independent sets of repetitions (two runs: `iolab compare`): Hodges-Lehmann
// on log rates. The estimate is exp(median of all m*n differences log b_j -
// log a_i); the interval is [d(k), d(mn+1-k)] of those sorted differences,
// with k from the exact null distribution of the Mann-Whitney statistic
// (Bauer 1972; R's wilcox.test(conf.int=TRUE)). Its coverage is exact (not
// asymptotic) for any m, n when each side is independent and identically
// distributed and B differs from A by a factor (a shift of log rates). U is
// discrete, so the interval taken is the narrowest whose coverage is at
// least `level`; `coverage` is the level it really has (95% asked: 96.8% at
// 5 vs 5, 95.7% at 10 vs 10). Below 4 vs 4 no 95% interval exists (3 vs 3
// reaches 90% at most): `available` is false, lo = 0 and hi = infinity.
struct RatioInterval {
  double estimate = 1, lo = 0, hi = 0;
  double coverage = 0;   // the interval's real coverage (exact), 0 when unavailable
  std::size_t n_a = 0, n_b = 0;  // repetitions a side; paired: both the number of rounds
  bool available = false;
  bool paired = false;   // from paired_ratio_interval
};
RatioInterval ratio_interval(std::span<const double> a, std::span<const double> b, double level = 0.95);

// The same ratio for candidates measured in the same rounds (a[i] and b[i]
// ran in round i, interleaved): one log ratio per round, log b_i - log a_i,
// so a machine that drifts between rounds moves both sides of a pair alike
// and drops out (the per-round ratios of this machine's recommend run
// varied 40% less than the unpaired ones). Pairs are the first
// min(|a|, |b|) rounds (a candidate retired early has fewer). The estimate
// is the one-sample Hodges-Lehmann one, exp(median of the n(n+1)/2 Walsh
// averages (d_i + d_j) / 2); the interval is [W(k), W(N+1-k)] of them, with
// k from the exact null distribution of the Wilcoxon signed-rank statistic
// (R's wilcox.test(paired = TRUE, conf.int = TRUE)). Its coverage is exact
// when the rounds are independent and each round's log ratio is
// symmetric about the true one (true when the two candidates' noise in a
// round has the same shape, whatever it is). 95% asked: 96.9% at 6 rounds,
// 95.3% at 7, 96.1% at 8; below 6 no 95% interval exists.
RatioInterval paired_ratio_interval(std::span<const double> a, std::span<const double> b, double level = 0.95);

// P(T <= t) for the Wilcoxon signed-rank statistic of n pairs under the null.
double signed_rank_cdf(std::size_t n, std::size_t t);

// P(U <= u) for the Mann-Whitney U of m vs n under the null (no ties).
double mann_whitney_cdf(std::size_t m, std::size_t n, std::size_t u);

// The order in which the candidates run in `round` (0-based): a permutation
// of 0..candidates-1 from a generator seeded with (seed, round) alone, so
// a recorded seed reproduces every round's order.
std::vector<std::size_t> round_order(std::size_t candidates, std::uint64_t seed, unsigned round);

}  // namespace iolab::harness
