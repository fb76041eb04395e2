// What only one method does: mmap growth and trimming, O_DIRECT alignment
// policy, vectored splitting, io_uring batches, queue depth and options,
// libaio, and how the queued methods fail mid-stream.
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


// ---- mmap -----------------------------------------------------------------

// 100 KiB in 1000-byte writes through a map grown 4 KiB at a time: ~25 growth
// steps and re-maps; the file ends at exactly 100 KiB, not at the capacity.
TEST(Mmap, GrowsInStepsAndTrimsAtClose) {
  ScratchDir scratch;
  auto p = scratch.create_file("grow");
  FileOptions o;
  o.mmap_grow_step = 4096;
  constexpr std::size_t kTotal = 100 * 1024;
  auto f = find_file_method("mmap").open(p, Access::ReadWrite, o);
  Buffer chunk(1000, BufferKind::Heap);
  for (std::size_t off = 0; off < kTotal; off += chunk.size()) {
    std::size_t n = std::min(chunk.size(), kTotal - off);
    fill_pattern(21, off, chunk.span().first(n));
    f->write_at(off, chunk.span().first(n));
    EXPECT_EQ(f->size(), off + n);
  }
  EXPECT_GE(f->counters().calls, 2 * 25u) << "each growth step is a fallocate and a (re)map";
  EXPECT_GE(std::filesystem::file_size(p), kTotal) << "capacity is allocated ahead of the data";
  f->sync(Durability::MsyncSync);
  f->close();
  EXPECT_EQ(std::filesystem::file_size(p), kTotal);
  EXPECT_EQ(digest_file(p), pattern_digest(21, 0, kTotal));
}

// The header promises the destructor closes quietly: that includes trimming.
TEST(Mmap, DestructorWithoutCloseStillTrims) {
  ScratchDir scratch;
  auto p = scratch.create_file("dtor");
  FileOptions o;
  o.mmap_grow_step = 1 << 16;
  {
    auto f = find_file_method("mmap").open(p, Access::ReadWrite, o);
    Buffer b(5000, BufferKind::Aligned);
    fill_pattern(2, 0, b.span());
    f->write_at(0, b.span());
  }
  EXPECT_EQ(std::filesystem::file_size(p), 5000u);
  EXPECT_EQ(digest_file(p), pattern_digest(2, 0, 5000));
}

// Opening an existing file for writing maps it; appending grows it; overwriting in the middle keeps the rest.
TEST(Mmap, ExistingFileOverwriteAndAppend) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 10000, 4);
  FileOptions o;
  o.mmap_grow_step = 4096;
  auto f = find_file_method("mmap").open(p, Access::ReadWrite, o);
  EXPECT_EQ(f->size(), 10000u);
  Buffer b(3000, BufferKind::Heap);
  fill_pattern(4, 9000, b.span());  // continues the same pattern past the old end
  f->write_at(9000, b.span());
  EXPECT_EQ(f->size(), 12000u);
  f->close();
  EXPECT_EQ(std::filesystem::file_size(p), 12000u);
  EXPECT_EQ(digest_file(p), pattern_digest(4, 0, 12000));
}

// The read path maps windows: a read spanning several windows comes back whole.
TEST(Mmap, ReadsAcrossWindows) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 50000, 6);
  FileOptions o;
  o.mmap_window = 4096;
  o.mmap_advice = Advice::Sequential;
  auto f = find_file_method("mmap").open(p, Access::Read, o);
  std::vector<std::byte> all(50000);
  ASSERT_EQ(f->read_at(0, all), 50000u);
  EXPECT_TRUE(matches_pattern(6, 0, all));
  ASSERT_EQ(f->read_at(4000, std::span(all).first(10000)), 10000u);
  EXPECT_TRUE(matches_pattern(6, 4000, std::span(all).first(10000)));
  // The window now holds [12288, 16384): a read inside it (the lean path),
  // one that runs past its end, one below it, one whose end wraps around.
  ASSERT_EQ(f->read_at(12300, std::span(all).first(100)), 100u);
  EXPECT_TRUE(matches_pattern(6, 12300, std::span(all).first(100)));
  ASSERT_EQ(f->read_at(16300, std::span(all).first(200)), 200u);
  EXPECT_TRUE(matches_pattern(6, 16300, std::span(all).first(200)));
  ASSERT_EQ(f->read_at(100, std::span(all).first(100)), 100u);
  EXPECT_TRUE(matches_pattern(6, 100, std::span(all).first(100)));
  EXPECT_EQ(f->read_at(UINT64_MAX - 10, std::span(all).first(100)), 0u);
  EXPECT_EQ(f->read_at(49990, std::span(all).first(100)), 10u);
  EXPECT_EQ(f->read_at(50000, std::span(all).first(100)), 0u);
  EXPECT_EQ(f->counters().bytes_read, 50000u + 10000u + 100u + 200u + 100u + 10u);
  // A pass in one call across windows of 4 KiB, in blocks of 1000 bytes
  // (some cross a window's end), and one that runs into the end of the file.
  ASSERT_EQ(f->read_sequence(0, 49, std::span(all).first(1000)), 49000u);
  EXPECT_TRUE(matches_pattern(6, 48000, std::span(all).first(1000)));
  ASSERT_EQ(f->read_sequence(8000, 4, std::span(all).first(1000)), 4000u);
  EXPECT_TRUE(matches_pattern(6, 11000, std::span(all).first(1000))) << "a window below the current one";
  EXPECT_EQ(f->read_sequence(48000, 5, std::span(all).first(1000)), 2000u);
  EXPECT_TRUE(matches_pattern(6, 49000, std::span(all).first(1000)));
  std::byte one{};
  EXPECT_EQ(f->read_at(0, std::span(&one, 0)), 0u) << "an empty read";
  auto e = expect_error([&] { f->write_at(0, std::span(&one, 1)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EBADF);
  f->close();
}

TEST(Mmap, EmptyWritesAndReadsOnAnEmptyFile) {
  ScratchDir scratch;
  auto p = scratch.create_file("empty");
  auto f = find_file_method("mmap").open(p, Access::ReadWrite);
  std::byte one{};
  f->write_at(0, std::span<const std::byte>(&one, 0));
  EXPECT_EQ(f->read_at(0, std::span(&one, 1)), 0u);
  EXPECT_EQ(f->size(), 0u);
  f->sync(Durability::MsyncSync);
  f->close();
  EXPECT_EQ(std::filesystem::file_size(p), 0u);
}

// ---- O_DIRECT ---------------------------------------------------------------

TEST(Direct, AlignmentIsDiscoveredAndAPowerOfTwo) {
  ScratchDir scratch;
  auto p = scratch.create_file("align");
  auto f = find_file_method("direct").open(p, Access::ReadWrite);
  std::size_t a = f->alignment();
  EXPECT_GE(a, 512u);
  EXPECT_EQ(a & (a - 1), 0u) << a;
  EXPECT_LE(a, 65536u);
  EXPECT_EQ(find_file_method("pread").open(p, Access::Read)->alignment(), 1u);
}

// Reject (the default): each kind of misalignment is named, EINVAL, and the
// file is untouched.
TEST(Direct, RejectsEachMisalignmentAndChangesNothing) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 16384, 12);
  auto f = find_file_method("direct").open(p, Access::ReadWrite);
  const std::size_t a = f->alignment();
  Buffer buf(8192 + a, BufferKind::Aligned, a);
  fill_pattern(99, 0, buf.span());
  struct Case {
    const char* what;
    std::span<std::byte> data;
    std::uint64_t offset;
  } cases[] = {
      {"buffer address", buf.span().subspan(1, 4096), 4096},
      {"offset", buf.span().first(4096), 4096 + 1},
      {"length", buf.span().first(4096 + 1), 4096},
      {"length", buf.span().first(1), 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto e = expect_error([&] { f->write_at(c.offset, c.data); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->error_number(), EINVAL);
    EXPECT_NE(std::string(e->what()).find(c.what), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find(std::to_string(a) + "-byte"), std::string::npos) << e->what();
    auto r = expect_error([&] { f->read_at(c.offset, c.data); });
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error_number(), EINVAL);
    EXPECT_NE(std::string(r->what()).find(c.what), std::string::npos) << r->what();
  }
  EXPECT_EQ(f->size(), 16384u);
  f->close();
  EXPECT_EQ(digest_file(p), pattern_digest(12, 0, 16384)) << "refused writes changed the file";
}

// Bounce: unaligned writes into the middle of existing data keep the bytes
// around them (read-modify-write of the edge blocks); an unaligned append
// leaves the file at its exact size after close.
TEST(Direct, BounceReadModifyWriteAndExactSize) {
  ScratchDir scratch;
  constexpr std::uint64_t kOld = 3 * 4096 + 100;
  auto p = testing::write_pattern_file(scratch, "ref", kOld, 30);
  std::vector<std::byte> expected = read_bytes(p);
  FileOptions o;
  o.unaligned = UnalignedPolicy::Bounce;
  auto f = find_file_method("direct").open(p, Access::ReadWrite, o);
  auto patch = [&](std::uint64_t off, std::size_t len, std::uint64_t seed) {
    std::vector<std::byte> data(len);
    fill_pattern(seed, off, data);
    f->write_at(off, data);
    if (expected.size() < off + len) expected.resize(off + len);
    std::memcpy(expected.data() + off, data.data(), len);
  };
  patch(5, 10, 31);              // inside the first block
  patch(4090, 20, 32);           // across a block boundary
  patch(kOld - 50, 4000, 33);    // across the old end: grows the file
  patch(40000 + 3, 1, 34);       // beyond the end: a hole then one byte
  EXPECT_EQ(f->size(), expected.size());
  std::vector<std::byte> back(expected.size() + 1000);
  ASSERT_EQ(f->read_at(0, back), expected.size()) << "read past the end is short";
  back.resize(expected.size());
  EXPECT_TRUE(back == expected) << "same-File read after bounced writes";
  f->close();
  auto disk = read_bytes(p);
  ASSERT_EQ(disk.size(), expected.size()) << "close() trims the padding of the last block";
  EXPECT_TRUE(disk == expected);
  // Reopened, unaligned reads through the bounce buffer, including at the unaligned end.
  auto r = find_file_method("direct").open(p, Access::Read, o);
  std::vector<std::byte> tail(100);
  ASSERT_EQ(r->read_at(expected.size() - 7, tail), 7u);
  EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 7, expected.end() - 7));
  ASSERT_EQ(r->read_at(3, std::span(tail).first(33)), 33u);
  EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 33, expected.begin() + 3));
  EXPECT_EQ(r->read_at(expected.size(), tail), 0u);
  r->close();
}

// Without close(), the destructor still trims the padded last block.
TEST(Direct, BounceDestructorTrims) {
  ScratchDir scratch;
  auto p = scratch.create_file("dtor");
  FileOptions o;
  o.unaligned = UnalignedPolicy::Bounce;
  {
    auto f = find_file_method("direct").open(p, Access::ReadWrite, o);
    std::vector<std::byte> data(777);
    fill_pattern(40, 0, data);
    f->write_at(0, data);
  }
  EXPECT_EQ(std::filesystem::file_size(p), 777u);
  EXPECT_EQ(digest_file(p), pattern_digest(40, 0, 777));
}

// ---- vectored ---------------------------------------------------------------

TEST(Vectored, SmallSegmentsNeedSeveralCalls) {
  ScratchDir scratch;
  auto p = scratch.create_file("iov");
  FileOptions o;
  o.iov_segment = 100;
  constexpr std::size_t kSize = (1 << 20) + 7;  // 10486 iovecs: more than IOV_MAX (1024) per call
  Buffer b(kSize, BufferKind::Heap);
  fill_pattern(50, 0, b.span());
  auto f = find_file_method("vectored").open(p, Access::ReadWrite, o);
  f->write_at(0, b.span());
  EXPECT_GE(f->counters().calls, 11u) << "IOV_MAX segments per call at most";
  std::memset(b.data(), 0, b.size());
  ASSERT_EQ(f->read_at(0, b.span()), kSize);
  EXPECT_TRUE(matches_pattern(50, 0, b.span()));
  f->close();
  EXPECT_EQ(digest_file(p), pattern_digest(50, 0, kSize));
}

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
                         [](const auto& info) { return std::string(testing::uring_option_settings()[info.param].first); });

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

// ---- both queued methods ------------------------------------------------------

// A request failing mid-stream (a write on a read-only File: io_uring fails
// the completion, libaio the io_submit call): the stream stops issuing,
// waits for what is in flight and throws; the File works afterwards.
TEST(QueuedMethods, ErrorMidStreamDrainsAndThrows) {
  for (const char* method : {"io_uring", "libaio"}) {
    for (bool direct : {false, true}) {
      if (std::string(method) == "libaio" && !direct) continue;
      SCOPED_TRACE(std::string(method) + (direct ? " O_DIRECT" : " buffered"));
      ScratchDir scratch;
      auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
      FileOptions o;
      o.direct = direct;
      o.queue_depth = 4;
      auto f = find_file_method(method).open(p, Access::Read, o);
      Buffer buf(8 * 4096, BufferKind::Aligned);
      ReadBlocks src(buf, 64, 10);
      auto e = expect_error([&] { f->stream(src); });
      ASSERT_TRUE(e);
      EXPECT_EQ(e->error_number(), EBADF) << e->what();
      EXPECT_LT(src.issued(), 64u) << "kept issuing after the failure";
      EXPECT_LT(src.completed, 11u);
      EXPECT_TRUE(src.all_whole);
      Buffer after(4096, BufferKind::Aligned);
      ASSERT_EQ(f->read_at(8192, after.span()), 4096u);
      EXPECT_TRUE(matches_pattern(90, 8192, after.span()));
      f->close();
      EXPECT_EQ(digest_file(p), pattern_digest(90, 0, 64 * 4096)) << "the refused write changed the file";
    }
  }
}

// ---- libaio -----------------------------------------------------------------

TEST(Libaio, TraitsAndDepthLimit) {
  ScratchDir scratch;
  const Method& m = find_file_method("libaio");
  Availability a = m.probe(scratch.path());
  ASSERT_TRUE(a.available) << a.reason;  // ext4 in /tmp takes O_DIRECT here
  MethodTraits t = m.traits();
  EXPECT_TRUE(t.queued && t.bypasses_page_cache && t.needs_alignment);
  EXPECT_FALSE(t.direct_optional) << "O_DIRECT only";
  FileOptions deep;
  deep.queue_depth = 1u << 20;  // above fs.aio-max-nr (65536 by default)
  a = m.supports_options(deep, scratch.path());
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("aio-max-nr"), std::string::npos) << a.reason;
  auto p = testing::write_pattern_file(scratch, "ref", 4096, 94);
  auto e = expect_error([&] { m.open(p, Access::Read, deep); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("io_setup"), std::string::npos) << e->what();
}

// One request per io_submit at depth 2: batches cut short are handed over
// without waiting, and reaped at the next wait.
TEST(Libaio, OneRequestPerSubmit) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
  FileOptions o;
  o.queue_depth = 2;
  o.submit_batch = 1;
  auto f = find_file_method("libaio").open(p, Access::Read, o);
  Buffer buf(4 * 4096, BufferKind::Aligned);
  ReadBlocks src(buf, 64);
  f->stream(src, true);
  EXPECT_EQ(src.completed, 64u);
  EXPECT_TRUE(src.all_whole);
  EXPECT_GE(f->counters().calls, 64u) << "an io_submit per request";
}

// A closed file parks its context for the next open; a child forked after
// that (the decision table's larger-than-memory cell runs in one) must set
// up its own: its parent's context gave io_submit's EINVAL there.
TEST(Libaio, AForkedChildDoesNotTakeItsParentsParkedContext) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 16 * 4096, 90);  // ReadBlocks checks seed 90
  FileOptions o;
  o.queue_depth = 3;  // a depth no other test parks
  auto read_file = [&] {
    auto f = find_file_method("libaio").open(p, Access::Read, o);
    Buffer buf(3 * 4096, BufferKind::Aligned);
    ReadBlocks src(buf, 16);
    f->stream(src, false);
    f->close();
    return src.completed == 16 && src.all_whole;
  };
  ASSERT_TRUE(read_file());  // parks a context of depth 3
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = false;
    try {
      ok = read_file();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not read through libaio";
  EXPECT_TRUE(read_file()) << "the parent's parked context is still its own";
}

// ---- registry -----------------------------------------------------------------

TEST(Registry, NineFileMethodsInDocumentedOrderAllAvailableHere) {
  std::vector<std::string> names;
  ScratchDir scratch;
  for (const auto* m : file_methods()) {
    names.emplace_back(m->name());
    Availability a = m->probe(scratch.path());
    EXPECT_TRUE(a.available) << m->name() << ": " << a.reason;
    EXPECT_FALSE(m->description().empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"iostream", "stdio", "syscall", "pread", "vectored", "mmap", "direct",
                                             "io_uring", "libaio"}));
  EXPECT_TRUE(scratch.created().empty()) << "probing leaves no file behind";
  EXPECT_TRUE(std::filesystem::is_empty(scratch.path())) << "probing leaves no file behind";
  auto e = expect_error([] { find_file_method("aio"); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("aio"), std::string::npos);
  EXPECT_NE(std::string(e->what()).find("io_uring"), std::string::npos) << "lists the known ones";
}

}  // namespace
}  // namespace iolab::io
