// Comparing candidates measured side by side: the interval of a ratio of
// rates whose coverage holds at the repetitions taken, the order of the
// candidates in each round of an interleaved experiment, and the rule that
// turns intervals into a verdict (winner, tie, undecided).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace iolab::harness {

// The ratio of B's rates over A's (rates: bytes or operations per second,
// one per repetition) with a distribution-free confidence interval:
// Hodges-Lehmann on log rates. The estimate is exp(median of all m*n
// differences log b_j - log a_i); the interval is [d(k), d(mn+1-k)] of
// those sorted differences, with k from the exact null distribution of the
// Mann-Whitney statistic (Bauer 1972; R's wilcox.test(conf.int=TRUE)). Its
// coverage is exact (not asymptotic) for any m, n when each side is
// independent and identically distributed and B differs from A by a
// factor (a shift of log rates). U is discrete, so the interval taken is
// the narrowest whose coverage is at least `level`; `coverage` is the level
// it really has (95% asked: 96.8% at 5 vs 5, 95.7% at 10 vs 10). Below 4 vs
// 4 no 95% interval exists (3 vs 3 reaches 90% at most): `available` is
// false, lo = 0 and hi = infinity.
struct RatioInterval {
  double estimate = 1, lo = 0, hi = 0;
  double coverage = 0;   // the interval's real coverage (exact), 0 when unavailable
  std::size_t n_a = 0, n_b = 0;
  bool available = false;
};
RatioInterval ratio_interval(std::span<const double> a, std::span<const double> b, double level = 0.95);

// P(U <= u) for the Mann-Whitney U of m vs n under the null (no ties).
double mann_whitney_cdf(std::size_t m, std::size_t n, std::size_t u);

// The order in which the candidates run in `round` (0-based): a permutation
// of 0..candidates-1 from a generator seeded with (seed, round) alone, so
// a recorded seed reproduces every round's order.
std::vector<std::size_t> round_order(std::size_t candidates, std::uint64_t seed, unsigned round);

// The decision over a cell: candidates measured at several conditions.
// rates[condition][candidate] = that candidate's rates at that condition,
// one per round (empty: did not run there).
//  - winner: one candidate whose interval over every rival lies above
//    `margin` at every condition;
//  - tie: a set of >= 2 candidates whose pairwise intervals all lie inside
//    [1/margin, margin] at every condition (equivalence), each beating
//    every candidate outside the set (interval above margin) everywhere;
//  - undecided: neither, with the first comparison that stopped it.
// Candidates are tried best first (geometric mean of median rates over the
// conditions): the top one as winner, then the top 2, 3, ... as a tied set.
struct Verdict {
  enum class Kind { Winner, Tie, Undecided } kind = Kind::Undecided;
  std::vector<std::size_t> chosen;  // the winner, or the tied set (best first)
  std::vector<std::size_t> ranking; // every candidate that ran, best first
  // The deciding interval: for a winner its least favourable one (lowest
  // lower bound over rivals and conditions); for a tie the widest pairwise
  // one; undecided: the comparison that failed.
  RatioInterval interval;
  std::size_t interval_condition = 0;
  std::size_t against = 0;          // the other candidate of that interval
  std::string reason;               // undecided: why ("a vs b at condition 1: 0.97..1.12 ...")
};
Verdict decide(const std::vector<std::vector<std::vector<double>>>& rates, const std::vector<std::string>& names,
               const std::vector<std::string>& conditions, double margin = 1.05);
std::string_view to_string(Verdict::Kind kind);  // "winner", "tie", "undecided"

}  // namespace iolab::harness
