#include <gtest/gtest.h>

#include <fstream>

#include "iolab/base/error.h"
#include "iolab/harness/job.h"
#include "iolab/harness/limits.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {
namespace {

std::filesystem::path write(io::ScratchDir& s, const std::string& text) {
  auto p = s.create_unique_file("job");
  std::ofstream(p) << text;
  return p;
}

TEST(Job, MatrixExpandsEveryCombinationMethodsFastest) {
  Matrix m;
  m.methods = variants_of({"pread", "mmap"});
  m.block_sizes = {4096, 1 << 20};
  m.file_size = 1 << 20;
  auto e = expand(m);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].method, "pread");
  EXPECT_EQ(e[1].method, "mmap");
  EXPECT_EQ(e[0].experiment, e[1].experiment);  // one table compares the methods
  EXPECT_NE(e[0].experiment, e[2].experiment);
  EXPECT_EQ(e[2].block_size, 1u << 20);
  EXPECT_EQ(e[0].suite, "custom");
}

TEST(Job, SyncPolicies) {
  io::FlushPolicy p = io::parse_flush_policy("async-16k:msync");
  EXPECT_EQ(p.schedule, io::FlushSchedule::AsyncBytes);
  EXPECT_EQ(p.interval, 16u * 1024);
  EXPECT_EQ(p.call, io::Durability::MsyncSync);
  EXPECT_EQ(io::parse_flush_policy("periodic-16k:msync"), p);  // schema-1 name of the background flusher
  io::FlushPolicy inline_flush = io::parse_flush_policy("every-16k");
  EXPECT_EQ(inline_flush.schedule, io::FlushSchedule::EveryBytes);
  EXPECT_EQ(inline_flush.call, io::Durability::None);  // the method's own sync, resolved when it runs
  io::FlushPolicy ops = io::parse_flush_policy("every-1000-ops:fdatasync");
  EXPECT_EQ(ops.schedule, io::FlushSchedule::EveryOps);
  EXPECT_EQ(ops.interval, 1000u);
  EXPECT_EQ(io::parse_flush_policy("end").schedule, io::FlushSchedule::End);
  EXPECT_EQ(io::parse_flush_policy("every:fsync").call, io::Durability::Fsync);
  for (const char* text : {"none", "end:fdatasync", "every:fsync", "every-16k:msync", "async-4k:fdatasync",
                           "every-1000-ops:fdatasync", "async-1m"})
    EXPECT_EQ(to_string(io::parse_flush_policy(text)), text);
  for (const char* bad : {"sometimes", "none:fsync", "periodic-0", "every-0", "async-", "end:", "every-x-ops"})
    EXPECT_THROW(io::parse_flush_policy(bad), UsageError) << bad;
}

TEST(Job, QueueDepthsApplyToQueuedMethodsOnly) {
  Matrix m;
  m.methods = variants_of({"pread", "io_uring"});
  m.queue_depths = {1, 32};
  m.file_size = 1 << 20;
  auto e = expand(m);
  ASSERT_EQ(e.size(), 3u);  // pread once; io_uring at each depth
  EXPECT_EQ(e[0].method, "pread");
  EXPECT_EQ(e[1].method, "io_uring");
  EXPECT_EQ(e[1].options.queue_depth, 1u);
  EXPECT_EQ(e[2].options.queue_depth, 32u);
}

TEST(Job, AMatrixTooLargeIsRefusedBeforeAnythingIsBuilt) {
  Matrix m;
  m.methods = variants_of({"pread", "mmap", "syscall", "stdio"});
  m.block_sizes.assign(1000, 4096);
  m.caches = {results::CacheState::Warm, results::CacheState::Cold};
  m.buffers = {io::BufferKind::Heap, io::BufferKind::Aligned};
  m.patterns = {results::AccessPattern::Seq, results::AccessPattern::Rand};
  m.syncs.assign(4, io::FlushPolicy{});
  try {
    expand(m);
    ADD_FAILURE() << "a matrix of 128,000 experiments was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("128000"), std::string::npos) << e.what();
  }
}

TEST(Job, ReadsAJobFile) {
  io::ScratchDir s("/tmp");
  auto p = write(s, R"(
method = ["pread", "mmap"]
op = "read,write"
bs = ["4k", 1048576]
size = "8m"
cache = "warm"
sync = "end:fdatasync"
reps = 3
seed = 7
)");
  Job j = read_job(p);
  EXPECT_EQ(j.matrix.methods.size(), 2u);
  EXPECT_EQ(j.matrix.ops.size(), 2u);
  EXPECT_EQ(j.matrix.block_sizes, (std::vector<std::uint64_t>{4096, 1048576}));
  EXPECT_EQ(j.matrix.file_size, 8u << 20);
  EXPECT_EQ(*j.reps, 3u);
  EXPECT_EQ(*j.seed, 7u);
  // Reads ignore sync, writes ignore cache: 2 methods x 2 block sizes x (read + write).
  EXPECT_EQ(expand(j.matrix).size(), 8u);
}

TEST(Job, BadJobFilesFailWithOneLine) {
  io::ScratchDir s("/tmp");
  for (const char* text : {"method = \"pread\"\nbs = \"4q\"\n", "method = \"nosuch\"\n", "methd = \"pread\"\n",
                           "method = \"pread\"\nreps = 0\n", "method = [\"pread\"\n", "bs = \"4k\"\n",
                           "method = \"pread\"\nlatency = \"yes\"\n",
                           // A float where an integer belongs, beyond int64's range (fuzz/job_fuzz found
                           // toml++ converting it, undefined behaviour): refused like any other bad value.
                           "method = \"syscall\"\nops = 2e104\n", "method = \"pread\"\nreps = 3.0\n",
                           "method = \"pread\"\nseed = 1e300\n"}) {
    auto p = write(s, text);
    try {
      read_job(p);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    }
  }
  EXPECT_THROW(read_job(s.path() / "missing.toml"), UsageError);
}

// One table of limits for the command line and job files: what --warmup and
// --qd refuse, a job file refuses too; a queue depth is a count, not a size.
TEST(Job, JobFilesHoldTheCommandLinesLimits) {
  io::ScratchDir s("/tmp");
  for (const std::string& text :
       {"method = \"pread\"\nwarmup = " + std::to_string(kWarmupBounds.max + 1) + "\n",
        "method = \"pread\"\nreps = " + std::to_string(kRepsBounds.max + 1) + "\n",
        std::string("method = \"io_uring\"\nqd = \"4k\"\n"),
        "method = \"io_uring\"\nqd = " + std::to_string(kQueueDepthBounds.max + 1) + "\n"}) {
    auto p = write(s, text);
    EXPECT_THROW(read_job(p), UsageError) << text;
  }
  auto ok = write(s, "method = \"io_uring\"\nqd = [1, 32]\nwarmup = " + std::to_string(kWarmupBounds.max) + "\n");
  Job j = read_job(ok);
  EXPECT_EQ(j.matrix.queue_depths, (std::vector<unsigned>{1, 32}));
  EXPECT_EQ(*j.warmup, kWarmupBounds.max);
}

}  // namespace
}  // namespace iolab::harness
