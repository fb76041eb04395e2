// What only one of the synchronous methods does: mmap growth, windows and
// trimming, O_DIRECT alignment policy and its bounce path, vectored splitting.
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

}  // namespace
}  // namespace iolab::io
