// Tiny experiments for the runner's tests: one pass per repetition, a 64 KiB
// file with a partial last block, and what every verified record holds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"

namespace iolab::testing {

// One pass per repetition: tests check behaviour, not lengthened timings.
inline harness::RunConfig tiny_config() {
  harness::RunConfig c;
  c.reps = 2;
  c.warmup = 1;
  c.min_time = 0;
  return c;
}

inline harness::FileExperiment tiny(std::string method, results::Op op, results::AccessPattern pattern,
                                    std::optional<io::BufferKind> buffer, results::CacheState cache) {
  harness::FileExperiment e;
  e.suite = "test";
  e.experiment = "tiny";
  e.method = std::move(method);
  e.op = op;
  e.pattern = pattern;
  e.block_size = 4096;
  e.file_size = 64 * 1024 + 100;  // a partial last block on purpose
  e.buffer = buffer;
  e.cache = cache;
  e.eviction = results::Eviction::PerFile;  // tests never drop the system's page cache
  return e;
}

inline void expect_verified_figures(const results::Result& r) {
  ASSERT_FALSE(r.skipped) << r.method << ": " << *r.skipped;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.reps, 2u);
  EXPECT_EQ(r.passes, 1u);
  ASSERT_EQ(r.samples_s.size(), 2u);
  for (double s : r.samples_s) EXPECT_GT(s, 0);
  EXPECT_EQ(r.bytes, r.file_size);
  EXPECT_EQ(r.ops, (r.file_size + r.block_size - 1) / r.block_size);
  ASSERT_TRUE(r.latency_ns.has_value());
  EXPECT_EQ(r.latency_ns->samples, r.ops);  // the latency pass timed every call (or request)
  EXPECT_GT(r.latency_ns->max, 0);
  EXPECT_LE(r.latency_ns->p50, r.latency_ns->p99);
  EXPECT_LE(r.latency_ns->p99, r.latency_ns->max);
  // A repetition under 50 ms is too short to trust, and the record says so
  // exactly then (tiny runs usually are; a loaded machine may stretch one).
  const bool short_reps = *std::min_element(r.samples_s.begin(), r.samples_s.end()) < results::thresholds::kTooShortSeconds;
  EXPECT_EQ(r.has_warning(results::WarningKind::TooShort), short_reps);
}

}  // namespace iolab::testing
