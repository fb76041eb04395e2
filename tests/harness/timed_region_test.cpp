// The timed region holds exactly what docs/results-format.md says (not the
// open or close), and a timed pass issues and counts its requests as planned.
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

// ---- the timed region ----------------------------------------------------------------

// A method around pread whose open() makes 500 read(2) calls and whose
// close() makes 700 write(2) calls of its own: the kernel's count of the
// timed region then shows which of them it contains. Counting calls instead
// of sleeping keeps the test deterministic.
class MarkedOpenClose final : public io::Method {
 public:
  static constexpr unsigned kOpenReads = 500, kCloseWrites = 700;
  std::string_view name() const override { return "marked"; }
  std::string_view description() const override { return "pread, with marked open and close"; }
  io::MethodTraits traits(const io::FileOptions&) const override { return {}; }
  io::Availability probe(const std::filesystem::path&) const override { return {}; }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    mark(kOpenReads, false);
    return std::make_unique<Marked>(io::find_file_method("pread").open(p, a, o));
  }

 private:
  static void mark(unsigned calls, bool write) {
    int fd = ::open(write ? "/dev/null" : "/dev/zero", (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    char c = 0;
    for (unsigned i = 0; i < calls; ++i)
      if ((write ? ::write(fd, &c, 1) : ::read(fd, &c, 1)) != 1) break;
    ::close(fd);
  }
  class Marked final : public testing::ForwardingFile {
   public:
    explicit Marked(std::unique_ptr<io::File> f) : ForwardingFile(std::move(f)) {}
    void close() override {
      if (closed_) return;
      closed_ = true;
      mark(kCloseWrites, true);
      ForwardingFile::close();
    }

   private:
    bool closed_ = false;
  };
};

TEST(Runner, TimedRegionHoldsWhatTheTableSays) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  MarkedOpenClose marked;
  FileExperiment e = tiny("marked", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.method_object = &marked;
  e.file_size = 64 * 1024;
  // Reads: open is not timed, close is (mmap unmaps there); the region holds the 16 reads and close.
  results::Result r = runner.run(e);
  ASSERT_TRUE(r.extra.contains("proc_io_syscalls"));
  std::uint64_t calls = r.extra["proc_io_syscalls"].get<std::uint64_t>();
  EXPECT_GE(calls, MarkedOpenClose::kCloseWrites + 16u) << "close() ran outside a read's timed region";
  EXPECT_LT(calls, MarkedOpenClose::kCloseWrites + MarkedOpenClose::kOpenReads) << "open() ran inside a read's timed region";
  // Writes: open is not timed, close is (user-space buffers reach the kernel there).
  e.op = results::Op::Write;
  r = runner.run(e);
  calls = r.extra["proc_io_syscalls"].get<std::uint64_t>();
  EXPECT_GE(calls, MarkedOpenClose::kCloseWrites) << "close() ran outside a write's timed region";
  EXPECT_LT(calls, MarkedOpenClose::kCloseWrites + MarkedOpenClose::kOpenReads) << "open() ran inside a write's timed region";
}

// A timed read pass over a file shorter than its plan counts the calls that
// came back short alike, whether the blocks go in one call (sequential) or
// one call each (random): 10 blocks and a half planned, 5 and a half there:
// the half block, the 4 blocks past the end and the last half block.
TEST(Requests, ATimedReadPassCountsShortCallsAlikeSequentialOrNot) {
  io::ScratchDir scratch;
  constexpr std::uint64_t kBlock = 4096;
  auto path = testing::write_pattern_file(scratch, "short", 5 * kBlock + kBlock / 2, 3);
  struct Anything final : Content {
    bool matches(std::uint64_t, std::span<const std::byte>) const override { return true; }
  } content;
  for (const char* method : {"pread", "mmap"})
    for (results::AccessPattern pattern : {results::AccessPattern::Seq, results::AccessPattern::Rand}) {
      SCOPED_TRACE(std::string(method) + " " + std::string(to_string(pattern)));
      auto f = io::find_file_method(method).open(path, io::Access::Read);
      RequestPlan plan = make_plan(results::Op::Read, 0, 10 * kBlock + kBlock / 2, kBlock, pattern, 1);
      ReadSlots slots(1, kBlock, io::BufferKind::Heap);
      LoopOutcome out = read_pass(*f, false, plan, slots, PassKind::Timed, nullptr, content);
      EXPECT_EQ(out.short_calls, 6u);
      EXPECT_EQ(out.tally.bytes, 5 * kBlock + kBlock / 2);
      EXPECT_EQ(out.tally.ops, 11u);
    }
}

// A random plan of two rounds covers every block twice, each round a
// permutation of its own; a verification pass reads each block once; a stop
// flag already set ends a pass before its first call, plain loop or queue.
TEST(Requests, ARandomPlanOfTwoRoundsReadsEveryBlockTwiceAndAStopFlagEndsIt) {
  constexpr std::uint64_t kBlock = 4096, kBlocks = 64;
  RequestPlan plan = make_plan(results::Op::Read, 0, kBlocks * kBlock, kBlock, results::AccessPattern::Rand, 7, 2);
  ASSERT_EQ(plan.count(), 2 * kBlocks);
  EXPECT_EQ(plan.blocks(), kBlocks);
  std::vector<std::uint64_t> first(plan.order.begin(), plan.order.begin() + kBlocks),
      second(plan.order.begin() + kBlocks, plan.order.end());
  EXPECT_NE(first, second) << "each round is shuffled anew";
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  for (std::uint64_t i = 0; i < kBlocks; ++i) {
    EXPECT_EQ(first[i], i);
    EXPECT_EQ(second[i], i);
  }
  EXPECT_EQ(make_plan(results::Op::Read, 0, kBlocks * kBlock, kBlock, results::AccessPattern::Seq, 7, 2).count(), kBlocks)
      << "rounds are for random plans";

  io::ScratchDir scratch;
  auto path = testing::write_pattern_file(scratch, "rounds", kBlocks * kBlock, 3);
  PatternContent content(3);
  for (const char* method : {"pread", "io_uring"}) {
    SCOPED_TRACE(method);
    const io::Method& m = io::find_file_method(method);
    if (!m.probe(scratch.path()).available) continue;  // io_uring may be off here
    io::FileOptions options;
    options.queue_depth = 4;  // one slot per request in flight, as the workload makes them
    const bool queued = m.traits(options).queued;
    auto f = m.open(path, io::Access::Read, options);
    ReadSlots slots(queued ? 4 : 1, kBlock, io::BufferKind::Aligned);
    LoopOutcome timed = read_pass(*f, queued, plan, slots, PassKind::Timed, nullptr, content);
    EXPECT_EQ(timed.tally.bytes, 2 * kBlocks * kBlock);
    EXPECT_EQ(timed.tally.ops, 2 * kBlocks);
    LoopOutcome verify = read_pass(*f, queued, plan, slots, PassKind::Verify, nullptr, content);
    EXPECT_EQ(verify.tally.bytes, kBlocks * kBlock) << "each block checked once";
    EXPECT_FALSE(verify.bad_offset);
    std::atomic<bool> stop{true};
    RequestPlan stopped = plan;
    stopped.stop = &stop;
    for (PassKind kind : {PassKind::Timed, PassKind::Verify}) {
      LoopOutcome none = read_pass(*f, queued, stopped, slots, kind, nullptr, content);
      EXPECT_EQ(none.tally.bytes, 0u);
      EXPECT_EQ(none.tally.ops, 0u);
      EXPECT_EQ(none.short_calls, 0u);
    }
    f->close();
  }
}

}  // namespace
}  // namespace iolab::harness
