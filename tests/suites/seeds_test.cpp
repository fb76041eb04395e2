// The seed suites at the tiny scale: every one runs here, quickly, and every
// record it yields is either verified or skipped with a reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {

// The seed suites run file experiments at the tiny scale here; store and
// parallel, also in the seeds group, have their own tests.
const std::vector<std::string> kSeedSuites = {"seq-read", "write-buffering", "buffer-alloc", "write-path",
                                              "copy",     "direct",          "packet-sweep"};
const std::vector<std::string> kSeedsGroup = {"seq-read", "write-buffering", "buffer-alloc", "write-path", "copy",
                                              "direct",   "packet-sweep",    "store",        "parallel"};

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const Suite* s : all_suites()) names.emplace_back(s->name());
  return names;
}

TEST(SeedSuites, AreRegisteredInSeedOrderBeforeTheOtherSuites) {
  std::vector<std::string> names = registered_names();
  ASSERT_GE(names.size(), kSeedSuites.size());
  // The seeds group is every suite the catalogue puts in SuiteGroup::Seeds:
  // every seed's suites, in their documented order (store and parallel last).
  std::vector<std::string> first(names.begin(), names.begin() + static_cast<long>(kSeedSuites.size()));
  EXPECT_EQ(first, kSeedSuites);
  std::vector<std::string> group;
  for (const Suite* s : seed_suites()) group.emplace_back(s->name());
  EXPECT_EQ(group, kSeedsGroup) << "the seeds group is every seed's suites (what `iolab run` runs by default)";
  for (const std::string& n : kSeedSuites) {
    const Suite& s = find_suite(n);
    EXPECT_FALSE(s.seed().empty()) << n;
    EXPECT_FALSE(s.description().empty()) << n;
  }
}

// One repetition, no warm-up; cold by fadvise: tests never drop the machine's page cache.
harness::RunConfig one_repetition_evicting_config() {
  harness::RunConfig config;
  config.reps = 1;
  config.warmup = 0;
  config.min_time = 0;
  config.eviction = results::Eviction::PerFile;
  return config;
}

// The suite at the tiny scale, its files in `scratch`.
std::vector<results::Result> run_tiny(const std::string& suite, io::ScratchDir& scratch) {
  harness::Runner runner(one_repetition_evicting_config(), scratch);
  SuiteOptions options;
  options.scale = Scale::Tiny;
  return find_suite(suite).run(runner, options);
}

class TinyRun : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyRun, YieldsOnlyVerifiedOrSkippedRecords) {
  io::ScratchDir scratch("/tmp");
  std::vector<results::Result> results = run_tiny(GetParam(), scratch);

  ASSERT_FALSE(results.empty());
  std::set<std::string> rows;
  unsigned verified = 0;
  for (const results::Result& r : results) {
    SCOPED_TRACE(r.experiment + " / " + r.method);
    EXPECT_EQ(r.suite, GetParam());
    EXPECT_FALSE(r.experiment.empty());
    EXPECT_FALSE(r.method.empty());
    rows.insert(r.experiment + " / " + r.method + " / " + results::buffer_name(r) + " / " + std::to_string(r.block_size) +
                " / " + results::cache_name(r) + " / " + io::to_string(r.sync) + " / qd" +
                std::to_string(r.queue_depth.value_or(0)) + " / threads " + std::to_string(r.threads));
    if (r.skipped) {
      EXPECT_FALSE(r.skipped->empty()) << "a skip needs its reason";
      EXPECT_FALSE(r.verified);
      EXPECT_TRUE(r.samples_s.empty());
      continue;
    }
    EXPECT_TRUE(r.verified) << "an unverified figure";
    ASSERT_EQ(r.samples_s.size(), 1u);
    EXPECT_GT(r.samples_s[0], 0.0);
    EXPECT_GT(r.bytes, 0u);
    EXPECT_GT(r.ops, 0u);
    ++verified;
  }
  // Skips are for what this machine cannot do; most of every suite runs anywhere.
  EXPECT_GT(verified, results.size() / 2);
  EXPECT_EQ(rows.size(), results.size()) << "two records that nothing tells apart";
  // Every file the suite made is gone again.
  EXPECT_TRUE(scratch.created().empty());
}

INSTANTIATE_TEST_SUITE_P(Seeds, TinyRun, ::testing::ValuesIn(kSeedSuites),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The cost model pins a method's cost per call only from several sizes: the
// packet sweep reads through stdio-unbuffered (seed 001's FileInputStream)
// at every packet and cache state it reads through read(2), with one read(2)
// per call, not only at seq-read's three buffers.
TEST(SeedSuites, PacketSweepReadsThroughStdioUnbufferedAtEveryPacket) {
  io::ScratchDir scratch("/tmp");
  std::vector<results::Result> results = run_tiny("packet-sweep", scratch);
  std::set<std::pair<std::string, std::uint64_t>> unbuffered, syscall;
  for (const results::Result& r : results) {
    if (r.op != results::Op::Read || r.skipped) continue;
    const auto at = std::make_pair(results::cache_name(r), r.block_size);
    if (r.method == "syscall") syscall.insert(at);
    if (r.method != "stdio-unbuffered") continue;
    SCOPED_TRACE(r.experiment);
    unbuffered.insert(at);
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.io_calls, r.ops) << "one read(2) per call";
  }
  EXPECT_EQ(unbuffered, syscall);
  EXPECT_GE(unbuffered.size(), 6u);  // three packets (32 B, 4 KiB, the file), warm and cold
}

TEST(SeedSuites, AttachThePublishedFiguresWhereTheExperimentMatches) {
  io::ScratchDir scratch("/tmp");
  std::vector<results::Result> results = run_tiny("seq-read", scratch);
  unsigned with_reference = 0;
  for (const results::Result& r : results) {
    if (!r.reference) continue;
    ++with_reference;
    // The seed's figures are page-cache figures: they stand beside warm runs only.
    EXPECT_EQ(r.cache, results::CacheState::Warm) << r.experiment << " / " << r.method;
    EXPECT_NE(r.reference->source.find("seed 001"), std::string::npos);
    EXPECT_EQ(r.reference->unit, "MiB/s");
    EXPECT_GT(r.reference->value, 0.0);
  }
  // Four Java paths (stream, nio heap, nio direct, mmap) at three buffer sizes.
  EXPECT_EQ(with_reference, 12u);
}

}  // namespace
}  // namespace iolab::suites
