// A condition measured on a fake clock: synthetic rates around each
// candidate's true log rate (normal or heavy-tailed noise, a factor every
// candidate shares per round, a slow drift of it), each turn costing a fixed
// time. The simulation of the guarantee and the schedule's tests drive the
// real scheduler and selection with it.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "iolab/decision/schedule.h"

namespace iolab::testing {

struct World {
  std::string name;
  std::vector<double> mu;   // true log rates
  double sd = 0.03;         // each candidate's own noise per round (log)
  bool heavy = false;       // Student t with 3 degrees of freedom, scaled to sd
  double common_sd = 0;     // a per-round factor every candidate shares (the machine's speed that round)
  double drift = 0;         // and a slow drift of it, per round
  bool least_favourable = false;  // judge correct selection (the best itself), not within the zone
  // The first `start_rounds` rounds' own noise, when it differs from the
  // rest (a cold start, a neighbour's burst during the first stage).
  double start_sd = 0;
  unsigned start_rounds = 0;
};

struct Outcome {
  std::size_t pick = SIZE_MAX;
  unsigned rounds = 0;
  decision::Stop stop = decision::Stop::NotRun;
  std::string why;
  double indifference = 0;
};

class SyntheticTrial final : public decision::ConditionTrial {
 public:
  SyntheticTrial(const World& w, std::uint64_t seed, double& clock, Outcome& out, double turn_s = 0.1, double setup_s = 0.2)
      : w_(w), rng_(seed), clock_(clock), out_(out), turn_s_(turn_s), setup_s_(setup_s) {}
  std::vector<std::string> start() override {
    clock_ += setup_s_ * static_cast<double>(w_.mu.size());
    return std::vector<std::string>(w_.mu.size());
  }
  Round round(const std::vector<bool>& in_play, const std::function<bool()>& more) override {
    Round r;
    r.rates.assign(w_.mu.size(), 0);
    r.untrusted.assign(w_.mu.size(), std::nullopt);
    std::normal_distribution<double> normal(0, 1);
    std::chi_squared_distribution<double> chi3(3);
    const double common = w_.common_sd * normal(rng_) + w_.drift * rounds_;
    for (std::size_t i = 0; i < w_.mu.size(); ++i) {
      if (!in_play[i]) continue;
      if (!more()) return r;
      clock_ += turn_s_;
      double e = normal(rng_);
      if (w_.heavy) e = e / std::sqrt(chi3(rng_) / 3) * std::sqrt(1.0 / 3);
      const double sd = rounds_ < w_.start_rounds ? w_.start_sd : w_.sd;
      r.rates[i] = std::exp(w_.mu[i] + common + sd * e);
    }
    ++rounds_;
    r.complete = true;
    return r;
  }
  void finish(const decision::Selection& s, const Ending& ending) override {
    out_.pick = s.pick().value_or(SIZE_MAX);
    out_.rounds = s.rounds();
    out_.stop = ending.stop;
    out_.why = ending.why;
    out_.indifference = s.guarantee().indifference;
  }

 private:
  const World& w_;
  std::mt19937_64 rng_;
  double& clock_;
  Outcome& out_;
  double turn_s_, setup_s_;
  unsigned rounds_ = 0;
};

}  // namespace iolab::testing
