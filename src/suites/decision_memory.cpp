// The decision table's larger-than-memory column (decision.h,
// kLargerThanMemory; issue 24's last item): random reads of a file four
// times the page cache a memory cgroup leaves it, by every method that can
// read, through the page cache or O_DIRECT.
//
// One child, one group: the whole cell (every candidate at both
// conditions) runs in one child process inside one memory cgroup, so the
// candidates share one page cache as the threads of one process on a
// machine with too little memory would. The group's limit is the cache's
// room plus the memory the candidates' buffers and plans take, plus a
// margin, so every candidate sees the same room: before every pass the
// harness sets it from what the group then holds besides its page cache
// (CacheState::Full), because each candidate allocates its buffers as its
// setup comes (up to 32 MiB for a queue of 32 1020 KiB reads), and a limit
// planned once left the first candidates a cache of twice the room while
// they calibrated. Until the first pass it is the room plus the buffers'
// planned size plus a generous margin. The file is written once, in the
// child, and read by every candidate.
//
// The rounds are decision.cpp's (make_rounds_trial: harness::Rounds,
// harness::decide and the retirement of beaten candidates); the schedule
// that paces them is this process's (schedule_decision): each step is a
// message to the child, and before each repetition the child asks whether
// the budget still allows it, so the table's budget binds this cell as it
// binds the others.
//
// The cache state is harness::CacheState::Full: before every timed pass the
// group's page cache holds at least thresholds::kFullCacheMin of the room
// (proven from its memory.stat), and nothing is evicted between passes:
// steady eviction is the regime. A pass reads a window of the candidate's
// own permutation of the file's blocks, on from where its last pass
// stopped (harness::FileExperiment::pass_blocks), so passes stay short
// where a method reads a few hundred blocks a second past memory (mmap)
// and the engine sizes each candidate's repetitions from its own passes.

#include <algorithm>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "decision_trials.h"
#include "iolab/base/error.h"
#include "iolab/base/proc.h"
#include "iolab/base/splitmix.h"
#include "iolab/base/units.h"
#include "iolab/harness/memory_cgroup.h"
#include "iolab/io/registry.h"
#include "memory/child_files.h"
#include "memory/counters.h"

namespace iolab::suites {

namespace {

// A pass reads at least this many blocks: short enough that mmap, at ~160
// random 4 KiB reads a second past memory here, makes a pass of ~0.1 s, so
// the engine sizes its repetitions from its own passes.
constexpr std::uint64_t kPassBlocks = 16;
// A queued method's pass is at least this many queue-fulls, so its queue
// runs full for most of the pass (it fills at the start and drains at the
// end of every pass).
constexpr std::uint64_t kPassQueueFulls = 4;
// The verification pass checks this many blocks of the candidate's
// permutation, every byte, through the method itself: a bounded sample
// (mmap's takes ~0.2 s at 4 KiB), stated in the record (verified_bytes,
// verified_fraction). Timed passes check every call's byte count and the
// last block read.
constexpr std::uint64_t kVerifyBlocks = 32;
// What the child takes besides the candidates' buffers and plans until the
// first pass sets the limit from what the group holds (the code and heap
// it inherited and touches, the kernel's page tables charged to the group),
// generously: the buffers are planned by harness::experiment_memory, within
// 0.5% of what the group held here.
constexpr std::uint64_t kSetupSlack = 32ull << 20;

// The messages between this process and the child, one step of CellTrial each.
constexpr const char* kStart = "start";
constexpr const char* kStarted = "started";
constexpr const char* kRound = "round";
constexpr const char* kAsk = "more?";  // the child, before each repetition
constexpr const char* kJudge = "judge";
constexpr const char* kFinish = "finish\n";  // then the stop's words

// A permutation seed per candidate: independent random streams, so no
// candidate reads the blocks another just brought into the cache (it finds
// them there as often as a random read of the file would).
std::uint64_t order_seed(std::size_t index) { return splitmix64(0, index); }

// What the child's candidates allocate when the rounds start: every candidate at every condition at once.
std::uint64_t buffers_of(const DecisionCell& cell) {
  long double sum = 0;
  for (const auto& row : cell.experiments)
    for (const auto& e : row) sum += harness::experiment_memory(e);
  return static_cast<std::uint64_t>(sum);
}

nlohmann::json verdict_json(const harness::Verdict& v) {
  return {{"kind", harness::to_string(v.kind)},
          {"chosen", v.chosen},
          {"ranking", v.ranking},
          {"settled", v.settled},
          {"past_deciding", v.past_deciding},
          {"rounds_needed", v.rounds_needed},
          {"reason", v.reason}};
}

// What the schedule judges a cell by (its kind, whether it is final, the
// rounds a pair would need); the table rebuilds the whole verdict from the records.
harness::Verdict verdict_from(const nlohmann::json& j) {
  harness::Verdict v;
  const std::string kind = j.at("kind").get<std::string>();
  v.kind = kind == "winner" ? harness::Verdict::Kind::Winner
           : kind == "tie"  ? harness::Verdict::Kind::Tie
                            : harness::Verdict::Kind::Undecided;
  v.chosen = j.at("chosen").get<std::vector<std::size_t>>();
  v.ranking = j.at("ranking").get<std::vector<std::size_t>>();
  v.settled = j.at("settled").get<std::vector<bool>>();
  v.past_deciding = j.at("past_deciding").get<bool>();
  v.rounds_needed = j.at("rounds_needed").get<double>();
  v.reason = j.at("reason").get<std::string>();
  return v;
}

class MemoryCellTrial final : public CellTrial {
 public:
  MemoryCellTrial(harness::Runner& runner, harness::CgroupRoot root, const DecisionCell& cell, std::size_t index,
                  const DecisionSettings& settings, double min_time, std::vector<harness::Result>& out)
      : runner_(runner), root_(std::move(root)), cell_(cell), index_(index), settings_(settings), min_time_(min_time),
        out_(out), room_(cell.experiments.at(0).at(0).cache_room), buffers_(buffers_of(cell)),
        setup_limit_(room_ + buffers_ + kSetupSlack) {}
  // On an error: the child killed, its group and its files removed.
  ~MemoryCellTrial() override { end_child(); }

  void start() override {
    group_ = std::make_unique<harness::MemoryCgroup>(root_, setup_limit_);
    // The child's files go in a directory of their own (memory/child_files.h).
    child_scratch_ = std::make_unique<io::ScratchDir>(runner_.scratch().path());
    const std::filesystem::path dir = child_scratch_->path();
    session_ = std::make_unique<harness::ChildSession>(
        *group_, [this](harness::ParentLink& link) { return in_child(link); },
        [dir] { memory::remove_child_dir(dir); });
    session_->send(kStart);
    if (std::string m = session_->receive(); m != kStarted)
      throw Error("run", group_->description(), "the child answered '" + m + "' to " + kStart);
  }
  bool round(const std::function<bool()>& more) override {
    session_->send(kRound);
    for (;;) {
      const std::string m = session_->receive();
      if (m != kAsk) return m == "complete";
      session_->send(more() ? "yes" : "no");
    }
  }
  harness::Verdict judge() override {
    session_->send(kJudge);
    return verdict_from(nlohmann::json::parse(session_->receive()));
  }
  void finish(const std::string& stop) override {
    session_->send(std::string(kFinish) + stop);
    const std::string text = session_->finish();
    end_child();
    harness::Results back = harness::results_from_json(nlohmann::json::parse(text), "the larger-than-memory cell's child");
    for (auto& r : back.results) out_.push_back(runner_.report(std::move(r)));
  }

 private:
  // The child's side: the cell's file, then the rounds, one message at a time.
  std::string in_child(harness::ParentLink& link) {
    const harness::RunConfig config = memory::unreported(runner_.config());  // the parent reports the records
    const std::filesystem::path file = child_scratch_->create_unique_file("larger-than-memory");
    harness::write_pattern_file(file, kLargerThanMemoryRatio * room_, config.seed);
    DecisionCell mine = cell_;
    for (auto& row : mine.experiments)
      for (auto& e : row) {
        e.prepared_file = file;  // one file for every candidate at both sizes
        e.memory_group = group_.get();
      }
    std::vector<harness::Result> records;
    std::unique_ptr<CellTrial> trial = make_rounds_trial(config, *child_scratch_, mine, index_, settings_, min_time_, records);
    nlohmann::json anon = nullptr;
    for (bool done = false; !done;) {
      const std::string m = link.receive();
      if (m == kStart) {
        trial->start();
        link.send(kStarted);
      } else if (m == kRound) {
        const bool whole = trial->round([&link] {
          link.send(kAsk);
          return link.receive() == "yes";
        });
        link.send(whole ? "complete" : "cut");
      } else if (m == kJudge) {
        link.send(verdict_json(trial->judge()).dump());
      } else if (m.starts_with(kFinish)) {
        // The group's anonymous memory while every candidate's buffers are still allocated: what the limit planned for.
        if (auto a = proc::keyed_value(group_->path() / "memory.stat",
                                       group_->version() == harness::CgroupVersion::V2 ? "anon" : "rss"))
          anon = *a;
        trial->finish(m.substr(std::string_view(kFinish).size()));
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
      r.extra["working_set_ratio"] = kLargerThanMemoryRatio;
      r.extra["cgroup"] = group_->description();
      r.extra["one_child"] = "every candidate at both sizes in one child process in one memory cgroup, one file";
      if (!r.skipped) memory::add_counters(r);
    }
    harness::Results all;
    all.results = std::move(records);
    return harness::to_json(all).dump();
  }

  void end_child() noexcept {
    session_.reset();  // kills the child if it still runs
    if (group_) group_->remove();
    if (child_scratch_) memory::remove_child_files(child_scratch_->path());
    child_scratch_.reset();
  }

  harness::Runner& runner_;
  harness::CgroupRoot root_;
  const DecisionCell& cell_;
  std::size_t index_;
  const DecisionSettings& settings_;
  double min_time_;
  std::vector<harness::Result>& out_;
  std::uint64_t room_, buffers_, setup_limit_;
  std::unique_ptr<harness::MemoryCgroup> group_;
  std::unique_ptr<io::ScratchDir> child_scratch_;
  std::unique_ptr<harness::ChildSession> session_;
};

}  // namespace

std::string larger_than_memory_problem() {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  return place.root ? "" : place.why;
}

void shape_larger_than_memory(harness::FileExperiment& e, std::uint64_t memory_room, std::size_t index) {
  const io::MethodTraits t = io::find_file_method(e.method).traits(e.options);
  e.pattern = harness::AccessPattern::Rand;
  e.cache = harness::CacheState::Full;
  e.cache_room = memory_room;
  e.pass_blocks = std::max(kPassBlocks, t.queued ? kPassQueueFulls * std::max(1u, e.options.queue_depth) : 0);
  e.verify_blocks = kVerifyBlocks;
  e.order_seed = order_seed(index);
  e.experiment = "random read " + size_label(e.block_size) + ", file " + std::to_string(kLargerThanMemoryRatio) +
                 "x a " + size_label(memory_room) + " page cache";
}

std::unique_ptr<CellTrial> make_memory_cell_trial(harness::Runner& runner, const DecisionCell& cell, std::size_t index,
                                                  const DecisionSettings& settings, double min_time,
                                                  std::vector<harness::Result>& out) {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  if (!place.root) throw Error("run", cell.key(), place.why);  // the design said it could: the machine changed since
  return std::make_unique<MemoryCellTrial>(runner, *place.root, cell, index, settings, min_time, out);
}

}  // namespace iolab::suites
