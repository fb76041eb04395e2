// The trials run_decision makes per condition (decision.h): interleaved
// rounds in this process (RoundsTrial, decision_run.cpp), or, for the
// past-memory columns, the same rounds in a child inside a memory cgroup,
// paced from here (decision_memory.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/decision/design.h"
#include "iolab/decision/schedule.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"

namespace iolab::suites {

// What a condition's records say of how it was judged.
struct RecordFacts {
  decision::Stop stop = decision::Stop::Selected;
  std::string why;   // budget: what ran out
  unsigned rounds = 0;
  double indifference = 0, confidence = 0;
  unsigned first_stage = 0;
  // What the live selection ended with, by candidate index: the replay of
  // the records (decision/verdict.h) is checked against it.
  std::optional<std::size_t> pick;
  std::vector<std::size_t> within;
};
RecordFacts facts_of(const decision::Selection& s, const decision::ConditionTrial::Ending& ending);
nlohmann::json to_json(const RecordFacts& f);
RecordFacts facts_from(const nlohmann::json& j);

// The condition's candidates in interleaved rounds (harness::Rounds) on
// `scratch`; its records go to `out`. With `workload` named, the candidates
// are `workloads` (one per d.candidates, whose labels and traits the records
// carry) and the records name the workload (keys::kWorkload), not a
// condition of the design: a replayed trace's methods.
class RoundsTrial final : public decision::ConditionTrial {
 public:
  RoundsTrial(const harness::RunConfig& config, io::ScratchDir& scratch, const decision::DesignedCondition& d,
              std::uint64_t seed, unsigned first_stage, double min_time, std::vector<results::Result>& out,
              std::string workload = {}, std::vector<harness::WorkloadCandidate> workloads = {});
  ~RoundsTrial() override;
  std::vector<std::string> start() override;
  Round round(const std::vector<bool>& in_play, const std::function<bool()>& more) override;
  void finish(const decision::Selection& selection, const Ending& ending) override;
  void finish_with(const RecordFacts& facts);

 private:
  std::vector<harness::FileExperiment> prepared(std::vector<harness::FileExperiment> row);
  void remove_prepared() noexcept;
  double min_time_;
  harness::Runner runner_;
  const decision::DesignedCondition& d_;
  std::uint64_t seed_;
  unsigned first_stage_;
  std::vector<results::Result>& out_;
  std::unique_ptr<harness::Rounds> rounds_;
  std::vector<bool> retired_;
  std::string workload_;
  std::vector<harness::WorkloadCandidate> workloads_;
  std::vector<std::filesystem::path> prepared_;  // the shared read file, this trial's to remove
};

// The past-memory columns' trial: the same rounds in a child process inside
// one memory cgroup for the whole condition.
std::unique_ptr<decision::ConditionTrial> make_memory_trial(harness::Runner& runner, const decision::DesignedCondition& d,
                                                            std::uint64_t seed, unsigned first_stage, double min_time,
                                                            std::vector<results::Result>& out);

}  // namespace iolab::suites
