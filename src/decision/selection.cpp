// Kim & Nelson's KN with the within-zone stop (selection.h).
#include "iolab/decision/selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "iolab/base/names.h"

namespace iolab::decision {

std::optional<std::string> guarantee_problem(const Guarantee& g) {
  if (!(g.indifference > 1) || !std::isfinite(g.indifference) || g.indifference > 10)
    return "the indifference is a ratio of rates above 1 (1.05: 5%) and at most 10";
  if (!(g.confidence > 0.5 && g.confidence < 1)) return "the confidence lies between 0.5 and 1 (0.95: 95%)";
  return std::nullopt;
}

double kn_h2(std::size_t k, unsigned n0, double confidence) {
  if (k < 2) return 0;
  const double alpha = 1 - confidence;
  const double eta = 0.5 * (std::pow(2 * alpha / static_cast<double>(k - 1), -2.0 / (n0 - 1.0)) - 1);
  return 2 * eta * (n0 - 1.0);
}

Selection::Selection(std::size_t candidates, Guarantee guarantee, unsigned first_stage)
    : n_(candidates), guarantee_(guarantee), n0_(std::max(2u, first_stage)),
      delta_(std::log(guarantee.indifference)), h2_(kn_h2(candidates, n0_, guarantee.confidence)), last_(candidates, 0.0),
      sum_(candidates, 0.0), count_(candidates, 0), pairs_(candidates * candidates), eliminated_(candidates),
      withdrawn_(candidates, false) {
  if (auto problem = guarantee_problem(guarantee)) throw std::invalid_argument(*problem);
  if (n_ == 0) stop_ = Stop::NoCandidate;
}

bool Selection::in_play(std::size_t i) const { return !eliminated_.at(i) && !withdrawn_.at(i) && !done(); }

void Selection::withdraw(std::size_t i) {
  if (withdrawn_.at(i) || eliminated_.at(i) || done()) return;
  withdrawn_[i] = true;
  if (rounds_ >= n0_) screen();
  else if (survivors().empty()) stop_ = Stop::NoCandidate;
}

void Selection::stop_for_budget() {
  if (!done()) stop_ = Stop::Budget;
}

void Selection::add_round(std::span<const double> rates) {
  if (done()) return;
  std::vector<bool> added(n_, false);
  for (std::size_t i = 0; i < n_; ++i) {
    if (eliminated_[i] || withdrawn_[i]) continue;
    const double r = i < rates.size() ? rates[i] : 0;
    if (!(r > 0) || !std::isfinite(r)) {
      withdrawn_[i] = true;  // no figure this round: it cannot be compared from here on
      continue;
    }
    last_[i] = std::log(r);
    sum_[i] += last_[i];
    ++count_[i];
    added[i] = true;
  }
  ++rounds_;
  // Each pair's round-by-round difference, its variance re-estimated from
  // every round both ran (KN++): a first stage noisier than the rounds
  // after it (a cold start, a neighbour's burst) no longer fixes the width
  // of the continuation region for the whole condition.
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t l = i + 1; l < n_; ++l)
      if (added[i] && added[l]) pairs_[i * n_ + l].add(last_[i] - last_[l]);
  if (rounds_ < n0_) {
    if (survivors().empty()) stop_ = Stop::NoCandidate;
    return;
  }
  if (rounds_ == n0_) choose_zone();
  screen();
}

void Selection::choose_zone() {
  if (!choose_zone_) return;
  const double g = choose_zone_(*this);
  choose_zone_ = nullptr;
  if (!(g > guarantee_.indifference) || guarantee_problem(Guarantee{g, guarantee_.confidence})) return;
  guarantee_.indifference = g;
  delta_ = std::log(g);
}

void Selection::PairDifference::add(double d) {
  ++count;
  const double step = d - mean;
  mean += step / static_cast<double>(count);
  m2 += step * (d - mean);
}

double Selection::PairDifference::variance() const {
  return count < 2 ? 0 : m2 / static_cast<double>(count - 1);
}

double Selection::mean_log_rate(std::size_t i) const {
  return count_.at(i) == 0 ? 0 : sum_[i] / static_cast<double>(count_[i]);
}

double Selection::pair_variance(std::size_t i, std::size_t l) const {
  return pairs_.at(std::min(i, l) * n_ + std::max(i, l)).variance();
}

double Selection::W(std::size_t i, std::size_t l) const {
  const double r = rounds_;
  return std::max(0.0, delta_ / (2 * r) * (h2_ * pair_variance(i, l) / (delta_ * delta_) - r));
}

bool Selection::within_zone(const std::vector<std::size_t>& set) const {
  for (std::size_t a = 0; a < set.size(); ++a)
    for (std::size_t b = a + 1; b < set.size(); ++b)
      if (std::abs(mean_log_rate(set[a]) - mean_log_rate(set[b])) + W(set[a], set[b]) > kWithinFraction * delta_)
        return false;
  return true;
}

void Selection::screen() {
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < n_; ++i)
    if (!eliminated_[i] && !withdrawn_[i]) in.push_back(i);
  // Survivors that the rounds cannot tell apart within the zone stop
  // together, before an elimination by a difference inside it.
  if (in.size() >= 2 && within_zone(in)) {
    stop_ = Stop::Within;
    return;
  }
  // KN's screening against the survivors of the round before: every
  // elimination of this round is judged on the same set. A pair already
  // within the zone does not screen: KN would drop the one a hair behind
  // once the pair's width reaches 0, and the answer would name one method
  // where the rounds cannot tell two apart; the pair stops together
  // instead, once the others are out. KN bounds each pair's crossing
  // over its whole path, whether or not the other is still in, so
  // screening less keeps the bound (SelectionGuarantee measures it).
  std::vector<std::optional<Elimination>> out(n_);
  for (std::size_t i : in) {
    double worst = 0;
    for (std::size_t l : in) {
      if (l == i || within_zone({i, l})) continue;
      const double behind = mean_log_rate(l) - W(i, l) - mean_log_rate(i);
      if (behind > worst) worst = behind, out[i] = Elimination{rounds_, l};
    }
  }
  std::vector<std::size_t> left;
  for (std::size_t i : in) {
    if (out[i]) eliminated_[i] = out[i];
    else left.push_back(i);
  }
  if (left.empty()) {
    stop_ = Stop::NoCandidate;
    return;
  }
  if (left.size() == 1) {
    stop_ = Stop::One;
    return;
  }
  if (within_zone(left)) stop_ = Stop::Within;
}

std::vector<std::size_t> Selection::survivors() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n_; ++i)
    if (!eliminated_[i] && !withdrawn_[i]) out.push_back(i);
  std::stable_sort(out.begin(), out.end(),
                   [&](std::size_t a, std::size_t b) { return mean_log_rate(a) > mean_log_rate(b); });
  return out;
}

std::optional<std::size_t> Selection::pick() const {
  auto s = survivors();
  if (s.empty() || rounds_ == 0) return std::nullopt;
  return s.front();
}

unsigned Selection::rounds_bound() const {
  if (rounds_ < n0_) return n0_;
  const auto s = survivors();
  double most = rounds_;
  for (std::size_t a = 0; a < s.size(); ++a)
    for (std::size_t b = a + 1; b < s.size(); ++b)
      most = std::max(most, std::floor(h2_ * pair_variance(s[a], s[b]) / (delta_ * delta_)) + 1);
  return most > 1e9 ? 1000000000u : static_cast<unsigned>(most);
}

unsigned Selection::rounds_bound(std::size_t i, double indifference) const {
  if (rounds_ < n0_) return n0_;
  const double d = std::log(indifference);
  double most = rounds_;
  for (std::size_t l : survivors())
    if (l != i) most = std::max(most, std::floor(h2_ * pair_variance(i, l) / (d * d)) + 1);
  return most > 1e9 ? 1000000000u : static_cast<unsigned>(most);
}

std::string_view to_string(Selection::Stop stop) {
  static constexpr NameTable<Selection::Stop, 5> kNames{{{Selection::Stop::Running, "running"},
                                                         {Selection::Stop::One, "one"},
                                                         {Selection::Stop::Within, "within"},
                                                         {Selection::Stop::Budget, "budget"},
                                                         {Selection::Stop::NoCandidate, "no candidate"}}};
  return name_of(kNames, stop);
}

}  // namespace iolab::decision
