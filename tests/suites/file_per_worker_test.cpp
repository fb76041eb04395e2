// A file experiment on several threads, a file each (fio's numjobs): every
// worker moves its whole file, the record says how many workers, and what
// the region workload cannot do is refused.
#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/file_per_worker.h"

namespace iolab::suites {
namespace {

harness::FileExperiment tiny(results::Op op) {
  harness::FileExperiment e;
  e.suite = "fio";
  e.experiment = "tiny";
  e.method = "pread";
  e.op = op;
  e.block_size = 16 * 1024;
  e.file_size = 64 * 1024;
  e.cache = results::CacheState::Warm;
  return e;
}

harness::RunConfig quick() {
  harness::RunConfig c;
  c.reps = 2;
  c.warmup = 0;
  c.min_time = 0;
  c.latency = false;
  return c;
}

TEST(FilePerWorker, EachWorkerMovesItsWholeFile) {
  io::ScratchDir scratch;
  harness::Runner runner(quick(), scratch);
  for (results::Op op : {results::Op::Read, results::Op::Write}) {
    harness::FileExperiment e = tiny(op);
    if (op == results::Op::Write) e.sync.schedule = io::FlushSchedule::End;
    results::Result r = run_file_per_worker(runner, e, 3);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.threads, 3u);
    EXPECT_EQ(r.bytes, 3u * e.file_size * r.passes);
    EXPECT_EQ(r.file_size, e.file_size);  // per worker
    EXPECT_EQ(r.extra["layout"], "file-per-worker");
    EXPECT_EQ(r.reps, 2u);
  }
  EXPECT_TRUE(scratch.created().empty()) << "the workers' files are removed";
}

TEST(FilePerWorker, WhatTheRegionWorkloadCannotDoIsRefused) {
  io::ScratchDir scratch;
  harness::Runner runner(quick(), scratch);
  harness::FileExperiment cold = tiny(results::Op::Read);
  cold.cache = results::CacheState::Cold;
  EXPECT_THROW(run_file_per_worker(runner, cold, 2), UsageError);
  harness::FileExperiment every = tiny(results::Op::Write);
  every.sync.schedule = io::FlushSchedule::EveryWrite;
  EXPECT_THROW(run_file_per_worker(runner, every, 2), UsageError);
}

}  // namespace
}  // namespace iolab::suites
