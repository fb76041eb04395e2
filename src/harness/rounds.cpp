// Interleaved rounds of candidates (runner.h): one Measurement per
// candidate, one repetition each per round, in a seeded order per round.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "file_workload.h"
#include "iolab/base/proc.h"
#include "iolab/harness/comparison.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {

struct Rounds::Candidate {
  FileExperiment experiment;  // a file experiment's (the workload refers to it)
  WorkloadCandidate made;     // how its record starts and its workload is made
  results::Result record;  // outlives the workload, which writes into it
  std::unique_ptr<Workload> workload;
  LocalTeam team{1};
  std::unique_ptr<Measurement> measurement;
  std::vector<std::size_t> positions;  // its turn in each round it took part in
  bool running = false;
  std::optional<unsigned> retired_after;  // rounds it ran before it was retired
  std::string retired_why;
};

Rounds::Rounds(Runner& runner, std::vector<FileExperiment> candidates, std::uint64_t seed, unsigned min_rounds)
    : runner_(runner), seed_(seed), min_rounds_(min_rounds == 0 ? 1 : min_rounds) {
  for (auto& e : candidates) {
    auto c = std::make_unique<Candidate>();
    c->experiment = std::move(e);
    Candidate* in = c.get();
    c->made.labels = labels_of(in->experiment);
    c->made.latency = in->experiment.latency;
    c->made.make = [this, in](results::Result& record) -> std::unique_ptr<Workload> {
      if (auto problem = resource_problem(in->experiment, runner_.scratch().path())) {
        record.skipped = *problem;
        return nullptr;
      }
      return make_file_workload(in->experiment, runner_.config(), runner_.scratch(), record);
    };
    candidates_.push_back(std::move(c));
  }
}

Rounds::Rounds(Runner& runner, std::vector<WorkloadCandidate> candidates, std::uint64_t seed, unsigned min_rounds)
    : runner_(runner), seed_(seed), min_rounds_(min_rounds == 0 ? 1 : min_rounds) {
  for (auto& w : candidates) {
    auto c = std::make_unique<Candidate>();
    c->made = std::move(w);
    candidates_.push_back(std::move(c));
  }
}

Rounds::~Rounds() = default;

void Rounds::start() {
  for (auto& c : candidates_) {
    c->record = c->made.labels;
    c->workload = c->made.make(c->record);
    if (!c->workload) {
      if (!c->record.skipped) c->record.skipped = "it could not be set up";
      continue;
    }
    EngineSettings s = runner_.settings();
    s.reps = min_rounds_;
    s.latency = s.latency && c->made.latency;
    s.on_pass = nullptr;
    c->measurement = std::make_unique<Measurement>(*c->workload, c->team, s, c->record);
    c->running = c->measurement->start();
  }
}

namespace {

// A round's repetitions run in at most this many parts: the machine's speed
// changes faster than a round, and candidates taking turns a part at a time
// spread each change over every candidate alike, where a whole repetition
// at a time would hand it to one.
constexpr unsigned kMaxParts = 24;

// Passes of a repetition of `passes` that fall in part `part` of `parts`:
// spread evenly, so a candidate with few passes runs them apart.
unsigned share(unsigned passes, unsigned part, unsigned parts) {
  auto upto = [&](unsigned j) {
    return static_cast<unsigned>(static_cast<std::uint64_t>(passes) * j / parts);
  };
  return upto(part + 1) - upto(part);
}

}  // namespace

bool Rounds::round(const std::function<bool()>& more) {
  unsigned parts = 1;
  for (const auto& c : candidates_)
    if (c->running && !c->retired_after) parts = std::max(parts, std::min(c->measurement->passes(), kMaxParts));
  std::vector<bool> took_turn(candidates_.size(), false);
  for (unsigned part = 0; part < parts; ++part) {
    // The seeded order of every candidate, fresh in each part; retired ones skip their turn.
    std::vector<std::size_t> order = round_order(candidates_.size(), seed_, rounds_ * kMaxParts + part);
    for (std::size_t turn = 0; turn < order.size(); ++turn) {
      auto& c = *candidates_[order[turn]];
      if (c.retired_after || !c.running) continue;
      const unsigned count = share(c.measurement->passes(), part, parts);
      if (count == 0) continue;
      if (more && !more()) {
        // Cut short: a candidate whose repetition is complete keeps it; one
        // under way is dropped, so none records a repetition it did not finish.
        for (std::size_t i = 0; i < candidates_.size(); ++i) {
          auto& d = *candidates_[i];
          if (!took_turn[i] || !d.running || d.measurement->passes_left() == d.measurement->passes()) continue;
          d.measurement->abandon_repetition();
          d.positions.pop_back();
        }
        return false;
      }
      if (!took_turn[order[turn]]) {
        took_turn[order[turn]] = true;
        c.positions.push_back(turn);
      }
      c.running = c.measurement->repetition_part(count);
    }
  }
  parts_ = std::max(parts_, parts);
  ++rounds_;
  return true;
}

void Rounds::retire(std::size_t candidate, std::string why) {
  auto& c = *candidates_.at(candidate);
  if (c.retired_after || !c.running) return;
  c.retired_after = static_cast<unsigned>(c.positions.size());
  c.retired_why = std::move(why);
}

bool Rounds::retired(std::size_t candidate) const { return candidates_.at(candidate)->retired_after.has_value(); }

bool Rounds::active() const {
  for (const auto& c : candidates_)
    if (c->running && !c->retired_after) return true;
  return false;
}

std::vector<std::vector<double>> Rounds::rates() const {
  std::vector<std::vector<double>> out;
  for (const auto& c : candidates_) out.push_back(c->running ? c->measurement->rates() : std::vector<double>{});
  return out;
}

std::optional<std::string> Rounds::not_running(std::size_t candidate) const {
  const auto& c = *candidates_.at(candidate);
  if (c.running) return std::nullopt;
  return c.record.skipped.value_or("it stopped running");
}

results::Result Rounds::provisional(std::size_t candidate) const {
  const auto& c = *candidates_.at(candidate);
  if (!c.running || !c.measurement) return c.record;
  return c.measurement->provisional();
}

void Rounds::set_extra(std::size_t candidate, const std::string& key, nlohmann::json value) {
  candidates_.at(candidate)->record.extra[key] = std::move(value);
}

std::vector<results::Result> Rounds::finish() {
  std::vector<results::Result> out;
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
    c->record.extra["round_parts"] = parts_;
    if (c->retired_after) {
      c->record.extra["retired_after_rounds"] = *c->retired_after;
      c->record.extra["retired_because"] = c->retired_why;
    }
    if (runner_.config().on_result) runner_.config().on_result(c->record);
    out.push_back(std::move(c->record));
  }
  candidates_.clear();
  return out;
}

namespace {

bool same_kind(const FileExperiment& a, const FileExperiment& b) {
  return a.op == b.op && a.cache == b.cache && a.sync == b.sync;
}

}  // namespace

std::vector<results::Result> run_interleaved(Runner& runner, const std::vector<FileExperiment>& table,
                                             InterleaveLimits group) {
  std::uint64_t file_room = group.file_bytes;
  if (auto free = io::free_space(runner.scratch().path())) file_room = std::min(file_room, *free / 4);
  long double memory_room = static_cast<long double>(proc::physical_memory_bytes()) / 4;
  if (!(memory_room > 0)) memory_room = static_cast<long double>(group.file_bytes);
  const unsigned reps = runner.config().reps;
  std::vector<results::Result> out;
  out.reserve(table.size());
  for (std::size_t first = 0; first < table.size();) {
    std::size_t end = first + 1;
    std::uint64_t files = file_length(table[first]);
    long double memory = experiment_memory(table[first]);
    while (end < table.size() && same_kind(table[first], table[end])) {
      const std::uint64_t f = file_length(table[end]);
      const long double m = experiment_memory(table[end]);
      if (f > file_room - std::min(files, file_room) || memory + m > memory_room) break;
      files += f;
      memory += m;
      ++end;
    }
    std::vector<FileExperiment> candidates(table.begin() + static_cast<std::ptrdiff_t>(first),
                                           table.begin() + static_cast<std::ptrdiff_t>(end));
    if (runner.config().on_experiment)
      runner.config().on_experiment(candidates.size() == 1
                                        ? experiment_label(labels_of(candidates.front()))
                                        : experiment_label(labels_of(candidates.front())) + " and " +
                                              std::to_string(candidates.size() - 1) + " more, interleaved");
    Rounds rounds(runner, std::move(candidates), runner.config().seed + first, reps);
    rounds.start();
    for (unsigned r = 0; r < reps && rounds.active(); ++r) rounds.round();
    for (results::Result& r : rounds.finish()) out.push_back(std::move(r));
    first = end;
  }
  return out;
}

}  // namespace iolab::harness
