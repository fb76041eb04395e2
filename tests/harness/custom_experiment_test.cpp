// Custom experiments (prepare, timed, verify and cleanup of the test's own)
// are timed and verified like file experiments; unverified data is an error;
// the configuration's eviction replaces the experiments'.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/registry.h"
#include "iolab/testing/forwarding_file.h"
#include "io/io_test_support.h"
#include "tiny_runs.h"

namespace iolab::harness {
namespace {

using testing::expect_verified_figures;
using testing::tiny;
using testing::tiny_config;

// ---- custom experiments --------------------------------------------------------------

TEST(Runner, CustomExperimentTimesAndVerifies) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  int prepared = 0, cleaned = 0, timed = 0;
  CustomExperiment c;
  c.labels.suite = "test";
  c.labels.experiment = "custom";
  c.labels.method = "loop";
  c.prepare = [&] { ++prepared; };
  c.timed = [&] {
    ++timed;
    return Repetition{1000, 10, 10};
  };
  c.cleanup = [&](DataCheck) { ++cleaned; };
  c.verify = [] { return true; };
  results::Result r = runner.run(c);
  EXPECT_EQ(prepared, 3);  // warm-up + 2 timed
  EXPECT_EQ(cleaned, 3);
  EXPECT_EQ(timed, 3);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 1000u);
  EXPECT_EQ(r.ops, 10u);
  EXPECT_EQ(r.io_calls, 10u);
  EXPECT_EQ(r.samples_s.size(), 2u);
  EXPECT_FALSE(r.latency_ns.has_value());  // a callback workload cannot time its calls: no latency rather than a wrong one

  c.verify = [] { return false; };
  EXPECT_THROW(runner.run(c), Error);
}

// A custom experiment's verification pass: once, before the warm-up, on
// the timed path; it alone makes the record verified, and its failure is an
// error, not a figure.
TEST(Runner, CustomVerificationPassRunsOnceBeforeTheTimedPasses) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  std::string order;
  CustomExperiment c;
  c.labels.method = "loop";
  c.verification = [&] {
    order += 'v';
    return true;
  };
  c.timed = [&] {
    order += 't';
    return Repetition{1, 1, 1};
  };
  results::Result r = runner.run(c);
  EXPECT_EQ(order, "vttt");  // verification, warm-up, 2 timed
  EXPECT_TRUE(r.verified);
  c.verification = [] { return false; };
  EXPECT_THROW(runner.run(c), Error);
}

TEST(Runner, UnverifiedDataIsAnErrorNotAFigure) {
  // A custom workload whose data is wrong: the runner must refuse to report it.
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  CustomExperiment c;
  c.labels.method = "broken";
  c.timed = [] { return Repetition{1, 1, 1}; };
  c.verify = [] { return false; };
  EXPECT_THROW(runner.run(c), Error);
}

TEST(Runner, ConfigEvictionReplacesTheExperiments) {
  if (!can_drop_caches()) GTEST_SKIP() << "only root could be asked for drop_caches";
  io::ScratchDir scratch("/tmp");
  RunConfig c = tiny_config();
  c.eviction = results::Eviction::PerFile;
  Runner runner(c, scratch);
  FileExperiment e = tiny("pread", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Cold);
  e.eviction = results::Eviction::DropCaches;  // replaced: tests never empty the machine's page cache
  results::Result r = runner.run(e);
  EXPECT_EQ(r.cache_method.rfind("fadvise", 0), 0u) << r.cache_method;
  EXPECT_TRUE(r.verified);
}

}  // namespace
}  // namespace iolab::harness
