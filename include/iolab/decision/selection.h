// Selection of the best candidate within an indifference zone, for one
// condition (an op, a packet size, a flush policy, a cache column): Kim &
// Nelson's fully sequential procedure KN (ACM TOMACS 11(3), 2001) on the
// log rates of interleaved rounds, with the pairs' variances updated as
// the rounds come in, as their KN++ does (Operations Research 54(3), 2006),
// and one stopping rule added for a set of survivors that the rounds cannot
// tell apart within the zone.
//
// The observations: X_ij = ln(rate of candidate i in round j). A round runs
// every candidate still in, interleaved, so a change of the machine's speed
// during a round moves them alike: the rounds are KN's common random
// numbers, and each pair is judged on its round-by-round differences.
//
//   delta = ln(indifference)    (1.05: a 5% difference of rates)
//   alpha = 1 - confidence
//   eta   = ((2 alpha / (k - 1))^(-2 / (n0 - 1)) - 1) / 2,  h2 = 2 eta (n0 - 1)
//   S2_il(r) = sample variance of X_ij - X_lj over the r rounds so far
//   W_il(r) = max(0, delta / (2 r) * (h2 S2_il(r) / delta^2 - r))
//
// After round r >= n0, candidate i is eliminated when its mean log rate
// lies below another survivor's by more than W_il(r); one survivor is the
// pick. KN's theorem (S2 from the first n0 rounds only): when the best is at
// least delta ahead of every other, it is picked with probability at least
// `confidence`. KN++ keeps h2 and re-estimates S2 every round; its
// guarantee is asymptotic (as delta -> 0), so what it keeps at our delta is
// measured by simulation, not assumed. Why the update: the first stage's
// variance alone fixes the continuation region for the whole condition, too
// wide when those rounds are noisier than the rest (a cold start, a
// neighbour's burst), too narrow when they are quieter (the simulation's
// first-stage configurations).
//
// Added: the survivors stop together, "within", once every pair of them
// satisfies |mean difference| + W_il(r) <= delta (checked before each
// screening): the zone their difference can still be in lies inside the
// indifference; and a pair that satisfies it does not screen each
// other (KN would drop the one a hair behind once W_il reaches 0). The
// pick is then the survivor of highest mean. What this keeps of the guarantee is
// measured by simulation (tests/decision/selection_guarantee_test.cpp,
// docs/report.md), not assumed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iolab::decision {

// What a pick promises: with probability at least `confidence`, its true
// rate is within a factor `indifference` of the best candidate's.
struct Guarantee {
  double indifference = 1.05;
  double confidence = 0.95;
};
// The widest indifference the budget may move a condition to (stated in its verdict).
inline constexpr double kWidestIndifference = 1.10;
// The indifferences a condition may be moved to, in steps of a percent.
inline constexpr double kIndifferenceStep = 0.01;
// Why `g` is not a guarantee (indifference must exceed 1, confidence lie in
// (0.5, 1)), or nullopt.
std::optional<std::string> guarantee_problem(const Guarantee& g);

// Rounds of every candidate before the first elimination (KN's n0): the
// variances of the pairs' differences are first estimated from them.
inline constexpr unsigned kFirstStage = 6;
// The survivors stop together once each pair's zone is this fraction of delta.
inline constexpr double kWithinFraction = 1.0;

// KN's h2 for k candidates, a first stage of n0 rounds and confidence P*.
double kn_h2(std::size_t k, unsigned n0, double confidence);

class Selection {
 public:
  // `candidates` >= 1; `first_stage` >= 2.
  Selection(std::size_t candidates, Guarantee guarantee, unsigned first_stage = kFirstStage);

  // One more round: the rate of each candidate still in (in_play), by
  // candidate index (others' entries are not read). A rate that is not a
  // positive finite number withdraws its candidate (it has no figure).
  // Screens after the first stage; ignored once done().
  void add_round(std::span<const double> rates);
  // Out of the comparison from now on without being beaten (its figures
  // are not to be trusted from this round on, or it stopped running);
  // what its earlier rounds decided stands.
  void withdraw(std::size_t candidate);
  // The budget ended the condition: the survivors stay as they are.
  void stop_for_budget();
  // Asked once, after the first stage's last round is added and before
  // its first screening: the indifference to judge at from then on. A
  // wider one than the asked replaces it (a narrower one is ignored).
  // Why this keeps the guarantee: in KN's region the chance that a pair's
  // path leaves it on the wrong side, for a pair exactly delta apart, is
  // (1/2) exp(-h2 S2 / (2 sigma2)) given S2 (Fabian's bound): delta cancels.
  // So a zone chosen from the first stage's variances alone (independent
  // of its means for normal rates) keeps KN's bound at the zone chosen;
  // what it keeps with KN++'s updates and heavy tails is measured by the
  // simulation (docs/report.md).
  using ZoneChooser = std::function<double(const Selection&)>;
  void choose_zone_after_first_stage(ZoneChooser choose) { choose_zone_ = std::move(choose); }

  enum class Stop { Running, One, Within, Budget, NoCandidate };
  Stop stop() const noexcept { return stop_; }
  bool done() const noexcept { return stop_ != Stop::Running; }
  unsigned rounds() const noexcept { return rounds_; }
  std::size_t candidates() const noexcept { return n_; }
  double delta() const noexcept { return delta_; }
  double h2() const noexcept { return h2_; }
  unsigned first_stage() const noexcept { return n0_; }
  const Guarantee& guarantee() const noexcept { return guarantee_; }

  // Still taking turns: not eliminated, not withdrawn (and the selection not done).
  bool in_play(std::size_t i) const;
  // The survivors (not eliminated, not withdrawn), best mean first; the pick is the first.
  std::vector<std::size_t> survivors() const;
  std::optional<std::size_t> pick() const;

  struct Elimination {
    unsigned after_rounds = 0;
    std::size_t by = 0;  // the survivor it fell behind by more than W
  };
  std::optional<Elimination> eliminated(std::size_t i) const { return eliminated_.at(i); }
  bool withdrawn(std::size_t i) const { return withdrawn_.at(i); }
  // Candidate i's mean log rate over its rounds (0 before any).
  double mean_log_rate(std::size_t i) const;
  // KN's bound on the rounds the survivors can still need, at today's
  // variances: max over their pairs of floor(h2 S2 / delta^2) + 1 (the
  // first stage before it is known).
  unsigned rounds_bound() const;
  // The same bound for survivor i's pairs alone (the rounds i can still
  // take turns in), at indifference `indifference`.
  unsigned rounds_bound(std::size_t i, double indifference) const;
  // Estimated S2 of the pair over the rounds both ran (0 before two).
  double pair_variance(std::size_t i, std::size_t l) const;

 private:
  double W(std::size_t i, std::size_t l) const;
  bool within_zone(const std::vector<std::size_t>& set) const;
  void screen();
  void choose_zone();
  std::size_t n_;
  Guarantee guarantee_;
  unsigned n0_;
  double delta_, h2_;
  unsigned rounds_ = 0;
  // Per candidate: this round's log rate, and the sum and count over its
  // rounds (the pairs' variances are kept as they go, so no history is).
  std::vector<double> last_, sum_;
  std::vector<std::size_t> count_;
  struct PairDifference {  // X_ij - X_lj over the rounds both ran (Welford)
    std::size_t count = 0;
    double mean = 0, m2 = 0;
    void add(double d);
    double variance() const;
  };
  std::vector<PairDifference> pairs_;   // [i * n + l], i < l
  std::vector<std::optional<Elimination>> eliminated_;
  std::vector<bool> withdrawn_;
  ZoneChooser choose_zone_;
  Stop stop_ = Stop::Running;
};

std::string_view to_string(Selection::Stop stop);  // "running", "one", "within", "budget", "no candidate"

}  // namespace iolab::decision
