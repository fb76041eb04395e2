// The memory suite at a tiny scale: in real memory cgroups where this
// machine lets iolab make them (root, a memory controller), else every
// record skipped with the reason. Either way no group of ours is left.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "iolab/harness/memory_cgroup.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {

unsigned our_groups(const harness::CgroupPlace& place) {
  if (!place.root) return 0;
  unsigned n = 0;
  const std::string ours = "iolab-" + std::to_string(::getpid()) + "-";
  for (const auto& e : std::filesystem::directory_iterator(place.root->dir))
    n += e.path().filename().string().starts_with(ours);
  return n;
}

TEST(MemorySuite, RunsUnderALimitOrSkipsWithTheReason) {
  io::ScratchDir scratch("/tmp");
  harness::RunConfig config;
  config.reps = 1;
  config.warmup = 0;
  config.min_time = 0;
  harness::Runner runner(config, scratch);
  SuiteOptions options;
  options.scale = Scale::Tiny;
  options.memory_limit = 32u << 20;  // a 16 MiB file (0.5x)
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  std::vector<harness::Result> results = find_suite("memory").run(runner, options);
  ASSERT_EQ(results.size(), 11u);  // 0.5x: 6 random + 5 scans
  for (const harness::Result& r : results) {
    SCOPED_TRACE(r.experiment + " / " + r.method);
    EXPECT_EQ(r.extra.value("memory_limit_bytes", 0u), 32u << 20);
    EXPECT_TRUE(r.extra.contains("working_set_ratio"));
    if (!place.root) {
      ASSERT_TRUE(r.skipped);
      EXPECT_EQ(*r.skipped, place.why);
      continue;
    }
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.bytes, r.file_size);
    ASSERT_TRUE(r.extra.contains("per_second"));
    ASSERT_TRUE(r.extra["per_second"].is_array());
    ASSERT_FALSE(r.extra["per_second"].empty());
    double mib = 0;
    for (const auto& s : r.extra["per_second"]) mib += s["mib"].get<double>();
    EXPECT_NEAR(mib, static_cast<double>(r.file_size) / (1 << 20), 1e-6) << "the series adds up to the pass";
  }
  if (!place.root) GTEST_SKIP() << "no memory cgroup here: " << place.why;
  EXPECT_EQ(our_groups(place), 0u) << "a memory cgroup of ours was left";
  EXPECT_TRUE(scratch.created().empty());
}

}  // namespace
}  // namespace iolab::suites
