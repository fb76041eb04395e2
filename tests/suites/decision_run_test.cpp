// The decision measured for real (suites/decision.h), small: a user's own
// conditions through the live selection, records carrying what the
// replay needs and ending as the run did, the shared read file and the
// past-memory child's group and files gone afterwards.
#include "iolab/suites/decision.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "iolab/decision/verdict.h"
#include "iolab/harness/memory_cgroup.h"
#include "iolab/io/scratch.h"
#include "our_cgroups.h"

namespace iolab::suites {
namespace {

using testing::groups_of_this_process;

struct Place {
  io::ScratchDir scratch{"/tmp"};
  harness::RunConfig config = [] {
    harness::RunConfig c;
    c.min_time = 0.055;  // repetitions just over the 50 ms a figure needs
    c.latency = false;
    return c;
  }();
  harness::Runner runner{config, scratch};
};

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir); it != std::filesystem::recursive_directory_iterator(); ++it)
    n += it->is_regular_file() && it->path().filename() != io::kScratchListName;  // a scratch directory's own list
  return n;
}

TEST(DecisionRun, TheUsersConditionsRunLiveAndReplayTheSame) {
  Place p;
  decision::DesignRequest request;
  request.ops = {results::Op::Read};
  request.columns = {decision::Column::Warm};
  request.sizes = {4096};
  request.max_file = 256 << 10;
  decision::ScheduleSettings settings;
  settings.min_time = settings.min_time_floor = 0.055;
  settings.max_rounds = 12;  // short: a near tie ends "budget", which must replay too
  DecisionRun run = run_decision(p.runner, request, settings, 7);
  ASSERT_EQ(run.schedule.outcomes.size(), 1u);
  const auto& o = run.schedule.outcomes[0];
  EXPECT_TRUE(o.stop == decision::Stop::Selected || o.stop == decision::Stop::Budget) << to_string(o.stop) << ": " << o.why;
  ASSERT_FALSE(run.records.empty());
  for (const auto& r : run.records) {
    EXPECT_EQ(r.extra.at(decision::keys::kCondition), "read|4096|none|warm");
    EXPECT_EQ(r.extra.at(decision::keys::kStop), to_string(o.stop));
    EXPECT_EQ(r.extra.at(decision::keys::kRounds), o.rounds);
    EXPECT_TRUE(r.extra.contains(decision::keys::kTraits));
    if (!r.skipped) {
      EXPECT_TRUE(r.verified);
    }
  }
  const decision::Decision d = decision::decision_from_records(run.records);
  ASSERT_EQ(d.conditions.size(), 1u);
  EXPECT_TRUE(d.conditions[0].replay_agrees) << "the records replay to the live selection's end";
  EXPECT_TRUE(d.conditions[0].pick);
  EXPECT_EQ(files_in(p.scratch.path()), 0u) << "the shared read file is removed";
}

TEST(DecisionRun, UnmeasurableConditionsAreRecordsWithTheReason) {
  Place p;
  decision::DesignRequest request;
  request.ops = {results::Op::Write};
  request.flushes = {"every-16k"};
  request.columns = {decision::Column::Direct};
  request.sizes = {700};
  DecisionRun run = run_decision(p.runner, request, decision::ScheduleSettings{}, 7);
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_NE(run.records[0].skipped.value_or("").find("512 B"), std::string::npos);
  EXPECT_EQ(run.records[0].extra.at(decision::keys::kStop), "unmeasurable");
  const decision::Decision d = decision::decision_from_records(run.records);
  EXPECT_EQ(d.conditions.at(0).stop, decision::Stop::Unmeasurable);
  EXPECT_FALSE(d.conditions[0].candidates.empty()) << "what it would have compared";
}

// Past memory through the page cache, in a child inside a memory cgroup at
// the least room (a 128 MiB file): the candidates' records come back from
// the child with the group's figures, and the group and the child's files go.
TEST(DecisionRun, PastMemoryRunsInAChildAndLeavesNothingBehind) {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  if (!place.root) GTEST_SKIP() << place.why;
  Place p;
  decision::DesignRequest request;
  request.columns = {decision::Column::PastMemory};
  request.sizes = {65536};
  request.memory_room = decision::kMinMemoryRoom;
  decision::ScheduleSettings settings;
  settings.min_time = settings.min_time_floor = 0.055;
  settings.max_rounds = 8;
  const unsigned before = groups_of_this_process(place);
  DecisionRun run = run_decision(p.runner, request, settings, 7);
  ASSERT_EQ(run.schedule.outcomes.size(), 1u);
  std::size_t measured = 0;
  for (const auto& r : run.records) {
    if (r.skipped) continue;
    ++measured;
    EXPECT_EQ(r.extra.at("working_set_ratio"), 4);
    EXPECT_EQ(r.extra.at("memory_limit_bytes"), decision::kMinMemoryRoom);
    EXPECT_EQ(r.cache, results::CacheState::Full);
  }
  EXPECT_GE(measured, 2u);
  EXPECT_TRUE(decision::decision_from_records(run.records).conditions.at(0).replay_agrees);
  EXPECT_EQ(groups_of_this_process(place), before);
  EXPECT_EQ(files_in(p.scratch.path()), 0u);
}

}  // namespace
}  // namespace iolab::suites
