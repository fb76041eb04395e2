// The memory suite's sampler: when the group's page cache filled, to a tick
// or to the pass's end, and never when it did not (issue 40 item 1). The
// page cache is a stand-in function, so the outcome does not depend on time.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "internal/suites/memory/per_second.h"

namespace iolab::suites::memory {
namespace {

TEST(PerSecondSampler, ACacheFullAtThePassesEndIsKnownEvenBeforeTheFirstTick) {
  std::atomic<std::uint64_t> bytes{0};
  PerSecondSampler sampler(bytes, [] { return std::optional<std::uint64_t>(100); }, 85);
  sampler.start();
  sampler.stop();  // well before the first 100 ms tick, on any machine but a stalled one
  ASSERT_TRUE(sampler.cache_full_at_s().has_value());
  EXPECT_GE(*sampler.cache_full_at_s(), 0.0);
}

TEST(PerSecondSampler, ACacheThatNeverHeldTheShareIsNeverFull) {
  std::atomic<std::uint64_t> bytes{0};
  PerSecondSampler sampler(bytes, [] { return std::optional<std::uint64_t>(84); }, 85);
  sampler.start();
  sampler.stop();
  EXPECT_FALSE(sampler.cache_full_at_s().has_value());
  PerSecondSampler unreadable(bytes, [] { return std::optional<std::uint64_t>(); }, 85);
  unreadable.start();
  unreadable.stop();
  EXPECT_FALSE(unreadable.cache_full_at_s().has_value()) << "an unreadable cache is not full";
}

TEST(PerSecondSampler, UnwatchedMeansNoFigure) {
  std::atomic<std::uint64_t> bytes{0};
  PerSecondSampler sampler(bytes, [] { return std::optional<std::uint64_t>(1000); });
  sampler.start();
  sampler.stop();
  EXPECT_FALSE(sampler.cache_full_at_s().has_value());
}

}  // namespace
}  // namespace iolab::suites::memory
