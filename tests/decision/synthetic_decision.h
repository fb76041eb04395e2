// A condition's records as a live `iolab recommend` makes them, without the
// hardware: seeded rates (log-normal noise around each candidate's rate, a
// factor every candidate shares per round) judged round by round by the
// real selection, each candidate's samples ending where it was eliminated.
// What the verdict's replay, the seeds' rules and the report read.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "iolab/decision/selection.h"
#include "iolab/decision/verdict.h"
#include "iolab/results/record.h"

namespace iolab::testing {

struct SyntheticCandidate {
  std::string label;
  std::vector<std::string> traits;  // io::trait_names words ("maps_file", ...)
  double mib_s = 100;
};

inline std::vector<results::Result> synthetic_condition(const decision::Condition& c,
                                                        const std::vector<SyntheticCandidate>& cands, double sd,
                                                        std::uint64_t seed, unsigned max_rounds = 400,
                                                        decision::Guarantee g = {}) {
  namespace k = decision::keys;
  const std::size_t n = cands.size();
  decision::Selection sel(n, g);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<std::vector<double>> seconds(n);
  // A repetition moves 1 GiB: at up to 5 GiB/s it lasts longer than the 50 ms a figure needs.
  const double bytes = 1 << 30;
  while (!sel.done() && sel.rounds() < max_rounds) {
    const double shared = 0.05 * normal(rng);
    std::vector<double> rates(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!sel.in_play(i)) continue;
      seconds[i].push_back(bytes / (cands[i].mib_s * (1 << 20) * std::exp(shared + sd * normal(rng))));
      rates[i] = bytes / seconds[i].back();  // as the replay computes it from the record
    }
    sel.add_round(rates);
  }
  if (!sel.done()) sel.stop_for_budget();
  const std::string stop = sel.stop() == decision::Selection::Stop::Budget ? "budget" : "selected";
  std::vector<results::Result> out;
  for (std::size_t i = 0; i < n; ++i) {
    results::Result r;
    r.suite = "decision";
    r.experiment = c.key();
    r.method = cands[i].label;
    r.op = c.row.op;
    r.block_size = c.size;
    r.file_size = 1 << 30;
    r.bytes = 1 << 30;
    r.ops = r.bytes / std::max<std::uint64_t>(1, c.size);
    r.passes = 1;
    r.verified = true;
    r.samples_s = seconds[i];
    r.reps = static_cast<unsigned>(r.samples_s.size());
    r.extra[k::kCondition] = c.key();
    r.extra[k::kCandidate] = cands[i].label;
    r.extra[k::kIndex] = i;
    r.extra[k::kTraits] = cands[i].traits;
    r.extra[k::kStop] = stop;
    r.extra[k::kRounds] = sel.rounds();
    r.extra[k::kIndifference] = g.indifference;
    r.extra[k::kConfidence] = g.confidence;
    r.extra[k::kFirstStage] = decision::kFirstStage;
    if (auto p = sel.pick()) r.extra[k::kPick] = cands[*p].label;
    nlohmann::json within = nlohmann::json::array();
    for (auto w : sel.survivors()) within.push_back(cands[w].label);
    r.extra[k::kWithin] = within;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace iolab::testing
