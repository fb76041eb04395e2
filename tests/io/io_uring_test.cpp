// What only io_uring does: batches beyond the queue depth, a ring that lost
// its completions, each UringOption (sqpoll, fixed buffers, single issuer,
// ...), and options the kernel refuses.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "io_test_support.h"
#include "iolab/io/call_injection.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

using testing::expect_error;
using testing::read_bytes;

// ---- io_uring ---------------------------------------------------------------

// A batch larger than the queue depth, mixed kinds, with O_DIRECT and buffered.
TEST(IoUring, BatchLargerThanQueueDepth) {
  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    ScratchDir scratch;
    auto p = testing::write_pattern_file(scratch, "ref", 64 * 1024, 60);
    FileOptions o;
    o.direct = direct;
    o.queue_depth = 2;
    auto f = find_file_method("io_uring").open(p, Access::ReadWrite, o);
    std::vector<Buffer> bufs;
    std::vector<IoRequest> reqs;
    for (int i = 0; i < 16; ++i) {
      bufs.emplace_back(4096, BufferKind::Aligned);
      std::uint64_t off = static_cast<std::uint64_t>(i) * 4096;
      if (i % 2 == 0) {
        fill_pattern(61, off, bufs.back().span());  // even blocks rewritten with a new seed
        reqs.push_back({IoRequest::Kind::Write, off, bufs.back().span(), 0});
      } else {
        reqs.push_back({IoRequest::Kind::Read, off, bufs.back().span(), 0});  // odd blocks read
      }
    }
    f->submit(reqs);
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(reqs[i].result, 4096u) << i;
      if (i % 2 == 1) {
        EXPECT_TRUE(matches_pattern(60, reqs[i].offset, bufs[i].span())) << i;
      }
    }
    EXPECT_EQ(f->counters().bytes_read, 8 * 4096u);
    EXPECT_EQ(f->counters().bytes_written, 8 * 4096u);
    f->close();
    auto disk = read_bytes(p);
    ASSERT_EQ(disk.size(), 64 * 1024u);
    for (int i = 0; i < 16; ++i)
      EXPECT_TRUE(matches_pattern(i % 2 == 0 ? 61 : 60, i * 4096u, std::span(disk).subspan(i * 4096u, 4096)))
          << "block " << i;
  }
}

TEST(IoUring, DirectRejectsUnalignedBatchBeforeSubmitting) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 8192, 70);
  FileOptions o;
  o.direct = true;
  auto f = find_file_method("io_uring").open(p, Access::ReadWrite, o);
  Buffer good(4096, BufferKind::Aligned), bad(4096, BufferKind::Aligned);
  fill_pattern(71, 0, good.span());
  std::vector<IoRequest> reqs{{IoRequest::Kind::Write, 0, good.span(), 0},
                              {IoRequest::Kind::Write, 4096 + 512 + 1, bad.span().first(512), 0}};
  auto e = expect_error([&] { f->submit(reqs); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EINVAL);
  EXPECT_NE(std::string(e->what()).find("offset"), std::string::npos) << e->what();
  f->close();
  EXPECT_EQ(digest_file(p), pattern_digest(70, 0, 8192)) << "nothing of a refused batch is written";
}

TEST(IoUring, ProbeAndQueueDepthZero) {
  ScratchDir scratch;
  Availability a = find_file_method("io_uring").probe(scratch.path());
  ASSERT_TRUE(a.available) << a.reason;  // MACHINE.md: io_uring is enabled here
  auto p = testing::write_pattern_file(scratch, "ref", 4096, 80);
  FileOptions o;
  o.queue_depth = 0;  // means 1, not an invalid ring
  auto f = find_file_method("io_uring").open(p, Access::Read, o);
  Buffer b(4096, BufferKind::Aligned);
  EXPECT_EQ(f->read_at(0, b.span()), 4096u);
  EXPECT_TRUE(matches_pattern(80, 0, b.span()));
}

// ---- io_uring options ---------------------------------------------------------

// A source of `count` 4 KiB reads at consecutive offsets, into 4 KiB slots
// of one buffer that go back to a free list in done(), as an engine would
// keep them; a write at request `write_at` when set fails the stream.
class ReadBlocks final : public RequestSource {
 public:
  ReadBlocks(Buffer& buf, std::size_t count, std::optional<std::size_t> write_at = std::nullopt)
      : buf_(buf), count_(count), write_at_(write_at) {
    for (std::size_t s = 0; s < buf.size() / 4096; ++s) free_.push_back(s);
  }
  bool next(IoRequest& r) override {
    if (issued_ == count_) return false;
    if (free_.empty()) throw std::logic_error("more requests in flight than the queue depth");
    const std::size_t slot = free_.back();
    free_.pop_back();
    r.kind = write_at_ == issued_ ? IoRequest::Kind::Write : IoRequest::Kind::Read;
    r.offset = issued_++ * 4096;
    r.data = buf_.span().subspan(slot * 4096, 4096);
    r.tag = slot;
    return true;
  }
  void done(IoRequest& r) override {
    ++completed;
    all_whole &= r.result == 4096 && matches_pattern(90, r.offset, r.data);
    free_.push_back(r.tag);
  }
  std::size_t issued() const { return issued_; }
  std::size_t completed = 0;
  bool all_whole = true;

 private:
  Buffer& buf_;
  std::size_t count_, issued_ = 0;
  std::optional<std::size_t> write_at_;
  std::vector<std::size_t> free_;
};

// Answers ETIME to the n-th io_uring wait: the ring then behaves as one that
// took its requests and never completed them (seen on this machine's kernel;
// src/io/io_uring_method.cpp, recover_stall).
class LoseCompletionsAt final : public sys::CallInjector {
 public:
  explicit LoseCompletionsAt(unsigned nth) : nth_(nth) {}
  Decision on_call(std::string_view call, std::size_t length) override {
    if (call == "io_uring_wait" && ++seen_ == nth_) {
      fired = true;
      return {ETIME, 0};
    }
    return {0, length};
  }
  std::atomic<bool> fired{false};

 private:
  unsigned nth_;
  std::atomic<unsigned> seen_{0};
};

// The ring that lost its completions is replaced and what it held is issued
// again: every block still arrives once, whole and right, and stderr says so.
TEST(IoUring, ARingThatLostItsCompletionsIsReplacedAndItsRequestsIssuedAgain) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
  FileOptions o;
  o.queue_depth = 8;
  auto f = find_file_method("io_uring").open(p, Access::Read, o);
  Buffer buf(8 * 4096, BufferKind::Aligned);
  ReadBlocks src(buf, 64);
  LoseCompletionsAt lose(2);
  {
    sys::ScopedInjector injected(lose);
    ::testing::internal::CaptureStderr();
    f->stream(src);
    std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("the ring was replaced and they were issued again"), std::string::npos) << said;
  }
  EXPECT_TRUE(lose.fired);
  EXPECT_EQ(src.completed, 64u);
  EXPECT_TRUE(src.all_whole);
  Buffer b(4096, BufferKind::Aligned);
  EXPECT_EQ(f->read_at(63 * 4096, b.span()), 4096u) << "the new ring serves later requests";
  EXPECT_TRUE(matches_pattern(90, 63 * 4096, b.span()));
  f->close();
}

// Each option alone, O_DIRECT: skipped with this kernel's reason when it
// refuses it, else a stream of reads through a File that honours it.
class UringOption : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override {
    auto [label, set] = testing::uring_option_settings()[GetParam()];
    options_.direct = true;
    options_.queue_depth = 8;
    set(options_.uring);
    Availability a = find_file_method("io_uring").supports_options(options_, scratch_.path());
    RecordProperty("supported", a.available ? "yes" : a.reason);
    if (!a.available) GTEST_SKIP() << label << ": " << a.reason;
  }
  ScratchDir scratch_;
  FileOptions options_;
};

TEST_P(UringOption, StreamsReadsWithTheOption) {
  auto p = testing::write_pattern_file(scratch_, "ref", 64 * 4096, 90);
  auto f = find_file_method("io_uring").open(p, Access::Read, options_);
  Buffer buf(16 * 4096, BufferKind::Aligned);
  f->register_buffers(std::vector{buf.span()});
  ReadBlocks src(buf, 64);
  f->stream(src, true);
  EXPECT_EQ(src.completed, 64u);
  EXPECT_TRUE(src.all_whole);
  EXPECT_EQ(f->counters().bytes_read, 64 * 4096u);
  f->close();
}

INSTANTIATE_TEST_SUITE_P(Each, UringOption, ::testing::Range<std::size_t>(0, testing::uring_option_settings().size()),
                         [](const auto& p) { return std::string(testing::uring_option_settings()[p.param].first); });

// SQPOLL: the poller is a thread of this process ("iou-sqp-<tid>"), and
// the File reports its CPU time, also after close. Without SQPOLL: none.
TEST(IoUring, SqpollReportsItsPollerThreadCpu) {
  ScratchDir scratch;
  FileOptions o;
  o.uring.sqpoll = true;
  o.queue_depth = 4;
  if (Availability a = find_file_method("io_uring").supports_options(o, scratch.path()); !a.available)
    GTEST_SKIP() << a.reason;
  auto p = testing::write_pattern_file(scratch, "ref", 16 * 4096, 90);
  auto f = find_file_method("io_uring").open(p, Access::Read, o);
  Buffer buf(4 * 4096, BufferKind::Aligned);
  ReadBlocks src(buf, 16);
  f->stream(src);
  EXPECT_TRUE(src.all_whole);
  // The poller names itself when it starts; it has run by now (it took the requests).
  bool found = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    found |= std::getline(comm, name) && name.rfind("iou-sqp-", 0) == 0;
  }
  EXPECT_TRUE(found) << "no iou-sqp- thread in /proc/self/task";
  auto cpu = f->poller_cpu_ns();
  ASSERT_TRUE(cpu.has_value());
  EXPECT_GT(*cpu, 0u) << "the poller must have run to take the submissions";
  f->close();
  auto after = f->poller_cpu_ns();
  ASSERT_TRUE(after.has_value()) << "the last figure outlives the ring";
  EXPECT_GE(*after, *cpu);
  auto plain = find_file_method("io_uring").open(p, Access::Read);
  EXPECT_FALSE(plain->poller_cpu_ns().has_value());
}

// Fixed buffers: a request outside the registered buffers is refused before
// any I/O; a registered one is read with READ_FIXED into the pages pinned
// at registration. Seen by mapping fresh pages at the registered address:
// the fixed read still lands in the old, pinned pages, not in the new ones.
TEST(IoUring, FixedBuffersReadIntoThePinnedPages) {
  ScratchDir scratch;
  FileOptions o;
  o.direct = true;
  o.uring.fixed_buffers = true;
  if (Availability a = find_file_method("io_uring").supports_options(o, scratch.path()); !a.available)
    GTEST_SKIP() << a.reason;
  auto p = testing::write_pattern_file(scratch, "ref", 8192, 91);
  auto f = find_file_method("io_uring").open(p, Access::ReadWrite, o);
  Buffer other(4096, BufferKind::Aligned);
  auto e = expect_error([&] { f->read_at(0, other.span()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EINVAL);
  EXPECT_NE(std::string(e->what()).find("register_buffers"), std::string::npos) << e->what();

  void* map = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* bytes = static_cast<std::byte*>(map);
  std::memset(bytes, 0, 4096);
  f->register_buffers(std::vector{std::span(bytes, 4096)});
  ASSERT_EQ(f->read_at(0, std::span(bytes, 4096)), 4096u);
  EXPECT_TRUE(matches_pattern(91, 0, std::span(bytes, 4096))) << "a registered buffer reads like any other";
  // New pages at the same address: only a fixed read misses them.
  ASSERT_EQ(::mmap(map, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), map);
  ASSERT_EQ(f->read_at(4096, std::span(bytes, 4096)), 4096u);
  EXPECT_EQ(bytes[0], std::byte{0}) << "the read did not go through the pinned pages: not READ_FIXED";
  f->register_buffers({});  // releases them: the buffer is refused again
  e = expect_error([&] { f->read_at(0, std::span(bytes, 4096)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EINVAL);
  ::munmap(map, 4096);
  f->close();
}

// SINGLE_ISSUER: the kernel refuses submissions from another thread. That
// is an error, not a crash, and the File still works on its own thread
// (the refused request was taken back, never run later).
TEST(IoUring, SingleIssuerRefusesAnotherThreadAndRecovers) {
  ScratchDir scratch;
  FileOptions o;
  o.uring.single_issuer = true;
  if (Availability a = find_file_method("io_uring").supports_options(o, scratch.path()); !a.available)
    GTEST_SKIP() << a.reason;
  auto p = testing::write_pattern_file(scratch, "ref", 8192, 92);
  auto f = find_file_method("io_uring").open(p, Access::ReadWrite, o);
  Buffer stray(4096, BufferKind::Aligned), mine(4096, BufferKind::Aligned);
  std::optional<Error> e;
  std::thread([&] { e = expect_error([&] { f->read_at(0, stray.span()); }); }).join();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_NE(std::string(e->what()).find("io_uring_enter"), std::string::npos) << e->what();
  std::memset(stray.data(), 0xee, 4096);
  ASSERT_EQ(f->read_at(4096, mine.span()), 4096u);
  EXPECT_TRUE(matches_pattern(92, 4096, mine.span()));
  EXPECT_EQ(stray.data()[0], std::byte{0xee}) << "the refused read ran after all";
  f->close();
}

// Options this kernel refuses together: supports_options says why, open() throws EOPNOTSUPP naming them.
TEST(IoUring, RefusedOptionsAreReportedNotIgnored) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 4096, 93);
  FileOptions o;
  o.uring.sqpoll = true;
  o.uring.single_issuer = true;  // DEFER_TASKRUN cannot go with SQPOLL
  Availability a = find_file_method("io_uring").supports_options(o, scratch.path());
  if (a.available) GTEST_SKIP() << "this kernel accepts SQPOLL with DEFER_TASKRUN";
  EXPECT_NE(a.reason.find("sqpoll"), std::string::npos) << a.reason;
  auto e = expect_error([&] { find_file_method("io_uring").open(p, Access::Read, o); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EOPNOTSUPP);
  EXPECT_NE(std::string(e->what()).find("single_issuer"), std::string::npos) << e->what();
  FileOptions deep;
  deep.queue_depth = 1u << 20;  // above the kernel's 32768 entries
  a = find_file_method("io_uring").supports_options(deep, scratch.path());
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("queue depth"), std::string::npos) << a.reason;
}

// Warm buffered reads complete inside the submitting call: one
// io_uring_enter serves many requests.
TEST(IoUring, WarmReadsShareEnterCalls) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
  FileOptions o;
  o.queue_depth = 32;
  auto f = find_file_method("io_uring").open(p, Access::Read, o);
  Buffer buf(32 * 4096, BufferKind::Aligned);
  ReadBlocks src(buf, 64);
  f->stream(src);
  EXPECT_TRUE(src.all_whole);
  EXPECT_LT(f->counters().calls, 32u) << "one enter per request: the queue is not batching";
}

}  // namespace
}  // namespace iolab::io
