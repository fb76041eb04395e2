// Error paths of every write method: each must end in one clear iolab::Error
// (operation, path, errno) and never in a crash, a SIGBUS, or a changed file.
#include <unistd.h>

#include <gtest/gtest.h>

#include "io_test_support.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

using testing::expect_error;
using testing::Variant;

class WriteErrors : public ::testing::TestWithParam<Variant> {
 protected:
  std::unique_ptr<File> open(const std::filesystem::path& p, Access a) const {
    return find_file_method(GetParam().method).open(p, a, GetParam().options);
  }
  // The error's text names the path, so a user knows which file it was.
  static void expect_names(const Error& e, const std::filesystem::path& p) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
  ScratchDir scratch_;
};

TEST_P(WriteErrors, MissingDirectory) {
  auto p = scratch_.path() / "no-such-dir" / "file";
  auto e = expect_error([&] { open(p, Access::ReadWrite); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOENT) << e->what();
  expect_names(*e, p);
  EXPECT_FALSE(std::filesystem::exists(p.parent_path())) << "a method must never create anything";
}

TEST_P(WriteErrors, MissingFileIsNotCreated) {
  auto p = scratch_.path() / "never-created";
  auto e = expect_error([&] { open(p, Access::ReadWrite); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOENT) << e->what();
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_P(WriteErrors, DirectoryGivenAsFile) {
  auto e = expect_error([&] { open(scratch_.path(), Access::ReadWrite); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EISDIR) << e->what();
  expect_names(*e, scratch_.path());
  // Opened for reading, a directory is still not a regular file.
  e = expect_error([&] { open(scratch_.path(), Access::Read); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->error_number() == EISDIR || std::string(e->what()).find("not a regular file") != std::string::npos)
      << e->what();
}

TEST_P(WriteErrors, SymlinkIsRefusedNotFollowed) {
  auto target = scratch_.create_file("target");
  Buffer data(4096, BufferKind::Aligned);
  fill_pattern(3, 0, data.span());
  {
    auto w = find_file_method("pread").open(target, Access::ReadWrite);
    w->write_at(0, data.span());
    w->close();
  }
  auto link = scratch_.path() / "link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto e = expect_error([&] { open(link, Access::ReadWrite); });
  auto e_read = expect_error([&] { open(link, Access::Read); });
  ::unlink(link.c_str());
  ASSERT_TRUE(e);
  ASSERT_TRUE(e_read);
  EXPECT_EQ(e->error_number(), ELOOP) << e->what();
  EXPECT_NE(std::string(e->what()).find("symbolic link"), std::string::npos) << e->what();
  EXPECT_EQ(e_read->error_number(), ELOOP) << e_read->what();
  EXPECT_EQ(digest_file(target), digest(data.span())) << "the link's target must be untouched";
}

// A file opened for reading only: the write is refused, the file unchanged.
TEST_P(WriteErrors, WriteToReadOnlyFile) {
  auto p = scratch_.create_file("ro");
  Buffer data(4096, BufferKind::Aligned), other(4096, BufferKind::Aligned);
  fill_pattern(5, 0, data.span());
  fill_pattern(6, 0, other.span());
  {
    auto w = find_file_method("pread").open(p, Access::ReadWrite);
    w->write_at(0, data.span());
    w->close();
  }
  auto f = open(p, Access::Read);
  auto e = expect_error([&] {
    f->write_at(0, other.span());
    f->close();  // a buffered method may only find out when it flushes
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EBADF) << e->what();
  expect_names(*e, p);
  try {
    f->close();
  } catch (const Error&) {
    // Closing after the failure may report it again; it must not crash.
  }
  EXPECT_EQ(digest_file(p), digest(data.span()));
}

// A read-only filesystem (root: a tmpfs remounted ro; chmod does not stop root).
TEST_P(WriteErrors, ReadOnlyFilesystem) {
  ScratchDir outer;
  testing::TmpfsMount tmpfs(outer.path(), "size=1m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "read-only filesystem case skipped: " << tmpfs.why_not();
  std::filesystem::path p;
  {
    ScratchDir inner(tmpfs.dir());
    p = inner.create_file("file");
    auto w = find_file_method("pread").open(p, Access::ReadWrite);
    Buffer data(4096, BufferKind::Aligned);
    fill_pattern(8, 0, data.span());
    w->write_at(0, data.span());
    w->close();
    std::string why = tmpfs.remount_read_only();
    if (!why.empty()) GTEST_SKIP() << why;
    auto e = expect_error([&] { open(p, Access::ReadWrite); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->error_number(), EROFS) << e->what();
    expect_names(*e, p);
    // Reading still works, and shows the data intact.
    auto r = open(p, Access::Read);
    Buffer back(4096, BufferKind::Aligned);
    EXPECT_EQ(r->read_at(0, back.span()), 4096u);
    EXPECT_TRUE(matches_pattern(8, 0, back.span()));
    r->close();
    // inner's cleanup cannot unlink on a read-only mount: the unmount does it.
  }
}

// A full filesystem: a 4 MiB tmpfs and 8 MiB of writes. Every method must
// throw Error(ENOSPC): no crash, and for mmap no SIGBUS (it must fail in
// fallocate before touching an unallocated page).
TEST_P(WriteErrors, FullFilesystem) {
  ScratchDir outer;
  testing::TmpfsMount tmpfs(outer.path(), "size=4m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "full-filesystem case skipped: " << tmpfs.why_not();
  ScratchDir inner(tmpfs.dir());
  auto p = inner.create_file("big");
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  Buffer chunk(kChunk, BufferKind::Aligned);
  auto f = open(p, Access::ReadWrite);
  std::uint64_t written = 0;
  auto e = expect_error([&] {
    for (std::uint64_t off = 0; off < 8 * kChunk; off += kChunk) {
      fill_pattern(11, off, chunk.span());
      f->write_at(off, chunk.span());
      written = off + kChunk;
    }
    f->sync(Durability::Fsync);
    f->close();
  });
  try {
    f->close();
  } catch (const Error&) {
    // A buffered method may report the same failure again while flushing.
  }
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOSPC) << e->what();
  expect_names(*e, p);
  if (GetParam().method == "mmap") {
    EXPECT_EQ(e->operation(), "fallocate") << "mmap allocates before it writes";
  }
  EXPECT_LE(written, 4 * kChunk) << "more was accepted than the filesystem holds";
  // What the method reported written is really there.
  auto disk = testing::read_bytes(p);
  EXPECT_LE(disk.size(), 4 * kChunk);
  EXPECT_GE(disk.size(), written) << "whole chunks reported written must be on disk";
  EXPECT_TRUE(matches_pattern(11, 0, std::span(disk).first(written)));
  inner.remove_file(p);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, WriteErrors, ::testing::ValuesIn(testing::all_variants()),
                         [](const auto& p) { return p.param.label; });

}  // namespace
}  // namespace iolab::io
