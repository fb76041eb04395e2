// The decision table's larger-than-memory column: its one cell declares
// every read method (page cache and O_DIRECT, chosen by traits) at the
// band's two edges; where this machine lets iolab make a memory cgroup, a
// tiny run of that cell alone (a 32 MiB room, a 128 MiB file, one pass per
// repetition) comes back verified from a full cache, with the memory
// fields, and leaves no group and no file behind; elsewhere the cell says
// why it cannot be measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "iolab/harness/memory_cgroup.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "our_cgroups.h"
#include "iolab/suites/decision.h"

namespace iolab::suites {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;
const std::string kKey = "read|4 KiB..1 MiB|none|larger than memory";

DecisionCell memory_cell(std::uint64_t room) {
  for (auto& c : decision_design(1 * kMiB, room))
    if (c.column == kLargerThanMemory) return c;
  ADD_FAILURE() << "no larger-than-memory cell";
  return {};
}

TEST(DecisionMemoryDesign, OneCellOfEveryReadMethodAtTheBandsEdges) {
  const auto cells = decision_design(1 * kMiB, 64 * kMiB);
  ASSERT_EQ(std::count_if(cells.begin(), cells.end(), [](const auto& c) { return c.column == kLargerThanMemory; }), 1)
      << "one band has the column; the others get no cell";
  const DecisionCell c = memory_cell(64 * kMiB);
  EXPECT_EQ(c.key(), kKey);
  EXPECT_EQ(c.conditions, (std::vector<std::uint64_t>{4096, 1020 * 1024}));
  // The warm cell's candidates (page cache) and the direct cell's (O_DIRECT), together.
  std::set<std::string> expected;
  for (const auto& other : cells)
    if (other.op == "read" && other.band == c.band && (other.column == "warm" || other.column == "direct"))
      expected.insert(other.candidates.begin(), other.candidates.end());
  EXPECT_EQ(std::set<std::string>(c.candidates.begin(), c.candidates.end()), expected);
  auto any = [&](auto&& pred) { return std::any_of(c.traits.begin(), c.traits.end(), pred); };
  EXPECT_TRUE(any([](const io::MethodTraits& t) { return t.maps_file; }));
  EXPECT_TRUE(any([](const io::MethodTraits& t) { return t.user_space_buffer; }));
  EXPECT_TRUE(any([](const io::MethodTraits& t) { return t.queued && t.bypasses_page_cache; }));
  EXPECT_TRUE(any([](const io::MethodTraits& t) { return t.queued && !t.bypasses_page_cache; }));
  EXPECT_TRUE(any([](const io::MethodTraits& t) { return !t.queued && t.bypasses_page_cache; }));
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  if (!place.root) {
    EXPECT_EQ(c.unmeasurable, place.why);
    EXPECT_TRUE(c.experiments.empty());
    return;
  }
  ASSERT_TRUE(c.unmeasurable.empty()) << c.unmeasurable;
  ASSERT_EQ(c.experiments.size(), 2u);
  std::set<std::uint64_t> seeds;
  for (std::size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(c.experiments[k].size(), c.candidates.size());
    for (std::size_t i = 0; i < c.candidates.size(); ++i) {
      const auto& e = c.experiments[k][i];
      SCOPED_TRACE(c.candidates[i]);
      EXPECT_EQ(e.block_size, c.conditions[k]);
      EXPECT_EQ(e.pattern, harness::AccessPattern::Rand);
      EXPECT_EQ(e.cache, harness::CacheState::Full);
      EXPECT_EQ(e.cache_room, 64 * kMiB);
      EXPECT_GT(e.file_size, 3 * 64 * kMiB);  // 4x the room, in whole packets
      EXPECT_LE(e.file_size, 4 * 64 * kMiB);
      EXPECT_GE(e.pass_blocks, 16u);
      if (c.traits[i].queued) {
        EXPECT_GE(e.pass_blocks, 4u * e.options.queue_depth);
      }
      EXPECT_GT(e.verify_blocks, 0u);
      EXPECT_EQ(io::find_file_method(e.method).traits(e.options).bypasses_page_cache, c.traits[i].bypasses_page_cache);
      if (k == 0) seeds.insert(e.order_seed);
    }
  }
  EXPECT_EQ(seeds.size(), c.candidates.size()) << "each candidate reads its own random stream";
}

// The cell alone at a tiny size, for real: every candidate's records from
// one child in one group, verified, from a full cache.
TEST(DecisionMemoryRun, RunsInOneGroupFromAFullCacheAndLeavesNothing) {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  if (!place.root) GTEST_SKIP() << "no memory cgroup here: " << place.why;
  DecisionCell cell = memory_cell(32 * kMiB);  // a 128 MiB file
  ASSERT_TRUE(cell.unmeasurable.empty()) << cell.unmeasurable;
  // One candidate of each kind, by traits, to keep the test to seconds: a mapping, a positional call through the
  // page cache, a queue through it, O_DIRECT calls, an O_DIRECT queue at its deepest.
  std::vector<std::function<bool(const io::MethodTraits&, unsigned qd)>> kinds = {
      [](const io::MethodTraits& t, unsigned) { return t.maps_file; },
      [](const io::MethodTraits& t, unsigned) {
        return t.positional && !t.maps_file && !t.queued && !t.bypasses_page_cache && !t.user_space_buffer;
      },
      [](const io::MethodTraits& t, unsigned qd) { return t.queued && !t.bypasses_page_cache && qd > 1; },
      [](const io::MethodTraits& t, unsigned) { return !t.queued && t.bypasses_page_cache; },
      [](const io::MethodTraits& t, unsigned qd) { return t.queued && t.bypasses_page_cache && qd > 1; }};
  DecisionCell few = cell;
  few.candidates.clear(), few.traits.clear(), few.experiments.assign(2, {});
  for (const auto& kind : kinds)
    for (std::size_t i = 0; i < cell.candidates.size(); ++i)
      if (kind(cell.traits[i], cell.experiments[0][i].options.queue_depth)) {
        few.candidates.push_back(cell.candidates[i]);
        few.traits.push_back(cell.traits[i]);
        for (std::size_t k = 0; k < 2; ++k) few.experiments[k].push_back(cell.experiments[k][i]);
        break;
      }
  ASSERT_EQ(few.candidates.size(), kinds.size());
  cell = few;
  io::ScratchDir scratch("/tmp");
  harness::RunConfig config;
  config.min_time = 0;  // one pass per repetition
  config.warmup = 1;
  config.latency = false;
  harness::Runner runner(config, scratch);
  DecisionSettings settings;
  settings.budget_s = 600;
  settings.min_rounds = settings.max_rounds = 3;
  settings.min_time = settings.min_time_floor = 0;
  const std::vector<harness::Result> records = run_decision(runner, {cell}, settings);
  ASSERT_EQ(records.size(), 2 * cell.candidates.size());
  for (const auto& r : records) {
    SCOPED_TRACE(r.extra.value("decision_candidate", std::string()) + " at " + std::to_string(r.block_size));
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.extra.value("decision_cell", std::string()), kKey);
    EXPECT_EQ(r.extra.value("memory_limit_bytes", std::uint64_t{0}), 32 * kMiB);
    EXPECT_GT(r.extra.value("cgroup_limit_bytes", std::uint64_t{0}), 32 * kMiB);
    EXPECT_EQ(r.extra.value("working_set_ratio", 0u), 4u);
    EXPECT_NE(r.extra.value("cgroup", std::string()).find("iolab-"), std::string::npos);
    EXPECT_GT(r.extra.value("cgroup_anon_bytes", std::uint64_t{0}), 0u);
    // The full cache and its proof, before every timed pass.
    EXPECT_GE(r.extra.value("cache_full_fraction", 0.0), 0.85);
    EXPECT_NE(r.cache_method.find("a full page cache"), std::string::npos) << r.cache_method;
    const bool direct = std::find(r.extra["decision_traits"].begin(), r.extra["decision_traits"].end(),
                                  "bypasses_page_cache") != r.extra["decision_traits"].end();
    ASSERT_TRUE(r.cache.has_value());
    EXPECT_EQ(*r.cache, direct ? harness::CacheState::Direct : harness::CacheState::Full);
    if (!direct) {
      ASSERT_TRUE(r.resident_fraction.has_value());
      EXPECT_LT(*r.resident_fraction, 0.9) << "the file does not fit: most of it is not resident";
    }
    // A bounded, stated verification sample; every pass a window of the candidate's permutation.
    EXPECT_GT(r.extra.value("verified_bytes", std::uint64_t{0}), 0u);
    EXPECT_LT(r.extra.value("verified_fraction", 1.0), 1.0);
    EXPECT_EQ(r.ops, r.extra.value("pass_blocks", std::uint64_t{0}));
    EXPECT_EQ(r.reps, 3u);
    EXPECT_TRUE(r.extra.contains("major_faults_per_mib"));
    EXPECT_TRUE(r.extra.contains("sys_s_per_mib"));
  }
  EXPECT_EQ(groups_of_this_process(place), 0u) << "a memory cgroup of ours was left";
  EXPECT_TRUE(scratch.created().empty());
  std::vector<std::string> left;
  for (const auto& f : std::filesystem::directory_iterator(scratch.path())) left.push_back(f.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{});
}

}  // namespace
}  // namespace iolab::suites
