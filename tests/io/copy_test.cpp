// Every copy method must produce a byte-identical file and say how much it moved.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "io_test_support.h"
#include "iolab/io/copy.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {


class CopyMethods : public ::testing::TestWithParam<std::string> {
 protected:
  const CopyMethod& method() const { return find_copy_method(GetParam()); }
  void copy_and_verify(std::uint64_t size, const CopyOptions& options) {
    SCOPED_TRACE("size " + std::to_string(size) + ", buffer " + std::to_string(options.buffer_size));
    auto from = testing::write_pattern_file(scratch_, "src", size, size + 3);
    auto to = scratch_.create_unique_file("dst");
    CopyStats s = method().copy(from, to, options);
    EXPECT_EQ(s.bytes, size);
    if (size > 0) {
      EXPECT_GE(s.calls, 1u);
    }
    EXPECT_LE(s.calls, 3 * (size / 4096 + 2)) << "more calls than any chunking could need";
    auto src = testing::read_bytes(from);
    auto dst = testing::read_bytes(to);
    ASSERT_EQ(dst.size(), size);
    EXPECT_EQ(digest(dst), digest(src));
    EXPECT_EQ(digest(dst), pattern_digest(size + 3, 0, size));
    EXPECT_EQ(digest_file(to), digest(src));
  }
  ScratchDir scratch_;
};

TEST_P(CopyMethods, EmptyFile) { copy_and_verify(0, {}); }

TEST_P(CopyMethods, OddSizeWithSmallerBuffer) {
  CopyOptions o;
  o.buffer_size = 64 * 1024;  // 1 MiB + 7 is not a multiple of it
  copy_and_verify((std::uint64_t{1} << 20) + 7, o);
}

TEST_P(CopyMethods, SmallFilesAndHeapBuffer) {
  CopyOptions o;
  o.buffer = BufferKind::Heap;
  o.buffer_size = 4096;
  for (std::uint64_t size : {1u, 511u, 4096u, 4097u}) copy_and_verify(size, o);
}

// The destination is truncated first: a longer old destination leaves no tail.
TEST_P(CopyMethods, TruncatesLongerDestination) {
  auto from = testing::write_pattern_file(scratch_, "src", 1000, 1);
  auto to = testing::write_pattern_file(scratch_, "src", 50000, 2);
  CopyStats s = method().copy(from, to);
  EXPECT_EQ(s.bytes, 1000u);
  EXPECT_EQ(testing::read_bytes(to), testing::read_bytes(from));
}

// One CopyEnds serves copy after copy (the copy suite opens it before each
// pass): the buffer is the same memory every time, each copy is whole, and a
// copy that did not finish leaves nothing open to the next.
TEST_P(CopyMethods, EndsReopenedKeepTheirBuffer) {
  CopyOptions o;
  o.buffer_size = 8192;
  CopyEnds ends(o);
  const std::byte* buffer = ends.buffer().data();
  for (std::uint64_t seed : {21u, 22u, 23u}) {
    auto from = testing::write_pattern_file(scratch_, "src", 20000 + seed, seed);
    auto to = scratch_.create_unique_file("dst");
    ends.open(from, to);
    EXPECT_EQ(ends.size(), 20000 + seed);
    CopyStats s = method().copy(ends, o);
    EXPECT_EQ(s.bytes, 20000 + seed);
    EXPECT_EQ(digest_file(to), pattern_digest(seed, 0, 20000 + seed));
    EXPECT_EQ(ends.buffer().data(), buffer);
  }
  auto from = testing::write_pattern_file(scratch_, "src", 100, 1);
  auto to = scratch_.create_unique_file("dst");
  ends.open(from, to);
  ends.close();
  EXPECT_EQ(ends.from_fd(), -1);
  EXPECT_EQ(ends.to_fd(), -1);
  ends.open(from, to);  // and opens again after a close
  EXPECT_EQ(method().copy(ends, o).bytes, 100u);
}

// Copying a file onto itself would truncate the source first: refused, data kept.
TEST_P(CopyMethods, RefusesSameFile) {
  auto p = testing::write_pattern_file(scratch_, "src", 5000, 9);
  auto e = testing::expect_error([&] { method().copy(p, p); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EINVAL) << e->what();
  EXPECT_EQ(digest_file(p), pattern_digest(9, 0, 5000)) << "the source must be untouched";
}

TEST_P(CopyMethods, MissingSourceOrSymlinkDestination) {
  auto missing = scratch_.path() / "no-such-file";
  auto to = scratch_.create_unique_file("dst");
  auto e = testing::expect_error([&] { method().copy(missing, to); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOENT) << e->what();

  auto from = testing::write_pattern_file(scratch_, "src", 100, 4);
  auto victim = testing::write_pattern_file(scratch_, "src", 100, 5);
  auto link = scratch_.path() / "link";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  e = testing::expect_error([&] { method().copy(from, link); });
  ::unlink(link.c_str());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ELOOP) << e->what();
  EXPECT_EQ(digest_file(victim), pattern_digest(5, 0, 100)) << "the link's target must be untouched";
}

TEST_P(CopyMethods, ProbeSaysAvailableHere) {
  Availability a = method().probe(scratch_.path());
  EXPECT_TRUE(a.available) << a.reason;
  EXPECT_TRUE(a.reason.empty());
  EXPECT_FALSE(method().description().empty());
}

std::vector<std::string> copy_method_names() {
  std::vector<std::string> out;
  for (const auto* m : copy_methods()) out.emplace_back(m->name());
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllCopyMethods, CopyMethods, ::testing::ValuesIn(copy_method_names()),
                         [](const auto& p) { return p.param; });

TEST(CopyRegistry, NamesAndOrder) {
  EXPECT_EQ(copy_method_names(),
            (std::vector<std::string>{"readwrite", "sendfile", "copy_file_range", "splice", "mmap_write"}));
  auto e = testing::expect_error([] { find_copy_method("rsync"); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("rsync"), std::string::npos);
  EXPECT_NE(std::string(e->what()).find("sendfile"), std::string::npos) << "lists the known ones";
}

}  // namespace
}  // namespace iolab::io
