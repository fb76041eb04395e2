// Interleaved rounds of candidates (runner.h): one Measurement per
// candidate, one repetition each per round, in a seeded order per round.
#include <utility>

#include "file_workload.h"
#include "iolab/harness/comparison.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/thresholds.h"

namespace iolab::harness {

struct Rounds::Candidate {
  FileExperiment experiment;
  Result record;  // outlives the workload, which writes into it
  std::unique_ptr<Workload> workload;
  LocalTeam team{1};
  std::unique_ptr<Measurement> measurement;
  std::vector<std::size_t> positions;  // its turn in each round
  bool running = false;
};

Rounds::Rounds(Runner& runner, std::vector<FileExperiment> candidates, std::uint64_t seed, unsigned min_rounds)
    : runner_(runner), seed_(seed), min_rounds_(min_rounds == 0 ? 1 : min_rounds) {
  for (auto& e : candidates) {
    auto c = std::make_unique<Candidate>();
    c->experiment = std::move(e);
    candidates_.push_back(std::move(c));
  }
}

Rounds::~Rounds() = default;

void Rounds::start() {
  for (auto& c : candidates_) {
    c->record = labels_of(c->experiment);
    if (auto problem = resource_problem(c->experiment, runner_.scratch().path())) {
      c->record.skipped = *problem;
      continue;
    }
    c->workload = make_file_workload(c->experiment, runner_.config(), runner_.scratch(), c->record);
    EngineSettings s = runner_.settings();
    s.reps = min_rounds_;
    s.latency = s.latency && c->experiment.latency;
    s.on_pass = nullptr;
    c->measurement = std::make_unique<Measurement>(*c->workload, c->team, s, c->record);
    c->running = c->measurement->start();
  }
}

bool Rounds::round(const std::function<bool()>& more) {
  for (auto& c : candidates_) c->positions.push_back(0);
  std::vector<std::size_t> order = round_order(candidates_.size(), seed_, rounds_);
  for (std::size_t turn = 0; turn < order.size(); ++turn) {
    if (more && !more()) {
      // Cut short: the candidates that had no turn record none for this round.
      for (std::size_t rest = turn; rest < order.size(); ++rest) candidates_[order[rest]]->positions.pop_back();
      return false;
    }
    auto& c = *candidates_[order[turn]];
    c.positions.back() = turn;
    if (c.running) c.running = c.measurement->repetition();
  }
  ++rounds_;
  return true;
}

std::vector<std::vector<double>> Rounds::rates() const {
  std::vector<std::vector<double>> out;
  for (const auto& c : candidates_) out.push_back(c->running ? c->measurement->rates() : std::vector<double>{});
  return out;
}

std::vector<std::vector<double>> Rounds::rates_long_enough() const {
  std::vector<std::vector<double>> out = rates();
  for (std::size_t i = 0; i < out.size(); ++i)
    if (candidates_[i]->running && candidates_[i]->measurement->shortest_seconds() < thresholds::kTooShortSeconds)
      out[i].clear();
  return out;
}

std::vector<Result> Rounds::finish() {
  std::vector<Result> out;
  for (auto& c : candidates_) {
    if (c->running && !c->measurement->finish() && !c->record.skipped) c->record.skipped = "no repetition was run";
    c->measurement.reset();
    c->workload.reset();
    if (c->record.skipped) {
      c->record.reps = 0;
      c->record.samples_s.clear();
    }
    c->record.extra["round_seed"] = seed_;
    c->record.extra["rounds"] = rounds_;
    c->record.extra["round_positions"] = c->positions;
    if (runner_.config().on_result) runner_.config().on_result(c->record);
    out.push_back(std::move(c->record));
  }
  candidates_.clear();
  return out;
}

}  // namespace iolab::harness
