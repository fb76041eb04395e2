// The runner on tiny experiments: every method, read and write, seq and rand,
// heap and aligned buffers, warm and cold, yields verified figures; what
// cannot run here is a skipped record with a reason; flush policies flush as
// named; queued methods stream at their depth.
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

TEST(Runner, EveryMethodReadsAndWritesVerified) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (const io::Method* m : io::file_methods()) {
    if (!m->probe(scratch.path()).available) continue;
    const bool direct = m->traits().bypasses_page_cache;
    for (results::Op op : {results::Op::Read, results::Op::Write})
      for (results::AccessPattern p : {results::AccessPattern::Seq, results::AccessPattern::Rand})
        for (io::BufferKind b : {io::BufferKind::Heap, io::BufferKind::Aligned})
          for (results::CacheState c : {results::CacheState::Warm, results::CacheState::Cold}) {
            if (op == results::Op::Write && c == results::CacheState::Cold) continue;  // writes go to a fresh file
            if (direct && b == io::BufferKind::Heap) continue;      // covered by the skip test
            SCOPED_TRACE(std::string(m->name()) + " " + std::string(to_string(op)) + " " + std::string(to_string(p)) +
                         " " + std::string(io::to_string(b)) + " " + std::string(to_string(c)));
            FileExperiment e = tiny(std::string(m->name()), op, p, b, direct ? results::CacheState::Direct : c);
            if (direct) e.file_size = 64 * 1024;  // O_DIRECT: no short last call
            results::Result r = runner.run(e);
            expect_verified_figures(r);
            if (m->traits().queued) {  // the default queue loop and ring, recorded (issue 25 item 15)
              EXPECT_EQ(r.extra.value("submit_batch", 99u), direct ? 1u : 0u);
              EXPECT_FALSE(r.extra.contains("io_options"));
            }
            EXPECT_EQ(r.latency_ns->source,
                      m->traits().queued ? results::LatencySource::EveryRequest : results::LatencySource::EveryCall);
            if (op == results::Op::Read && !direct) {
              ASSERT_TRUE(r.resident_fraction.has_value());
              if (c == results::CacheState::Warm) {
                EXPECT_EQ(r.cache, results::CacheState::Warm);
                EXPECT_EQ(r.cache_method, "written, fdatasync, evicted (fadvise), read once (1 MiB preads)");
                EXPECT_GE(*r.resident_fraction, 0.99);  // proven before every timed pass
              } else {
                EXPECT_EQ(r.cache, results::CacheState::Cold);
                EXPECT_EQ(r.cache_method.rfind("fadvise", 0), 0u) << r.cache_method;
                EXPECT_LE(*r.resident_fraction, 0.05);  // proven before every timed pass
              }
            }
            if (direct) {
              EXPECT_EQ(r.cache, results::CacheState::Direct);
            }
            if (op == results::Op::Write && !direct) {
              EXPECT_FALSE(r.cache.has_value());
            }
          }
  }
  EXPECT_TRUE(scratch.created().empty()) << "the runner left files behind";
}

TEST(Runner, DirectWithHeapBufferIsSkippedWithReason) {
  io::ScratchDir scratch("/tmp");
  if (!io::find_file_method("direct").probe(scratch.path()).available) GTEST_SKIP() << "no O_DIRECT here";
  Runner runner(tiny_config(), scratch);
  // A heap buffer asked for explicitly at an odd block size: O_DIRECT cannot take it, and the runner must say so.
  FileExperiment e = tiny("direct", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Direct);
  e.block_size = 1000;
  results::Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("aligned"), std::string::npos) << *r.skipped;
  EXPECT_FALSE(r.verified);
  EXPECT_TRUE(r.samples_s.empty());
}

TEST(Runner, DirectCachePicksAlignedBuffersUnlessHeapWasAsked) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (const char* method : {"direct", "io_uring"}) {
    if (!io::find_file_method(method).probe(scratch.path()).available) continue;
    FileExperiment e = tiny(method, results::Op::Read, results::AccessPattern::Rand, std::nullopt, results::CacheState::Direct);
    e.file_size = 64 * 1024;
    results::Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << method << ": " << *r.skipped;
    EXPECT_EQ(r.buffer, io::BufferKind::Aligned) << method;
    EXPECT_EQ(r.cache, results::CacheState::Direct) << method;
  }
}

// The record says where the buffer started in its page, and a heap buffer is
// always at the same place: the mmap 4 KiB read ran 4.7x slower when malloc
// happened to put it 16 bytes past a page (Zen 3 rep movsb), with nothing in
// the record to tell the two runs apart.
TEST(Runner, RecordsTheBuffersFixedPlaceInItsPage) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (results::Op op : {results::Op::Read, results::Op::Write})
    for (const char* method : {"mmap", "pread"}) {
      for (std::optional<io::BufferKind> kind : {std::optional<io::BufferKind>{}, std::optional(io::BufferKind::Heap)}) {
        results::Result r = runner.run(tiny(method, op, results::AccessPattern::Seq, kind, results::CacheState::Warm));
        ASSERT_FALSE(r.skipped) << method << ": " << *r.skipped;
        EXPECT_EQ(r.buffer, io::BufferKind::Heap) << method;
        EXPECT_EQ(r.buffer_offset, io::kHeapBufferOffset) << method << (kind ? " heap" : " default");
      }
      results::Result r = runner.run(tiny(method, op, results::AccessPattern::Seq, io::BufferKind::Aligned, results::CacheState::Warm));
      ASSERT_FALSE(r.skipped) << method << ": " << *r.skipped;
      EXPECT_EQ(r.buffer_offset, 0u) << method;
    }
}

TEST(Runner, BufferedMethodWithDirectCacheIsSkipped) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  results::Result r = runner.run(tiny("pread", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Direct));
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("O_DIRECT"), std::string::npos);
}

TEST(Runner, DropCachesWithoutRootIsSkippedNotReplaced) {
  if (can_drop_caches()) GTEST_SKIP() << "running as root: drop_caches is available, nothing to skip";
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("pread", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Cold);
  e.eviction = results::Eviction::DropCaches;
  results::Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("root"), std::string::npos);
}

TEST(Runner, AFileLargerThanTheFreeSpaceIsSkippedBeforeAnythingIsWritten) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("pread", results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.file_size = std::uint64_t{1} << 60;  // an exbibyte
  results::Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("free"), std::string::npos) << *r.skipped;
  EXPECT_TRUE(scratch.created().empty());
}

TEST(Runner, OpsFixesTheCallCountAndFileSize) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("syscall", results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.block_size = 128;
  e.ops = 1000;
  results::Result r = runner.run(e);
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
      FileExperiment e = tiny(method, results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
      e.block_size = 128;
      e.ops = 1024;
      e.options.stream_buffer = buffer;
      results::Result w = runner.run(e);
      ASSERT_TRUE(w.verified) << method;
      if (buffer == 0) {
        EXPECT_GE(w.io_calls, 1024u) << method << " unbuffered";
      } else {
        EXPECT_GE(w.io_calls, 32u) << method << " with a 4 KiB buffer";
        EXPECT_LE(w.io_calls, 64u) << method << " with a 4 KiB buffer";
      }
      e.op = results::Op::Read;
      results::Result r = runner.run(e);
      ASSERT_TRUE(r.verified) << method;
      EXPECT_GE(r.io_calls, buffer == 0 ? 1024u : 32u) << method << " read";
    }
  }
}

// Each flush policy flushes as named: every-16k over 1 MiB is exactly 64
// flushes of 16 KiB; async-16k coalesces (at most 64, at least 16 KiB each);
// end is one flush of everything; every is one per write.
TEST(Runner, FlushPoliciesMeanWhatTheySay) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (std::string method : {"pread", "mmap"}) {
    SCOPED_TRACE(method);
    FileExperiment e = tiny(method, results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Aligned, results::CacheState::Warm);
    e.block_size = 1024;
    e.ops = 1024;  // 1 MiB
    const std::string call = method == "mmap" ? "msync" : "fdatasync";

    e.sync = io::parse_flush_policy("every-16k");
    results::Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(to_string(r.sync), "every-16k:" + call);
    EXPECT_EQ(r.extra.at("flushes").get<double>(), 64.0);
    EXPECT_EQ(r.extra.at("bytes_per_flush").get<double>(), 16384.0);

    e.sync = io::parse_flush_policy("async-16k");
    r = runner.run(e);
    EXPECT_EQ(to_string(r.sync), "async-16k:" + call);
    double flushes = r.extra.at("flushes").get<double>();
    EXPECT_GE(flushes, 1.0);
    EXPECT_LE(flushes, 64.0);
    EXPECT_GE(r.extra.at("bytes_per_flush").get<double>(), 16384.0);
    EXPECT_TRUE(r.verified);

    e.sync = io::parse_flush_policy("end");
    r = runner.run(e);
    EXPECT_EQ(to_string(r.sync), "end:" + call);
    EXPECT_EQ(r.extra.at("flushes").get<double>(), 1.0);
    EXPECT_EQ(r.extra.at("bytes_per_flush").get<double>(), 1048576.0);

    e.ops = 64;
    e.sync = io::parse_flush_policy("every:fdatasync");
    r = runner.run(e);
    EXPECT_EQ(to_string(r.sync), "every:fdatasync");
    EXPECT_EQ(r.extra.at("flushes").get<double>(), 64.0);
    EXPECT_GE(r.io_calls, 64u);  // a durability call each (and pwrite's write calls)

    e.sync = io::FlushPolicy{};
    r = runner.run(e);
    EXPECT_FALSE(r.extra.contains("flushes"));
  }
}

// every-N flushes once per N-byte boundary crossed, at most once per write:
// 12 KiB writes over 192 KiB cross 12 boundaries of 16 KiB (a count that
// restarted after each flush made 8); writes of a block >= N flush after
// every write, and the record says so.
TEST(Runner, EveryNBytesFlushesOncePerBoundaryAndSaysWhenThatIsEveryWrite) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  for (std::string method : {"pread", "mmap"}) {
    SCOPED_TRACE(method);
    FileExperiment e = tiny(method, results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Aligned, results::CacheState::Warm);
    e.sync = io::parse_flush_policy("every-16k");
    e.block_size = 12 * 1024;
    e.ops = 16;
    results::Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_EQ(r.extra.at("flushes").get<double>(), 12.0);
    EXPECT_EQ(r.extra.at("flush_interval_bytes").get<std::uint64_t>(), 16384u);
    EXPECT_FALSE(r.extra.at("flush_every_write").get<bool>());
    EXPECT_FALSE(results::flushes_every_write(r));

    e.block_size = 64 * 1024;
    e.ops = 8;
    r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_EQ(r.extra.at("flushes").get<double>(), 8.0);
    EXPECT_EQ(r.extra.at("flush_interval_bytes").get<std::uint64_t>(), 65536u);
    EXPECT_TRUE(results::flushes_every_write(r));
    EXPECT_NE(results::destination(r).find("after every write"), std::string::npos) << results::destination(r);
  }
}

TEST(Runner, QueuedMethodsStreamAtTheirDepthAndSayIt) {
  io::ScratchDir scratch("/tmp");
  if (!io::find_file_method("io_uring").probe(scratch.path()).available) GTEST_SKIP() << "no io_uring here";
  Runner runner(tiny_config(), scratch);
  for (results::Op op : {results::Op::Read, results::Op::Write}) {
    FileExperiment e = tiny("io_uring", op, results::AccessPattern::Rand, io::BufferKind::Aligned, results::CacheState::Warm);
    e.options.queue_depth = 8;
    results::Result r = runner.run(e);
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.queue_depth, 8u);
    EXPECT_EQ(r.latency_ns->source, results::LatencySource::EveryRequest);
  }
  // A flush after every N bytes has no single point to run at with writes in flight.
  FileExperiment e = tiny("io_uring", results::Op::Write, results::AccessPattern::Seq, io::BufferKind::Aligned, results::CacheState::Warm);
  e.sync = io::parse_flush_policy("every-16k");
  results::Result r = runner.run(e);
  ASSERT_TRUE(r.skipped.has_value());
  EXPECT_NE(r.skipped->find("queued"), std::string::npos) << *r.skipped;
}

// Repetitions shorter than min_time are made of several passes; the record
// says how many, and bytes and ops are per repetition.
TEST(Runner, ShortPassesAreRepeatedUpToMinTime) {
  io::ScratchDir scratch("/tmp");
  RunConfig c = tiny_config();
  c.min_time = 1.0;
  c.max_time = 0.2;  // the budget caps it: the test stays short
  Runner runner(c, scratch);
  FileExperiment e = tiny("pread", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.file_size = 64 * 1024;
  results::Result r = runner.run(e);
  ASSERT_FALSE(r.skipped);
  EXPECT_GT(r.passes, 1u);
  EXPECT_EQ(r.bytes, r.passes * e.file_size);
  EXPECT_EQ(r.ops, r.passes * 16u);
  EXPECT_TRUE(r.verified);
}

}  // namespace
}  // namespace iolab::harness
