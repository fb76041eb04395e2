// The decision's past-memory columns (decision/design.h, Column::PastMemory
// and PastMemoryDirect): random reads of a file four times the page cache a
// memory cgroup leaves it, through the page cache one request at a time, or
// by O_DIRECT at depth 1 and 32.
//
// One child, one group: the whole condition (every candidate) runs in one
// child process inside one memory cgroup, so the candidates share one page
// cache as the threads of one process on a machine with too little memory
// would. The group's limit is the cache's room plus the memory the
// candidates' buffers and plans take, plus a margin, so every candidate sees
// the same room: before every pass the harness sets it from what the group
// then holds besides its page cache (CacheState::Full), because each
// candidate allocates its buffers as its setup comes. Until the first pass
// it is the room plus the buffers' planned size plus a generous margin. The
// file is written once, in the child, and read by every candidate.
//
// The rounds are decision_run.cpp's RoundsTrial; the selection that judges
// them and the schedule that paces them are this process's: each step is a
// message to the child (the candidates in play with each round; the rates
// and the trust filter's findings back), and before each repetition the
// child asks whether the budget still allows it, so the budget binds this
// condition as it binds the others.
//
// The cache state is results::CacheState::Full: before every timed pass the
// group's page cache holds at least thresholds::kFullCacheMin of the room
// (proven from its memory.stat), and nothing is evicted between passes:
// steady eviction is the regime. A pass reads a window of the candidate's
// own permutation of the file's blocks, on from where its last pass
// stopped (harness::FileExperiment::pass_blocks).

#include <algorithm>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "decision_trials.h"
#include "iolab/base/error.h"
#include "iolab/base/proc.h"
#include "iolab/harness/memory_cgroup.h"
#include "memory/child_files.h"
#include "memory/counters.h"

namespace iolab::suites {

namespace {

// What the child takes besides the candidates' buffers and plans until the
// first pass sets the limit from what the group holds (the code and heap
// it inherited and touches, the kernel's page tables charged to the group),
// generously: the buffers are planned by harness::experiment_memory.
constexpr std::uint64_t kSetupSlack = 32ull << 20;

// The messages between this process and the child, one step of ConditionTrial each.
constexpr const char* kStart = "start";
constexpr const char* kRound = "round ";     // then the candidates in play, as JSON
constexpr const char* kAsk = "more?";        // the child, before each repetition
constexpr const char* kRoundDone = "round: ";  // then the round, as JSON
constexpr const char* kFinish = "finish ";   // then the record facts, as JSON

// What the child's candidates allocate when the rounds start.
std::uint64_t buffers_of(const decision::DesignedCondition& d) {
  long double sum = 0;
  for (const auto& e : d.experiments) sum += harness::experiment_memory(e);
  return static_cast<std::uint64_t>(sum);
}

nlohmann::json round_json(const decision::ConditionTrial::Round& r) {
  nlohmann::json untrusted = nlohmann::json::array();
  for (const auto& u : r.untrusted) untrusted.push_back(u ? nlohmann::json(*u) : nlohmann::json(nullptr));
  return {{"complete", r.complete}, {"rates", r.rates}, {"untrusted", untrusted}};
}

decision::ConditionTrial::Round round_from(const nlohmann::json& j) {
  decision::ConditionTrial::Round r;
  r.complete = j.at("complete").get<bool>();
  r.rates = j.at("rates").get<std::vector<double>>();
  for (const auto& u : j.at("untrusted"))
    r.untrusted.push_back(u.is_string() ? std::optional<std::string>(u.get<std::string>()) : std::nullopt);
  return r;
}

class MemoryTrial final : public decision::ConditionTrial {
 public:
  MemoryTrial(harness::Runner& runner, harness::CgroupRoot root, const decision::DesignedCondition& d, std::uint64_t seed,
              unsigned first_stage, double min_time, std::vector<results::Result>& out)
      : runner_(runner), root_(std::move(root)), d_(d), seed_(seed), first_stage_(first_stage), min_time_(min_time),
        out_(out), room_(d.experiments.at(0).cache_room), buffers_(buffers_of(d)),
        setup_limit_(room_ + buffers_ + kSetupSlack) {}
  // On an error: the child killed, its group and its files removed.
  ~MemoryTrial() override { end_child(); }

  std::vector<std::string> start() override {
    group_ = std::make_unique<harness::MemoryCgroup>(root_, setup_limit_);
    // The child's files go in a directory of their own (memory/child_files.h).
    child_scratch_ = std::make_unique<io::ScratchDir>(runner_.scratch().path());
    const std::filesystem::path dir = child_scratch_->path();
    session_ = std::make_unique<harness::ChildSession>(
        *group_, [this](harness::ParentLink& link) { return in_child(link); },
        [dir] { memory::remove_child_dir(dir); });
    session_->send(kStart);
    return nlohmann::json::parse(session_->receive()).get<std::vector<std::string>>();
  }
  Round round(const std::vector<bool>& in_play, const std::function<bool()>& more) override {
    session_->send(std::string(kRound) + nlohmann::json(in_play).dump());
    for (;;) {
      const std::string m = session_->receive();
      if (m == kAsk) {
        session_->send(more() ? "yes" : "no");
        continue;
      }
      if (!m.starts_with(kRoundDone)) throw Error("run", group_->description(), "the child answered '" + m + "' to a round");
      return round_from(nlohmann::json::parse(m.substr(std::string_view(kRoundDone).size())));
    }
  }
  void finish(const decision::Selection& selection, const Ending& ending) override {
    session_->send(std::string(kFinish) + to_json(facts_of(selection, ending)).dump());
    const std::string text = session_->finish();
    end_child();
    results::Results back = results::results_from_json(nlohmann::json::parse(text), "the past-memory condition's child");
    for (auto& r : back.results) out_.push_back(runner_.report(std::move(r)));
  }

 private:
  // The child's side: the condition's file, then the rounds, one message at a time.
  std::string in_child(harness::ParentLink& link) {
    const harness::RunConfig config = memory::unreported(runner_.config());  // the parent reports the records
    const std::filesystem::path file = child_scratch_->create_unique_file("past-memory");
    harness::write_pattern_file(file, decision::kPastMemoryRatio * room_, config.seed);
    decision::DesignedCondition mine = d_;
    for (auto& e : mine.experiments) {
      e.prepared_file = file;  // one file for every candidate
      e.memory_group = group_.get();
    }
    std::vector<results::Result> records;
    auto trial = std::make_unique<RoundsTrial>(config, *child_scratch_, mine, seed_, first_stage_, min_time_, records);
    nlohmann::json anon = nullptr;
    for (bool done = false; !done;) {
      const std::string m = link.receive();
      if (m == kStart) {
        link.send(nlohmann::json(trial->start()).dump());
      } else if (m.starts_with(kRound)) {
        const auto in_play = nlohmann::json::parse(m.substr(std::string_view(kRound).size())).get<std::vector<bool>>();
        const Round r = trial->round(in_play, [&link] {
          link.send(kAsk);
          return link.receive() == "yes";
        });
        link.send(std::string(kRoundDone) + round_json(r).dump());
      } else if (m.starts_with(kFinish)) {
        // The group's anonymous memory while every candidate's buffers are still allocated: what the limit planned for.
        if (auto a = proc::keyed_value(group_->path() / "memory.stat",
                                       group_->version() == harness::CgroupVersion::V2 ? "anon" : "rss"))
          anon = *a;
        trial->finish_with(facts_from(nlohmann::json::parse(m.substr(std::string_view(kFinish).size()))));
        done = true;
      } else {
        throw Error("run", group_->description(), "the parent sent '" + m + "'");
      }
    }
    trial.reset();
    child_scratch_->remove_file(file);
    for (auto& r : records) {
      r.extra["memory_limit_bytes"] = room_;  // the page cache's room
      r.extra["cgroup_limit_bytes"] = group_->limit_bytes();  // the last set (the harness's, before a pass)
      r.extra["cgroup_setup_limit_bytes"] = setup_limit_;     // until the first pass
      r.extra["cgroup_buffers_bytes"] = buffers_;             // planned for the candidates' buffers and plans
      r.extra["cgroup_anon_bytes"] = anon;         // the group's, measured before the last round's records
      r.extra["working_set_ratio"] = decision::kPastMemoryRatio;
      r.extra["cgroup"] = group_->description();
      r.extra["one_child"] = "every candidate in one child process in one memory cgroup, one file";
      if (!r.skipped) memory::add_counters(r);
    }
    results::Results all;
    all.results = std::move(records);
    return results::to_json(all).dump();
  }

  void end_child() noexcept {
    session_.reset();  // kills the child if it still runs
    if (group_) group_->remove();
    if (child_scratch_) memory::remove_child_files(child_scratch_->path());
    child_scratch_.reset();
  }

  harness::Runner& runner_;
  harness::CgroupRoot root_;
  const decision::DesignedCondition& d_;
  std::uint64_t seed_;
  unsigned first_stage_;
  double min_time_;
  std::vector<results::Result>& out_;
  std::uint64_t room_, buffers_, setup_limit_;
  std::unique_ptr<harness::MemoryCgroup> group_;
  std::unique_ptr<io::ScratchDir> child_scratch_;
  std::unique_ptr<harness::ChildSession> session_;
};

}  // namespace

std::unique_ptr<decision::ConditionTrial> make_memory_trial(harness::Runner& runner, const decision::DesignedCondition& d,
                                                            std::uint64_t seed, unsigned first_stage, double min_time,
                                                            std::vector<results::Result>& out) {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  if (!place.root) throw Error("run", d.condition.key(), place.why);  // the design said it could: the machine changed since
  return std::make_unique<MemoryTrial>(runner, *place.root, d, seed, first_stage, min_time, out);
}

}  // namespace iolab::suites
