// The data pattern (any slice computable on its own) and I/O buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "io_test_support.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

TEST(Pattern, AnySliceEqualsTheSliceOfABiggerFill) {
  std::vector<std::byte> big(200000);
  fill_pattern(77, 0, big);
  for (std::uint64_t off : {0u, 1u, 7u, 8u, 9u, 4093u, 65535u, 65536u, 100001u}) {
    for (std::size_t len : {0u, 1u, 3u, 8u, 15u, 4096u, 70000u}) {
      if (off + len > big.size()) continue;
      SCOPED_TRACE("offset " + std::to_string(off) + " length " + std::to_string(len));
      std::vector<std::byte> part(len);
      fill_pattern(77, off, part);
      EXPECT_TRUE(std::equal(part.begin(), part.end(), big.begin() + static_cast<std::ptrdiff_t>(off)));
      EXPECT_TRUE(matches_pattern(77, off, part));
    }
  }
}

TEST(Pattern, DependsOnSeedAndOffsetAndDoesNotRepeatTrivially) {
  std::vector<std::byte> a(4096), b(4096), c(4096);
  fill_pattern(1, 0, a);
  fill_pattern(2, 0, b);
  fill_pattern(1, 4096, c);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  std::set<std::byte> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 200u) << "looks random: most byte values occur in 4 KiB";
}

TEST(Pattern, MatchesDetectsASingleFlippedByte) {
  std::vector<std::byte> data(300000);
  fill_pattern(5, 123, data);
  EXPECT_TRUE(matches_pattern(5, 123, data));
  EXPECT_FALSE(matches_pattern(5, 124, data)) << "wrong offset";
  EXPECT_FALSE(matches_pattern(6, 123, data)) << "wrong seed";
  data[250000] ^= std::byte{1};  // in a later 64 KiB chunk of the comparison
  EXPECT_FALSE(matches_pattern(5, 123, data));
}

TEST(Pattern, DigestOfPatternEqualsDigestOfFill) {
  for (std::uint64_t len : {0u, 1u, 65536u, 65537u, 300000u}) {
    for (std::uint64_t off : {0u, 5u, 70000u}) {
      std::vector<std::byte> data(len);
      fill_pattern(9, off, data);
      EXPECT_EQ(pattern_digest(9, off, len), digest(data)) << off << "+" << len;
    }
  }
  std::vector<std::byte> x(10);
  fill_pattern(9, 0, x);
  EXPECT_NE(digest(x), pattern_digest(9, 1, 10));
}

TEST(Pattern, DigestFileStreamsAWholeFile) {
  ScratchDir scratch;
  auto p = scratch.create_file("d");
  EXPECT_EQ(digest_file(p), digest({})) << "empty file";
  std::vector<std::byte> data((1 << 20) + 7);
  fill_pattern(3, 0, data);
  auto f = find_file_method("pread").open(p, Access::ReadWrite);
  f->write_at(0, data);
  f->close();
  EXPECT_EQ(digest_file(p), digest(data));
  EXPECT_EQ(digest_file(p), pattern_digest(3, 0, data.size()));
  auto e = testing::expect_error([&] { digest_file(scratch.path() / "missing"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOENT);
}

TEST(Buffer, AlignedIsPageAlignedAndZeroed) {
  for (std::size_t size : {1u, 511u, 4096u, 4097u, 1048583u}) {
    Buffer b(size, BufferKind::Aligned);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kPageSize, 0u) << size;
    EXPECT_EQ(b.size(), size);
    EXPECT_EQ(b.kind(), BufferKind::Aligned);
    for (std::byte x : b.span()) ASSERT_EQ(x, std::byte{0});
  }
  Buffer big(100, BufferKind::Aligned, 1 << 16);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (1 << 16), 0u);
  Buffer small(100, BufferKind::Aligned, 512);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 512, 0u);
  Buffer tiny(100, BufferKind::Aligned, 2);  // below pointer size: still valid memory
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(tiny.data()) % 2, 0u);
  EXPECT_THROW(Buffer(100, BufferKind::Aligned, 3000), UsageError);
}

TEST(Buffer, HeapKindAndEmptyBuffers) {
  Buffer h(1000, BufferKind::Heap);
  EXPECT_EQ(h.kind(), BufferKind::Heap);
  EXPECT_EQ(h.size(), 1000u);
  ASSERT_NE(h.data(), nullptr);
  for (std::byte x : h.span()) ASSERT_EQ(x, std::byte{0});
  h.span()[999] = std::byte{1};  // writable to the last byte (ASan checks the bound)
  Buffer none;
  EXPECT_EQ(none.size(), 0u);
  EXPECT_TRUE(none.span().empty());
  Buffer zero_heap(0, BufferKind::Heap), zero_aligned(0, BufferKind::Aligned);
  EXPECT_EQ(zero_heap.size(), 0u);
  EXPECT_EQ(zero_aligned.size(), 0u);
}

// A heap buffer's place in its page is fixed, not whatever malloc's state
// gives: a copy's speed can depend on it (on Zen 3, rep movsb into a
// destination 16 bytes past a page-aligned source is ~5x slower), so the same
// experiment must not change speed with the allocations made before it.
TEST(Buffer, HeapBuffersStartAtTheFixedOffsetInAPage) {
  static_assert(kHeapBufferOffset % 64 == 0 && kHeapBufferOffset % 512 != 0 && kHeapBufferOffset < kPageSize);
  std::vector<std::unique_ptr<std::byte[]>> clutter;  // shift malloc's state between allocations
  // Small blocks from the heap and large ones malloc maps (those start 16 bytes past a page).
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{4096}, std::size_t{4096 + 16},
                           std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20}) {
    for (std::size_t junk : {std::size_t{0}, std::size_t{16}, std::size_t{48}, std::size_t{4000}}) {
      if (junk) clutter.push_back(std::make_unique<std::byte[]>(junk));
      Buffer h(size, BufferKind::Heap);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h.data()) % kPageSize, kHeapBufferOffset) << size << " after " << junk;
      EXPECT_EQ(h.page_offset(), kHeapBufferOffset);
      EXPECT_EQ(h.size(), size);
      for (std::byte x : h.span()) ASSERT_EQ(x, std::byte{0});
      if (size) h.span()[size - 1] = std::byte{1};  // writable to the last byte (ASan checks the bound)
    }
  }
  EXPECT_EQ(Buffer(4096, BufferKind::Aligned).page_offset(), 0u);
  Buffer a(100, BufferKind::Heap);
  const std::byte* at = a.data();
  Buffer b = std::move(a);
  EXPECT_EQ(b.data(), at);  // the offset survives a move
  EXPECT_EQ(b.page_offset(), kHeapBufferOffset);
}

TEST(Buffer, MoveKeepsTheMemory) {
  Buffer a(4096, BufferKind::Aligned);
  a.span()[0] = std::byte{42};
  std::byte* p = a.data();
  Buffer b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_EQ(b.span()[0], std::byte{42});
  Buffer c(10, BufferKind::Heap);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.kind(), BufferKind::Aligned);
}

TEST(Buffer, KindNames) {
  EXPECT_EQ(parse_buffer_kind("heap"), BufferKind::Heap);
  EXPECT_EQ(parse_buffer_kind("aligned"), BufferKind::Aligned);
  EXPECT_EQ(to_string(BufferKind::Heap), "heap");
  EXPECT_EQ(to_string(BufferKind::Aligned), "aligned");
  for (const char* bad : {"direct", "", "Heap", "aligned "}) {
    SCOPED_TRACE(bad);
    try {
      parse_buffer_kind(bad);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("heap or aligned"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace iolab::io
