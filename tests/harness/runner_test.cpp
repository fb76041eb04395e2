// The runner on tiny experiments: every method, read and write, seq and rand,
// heap and aligned buffers, warm and cold, yields verified figures; what
// cannot run here is a skipped record with a reason.
#include <gtest/gtest.h>

#include <cmath>

#include "iolab/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"

namespace iolab::harness {
namespace {

RunConfig tiny_config() {
  RunConfig c;
  c.reps = 2;
  c.warmup = 1;
  return c;
}

FileExperiment tiny(std::string method, Op op, AccessPattern pattern, io::BufferKind buffer, CacheState cache) {
  FileExperiment e;
  e.suite = "test";
  e.experiment = "tiny";
  e.method = std::move(method);
  e.op = op;
  e.pattern = pattern;
  e.block_size = 4096;
  e.file_size = 64 * 1024 + 100;  // a partial last block on purpose
  e.buffer = buffer;
  e.cache = cache;
  e.eviction = Eviction::Fadvise;  // tests never drop the system's page cache
  return e;
}

void expect_verified_figures(const Result& r) {
  ASSERT_FALSE(r.skipped) << r.method << ": " << *r.skipped;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.reps, 2u);
  ASSERT_EQ(r.samples_s.size(), 2u);
  for (double s : r.samples_s) EXPECT_GT(s, 0);
  EXPECT_EQ(r.bytes, r.file_size);
  EXPECT_EQ(r.ops, (r.file_size + r.block_size - 1) / r.block_size);
  ASSERT_TRUE(r.latency_ns.has_value());
  EXPECT_GT(r.latency_ns->max, 0);
  EXPECT_LE(r.latency_ns->p50, r.latency_ns->p99);
  EXPECT_LE(r.latency_ns->p99, r.latency_ns->max);
  // Tiny runs are far below 50 ms: the runner must say they are too short to trust.
  bool short_warning = false;
  for (const auto& w : r.warnings) short_warning |= w.find("too short") != std::string::npos;
  EXPECT_TRUE(short_warning);
}

TEST(Runner, EveryMethodReadsAndWritesVerified) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (const io::Method* m : io::file_methods()) {
    if (!m->probe(scratch.path()).available) continue;
    bool direct = m->traits().bypasses_page_cache;  // direct, libaio
    for (Op op : {Op::Read, Op::Write})
      for (AccessPattern p : {AccessPattern::Seq, AccessPattern::Rand})
        for (io::BufferKind b : {io::BufferKind::Heap, io::BufferKind::Aligned})
          for (CacheState c : {CacheState::Warm, CacheState::Cold}) {
            if (op == Op::Write && c == CacheState::Cold) continue;  // writes go to a fresh file
            if (direct && b == io::BufferKind::Heap) continue;      // covered by the skip test
            SCOPED_TRACE(std::string(m->name()) + " " + std::string(to_string(op)) + " " + std::string(to_string(p)) +
                         " " + std::string(io::to_string(b)) + " " + std::string(to_string(c)));
            FileExperiment e = tiny(std::string(m->name()), op, p, b, direct ? CacheState::Direct : c);
            if (direct) e.file_size = 64 * 1024;  // O_DIRECT: no short last call
            Result r = runner.run(e);
            expect_verified_figures(r);
            if (op == Op::Read) {
              ASSERT_TRUE(r.resident_fraction.has_value());
              if (!direct && c == CacheState::Warm) {
                EXPECT_EQ(r.cache, "warm");
                EXPECT_EQ(r.cache_method, "read once");
                EXPECT_GT(*r.resident_fraction, 0.9);
              }
              if (!direct && c == CacheState::Cold) {
                EXPECT_EQ(r.cache, "cold");
                EXPECT_EQ(r.cache_method, "fadvise");
              }
            }
            if (direct) {
              EXPECT_EQ(r.cache, "direct");
            }
          }
  }
  EXPECT_TRUE(scratch.created().empty()) << "the runner left files behind";
}

TEST(Runner, DirectWithHeapBufferIsSkippedWithReason) {
  io::ScratchDir scratch("/tmp");
  if (!io::find_file_method("direct").probe(scratch.path()).available) GTEST_SKIP() << "no O_DIRECT here";
  Runner runner(tiny_config(), scratch);
  // A heap buffer at an odd block size: O_DIRECT cannot take it, and the runner must say so.
  FileExperiment e = tiny("direct", Op::Read, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Direct);
  e.block_size = 1000;
  Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("aligned"), std::string::npos) << *r.skipped;
  EXPECT_FALSE(r.verified);
  EXPECT_TRUE(r.samples_s.empty());
}

TEST(Runner, BufferedMethodWithDirectCacheIsSkipped) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  Result r = runner.run(tiny("pread", Op::Read, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Direct));
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("O_DIRECT"), std::string::npos);
}

TEST(Runner, DropCachesWithoutRootIsSkippedNotReplaced) {
  if (can_drop_caches()) GTEST_SKIP() << "running as root: drop_caches is available, nothing to skip";
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("pread", Op::Read, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Cold);
  e.eviction = Eviction::DropCaches;
  Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("root"), std::string::npos);
}

TEST(Runner, OpsFixesTheCallCountAndFileSize) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("syscall", Op::Write, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Warm);
  e.block_size = 128;
  e.ops = 1000;
  Result r = runner.run(e);
  EXPECT_EQ(r.ops, 1000u);
  EXPECT_EQ(r.file_size, 128000u);
  EXPECT_TRUE(r.verified);
  EXPECT_GE(r.io_calls, 1000u);  // one write(2) per call, unbuffered
}

// stdio and iostream make their calls inside the library: the runner takes
// the kernel's count, so unbuffered streams show one call per write and a
// 4 KiB buffer about one per 32 writes of 128 bytes, never zero.
TEST(Runner, StreamMethodsCountTheKernelsCalls) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (std::size_t buffer : {std::size_t{0}, std::size_t{4096}}) {
    for (const char* method : {"stdio", "iostream"}) {
      FileExperiment e = tiny(method, Op::Write, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Warm);
      e.block_size = 128;
      e.ops = 1024;
      e.options.stream_buffer = buffer;
      Result w = runner.run(e);
      ASSERT_TRUE(w.verified) << method;
      if (buffer == 0) {
        EXPECT_GE(w.io_calls, 1024u) << method << " unbuffered";
      } else {
        EXPECT_GE(w.io_calls, 32u) << method << " with a 4 KiB buffer";
        EXPECT_LE(w.io_calls, 64u) << method << " with a 4 KiB buffer";
      }
      e.op = Op::Read;
      Result r = runner.run(e);
      ASSERT_TRUE(r.verified) << method;
      EXPECT_GE(r.io_calls, buffer == 0 ? 1024u : 32u) << method << " read";
    }
  }
}

TEST(Runner, SyncSchedulesAreHonouredAndLabelled) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (std::string method : {"pread", "mmap"}) {
    FileExperiment e = tiny(method, Op::Write, AccessPattern::Seq, io::BufferKind::Aligned, CacheState::Warm);
    e.block_size = 1024;
    e.ops = 64;  // 64 KiB: a 16 KiB interval gives four flushes
    e.schedule = SyncSchedule::Periodic;
    e.sync_interval = 16 * 1024;
    Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.sync, method == "mmap" ? "periodic-16k:msync" : "periodic-16k:fdatasync");
    ASSERT_TRUE(r.extra.contains("periodic_flushes"));
    EXPECT_GE(r.extra["periodic_flushes"].get<double>(), 1.0);
    EXPECT_LE(r.extra["periodic_flushes"].get<double>(), 4.0);

    e.schedule = SyncSchedule::EveryWrite;
    e.sync = io::Durability::Fdatasync;
    r = runner.run(e);
    EXPECT_EQ(r.sync, "every:fdatasync");
    EXPECT_GE(r.io_calls, 64u);  // at least one durability call per write

    e.schedule = SyncSchedule::End;
    r = runner.run(e);
    EXPECT_EQ(r.sync, "end:fdatasync");
    EXPECT_TRUE(r.verified);
  }
}

TEST(Runner, IoUringBatchesRequests) {
  io::ScratchDir scratch("/tmp");
  if (!io::find_file_method("io_uring").probe(scratch.path()).available) GTEST_SKIP() << "no io_uring here";
  Runner runner(tiny_config(), scratch);
  for (Op op : {Op::Read, Op::Write}) {
    FileExperiment e = tiny("io_uring", op, AccessPattern::Rand, io::BufferKind::Aligned, CacheState::Warm);
    e.batch = 8;
    e.options.queue_depth = 8;
    Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_LT(r.io_calls, r.ops) << "a batch of 8 should need fewer io_uring_enter calls than requests";
  }
}

TEST(Runner, FreshFilePerRepetition) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("stdio", Op::Read, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Cold);
  e.fresh_file_per_rep = true;
  Result r = runner.run(e);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.cache_method, "fadvise, fresh file");
  EXPECT_TRUE(scratch.created().empty());
}

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
  c.cleanup = [&] { ++cleaned; };
  c.verify = [] { return true; };
  Result r = runner.run(c);
  EXPECT_EQ(prepared, 3);  // warm-up + 2 timed
  EXPECT_EQ(cleaned, 3);
  EXPECT_EQ(timed, 3);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, 1000u);
  EXPECT_EQ(r.ops, 10u);
  EXPECT_EQ(r.io_calls, 10u);
  EXPECT_EQ(r.samples_s.size(), 2u);

  c.verify = [] { return false; };
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

}  // namespace
}  // namespace iolab::harness

namespace iolab::harness {
namespace {

TEST(Runner, ConfigEvictionReplacesAuto) {
  io::ScratchDir scratch("/tmp");
  RunConfig c = tiny_config();
  c.eviction = Eviction::Fadvise;
  Runner runner(c, scratch);
  FileExperiment e = tiny("pread", Op::Read, AccessPattern::Seq, io::BufferKind::Heap, CacheState::Cold);
  e.eviction = Eviction::Auto;
  Result r = runner.run(e);
  EXPECT_EQ(r.cache_method, "fadvise");
  EXPECT_TRUE(r.verified);
}

}  // namespace
}  // namespace iolab::harness
