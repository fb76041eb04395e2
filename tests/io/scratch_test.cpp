// ScratchDir: the only place iolab writes. Fresh directory, O_EXCL files,
// removes only what it created, cleans up at destruction.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "io_test_support.h"

namespace iolab::io {
namespace {

using testing::expect_error;

TEST(ScratchDir, CreatesAFreshPrivateDirectory) {
  ScratchDir a, b;
  EXPECT_NE(a.path(), b.path());
  EXPECT_TRUE(std::filesystem::is_directory(a.path()));
  EXPECT_TRUE(std::filesystem::is_empty(a.path()));
  EXPECT_EQ(a.path().filename().string().rfind("iolab-", 0), 0u) << a.path();
  struct stat st {};
  ASSERT_EQ(::stat(a.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u) << "mkdtemp makes it private (0700)";
}

TEST(ScratchDir, UsesTheGivenParent) {
  ScratchDir outer;
  ScratchDir inner(outer.path());
  EXPECT_EQ(inner.path().parent_path(), outer.path());
}

TEST(ScratchDir, CreateFileIsExclusive) {
  ScratchDir d;
  auto p = d.create_file("data");
  EXPECT_EQ(p, d.path() / "data");
  EXPECT_TRUE(std::filesystem::is_regular_file(p));
  EXPECT_EQ(std::filesystem::file_size(p), 0u);
  auto e = expect_error([&] { d.create_file("data"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_EQ(d.created().size(), 1u);
}

TEST(ScratchDir, RefusesNamesThatLeaveTheDirectory) {
  ScratchDir d;
  for (const char* bad : {"", ".", "..", "a/b", "../escape"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(d.create_file(bad), UsageError);
  }
  EXPECT_TRUE(d.created().empty());
}

TEST(ScratchDir, NeverFollowsOrOverwritesAPlantedSymlink) {
  ScratchDir outer;
  auto victim = outer.create_file("victim");
  ScratchDir d(outer.path());
  auto link = d.path() / "planted";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  auto e = expect_error([&] { d.create_file("planted"); });
  ::unlink(link.c_str());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_EQ(std::filesystem::file_size(victim), 0u);
}

TEST(ScratchDir, UniqueFilesDoNotCollide) {
  ScratchDir d;
  auto a = d.create_unique_file("run");
  auto b = d.create_unique_file("run");
  EXPECT_NE(a, b);
  EXPECT_EQ(d.created().size(), 2u);
}

TEST(ScratchDir, RemoveFileOnlyForFilesItCreated) {
  ScratchDir outer;
  auto foreign = outer.create_file("foreign");
  ScratchDir d;
  auto mine = d.create_file("mine");
  auto e = expect_error([&] { d.remove_file(foreign); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EPERM) << e->what();
  EXPECT_TRUE(std::filesystem::exists(foreign)) << "a refused remove must not remove";
  // A path naming a file in the scratch dir that something else put there: refused too.
  int fd = ::open((d.path() / "stranger").c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_THROW(d.remove_file(d.path() / "stranger"), Error);
  EXPECT_TRUE(std::filesystem::exists(d.path() / "stranger"));
  ::unlink((d.path() / "stranger").c_str());
  d.remove_file(mine);
  EXPECT_FALSE(std::filesystem::exists(mine));
  EXPECT_TRUE(d.created().empty());
  EXPECT_THROW(d.remove_file(mine), Error) << "twice is refused: no longer ours";
}

TEST(ScratchDir, DestructorRemovesEverything) {
  std::filesystem::path dir, f1, f2;
  {
    ScratchDir d;
    dir = d.path();
    f1 = d.create_file("one");
    f2 = d.create_unique_file("two");
    ASSERT_TRUE(std::filesystem::exists(f2));
  }
  EXPECT_FALSE(std::filesystem::exists(f1));
  EXPECT_FALSE(std::filesystem::exists(f2));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ScratchDir, RemoveAllIsIdempotent) {
  ScratchDir d;
  auto dir = d.path();
  d.create_file("x");
  d.remove_all();
  EXPECT_FALSE(std::filesystem::exists(dir));
  d.remove_all();  // again, and then the destructor: harmless
}

TEST(ScratchDir, MissingOrNonDirectoryParentIsAnError) {
  ScratchDir outer;
  auto missing = outer.path() / "missing";
  auto e = expect_error([&] { ScratchDir d(missing); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOENT) << e->what();
  EXPECT_NE(std::string(e->what()).find(missing.string()), std::string::npos) << e->what();

  auto file = outer.create_file("plain");
  e = expect_error([&] { ScratchDir d(file); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOTDIR) << e->what();
  EXPECT_TRUE(std::filesystem::is_empty(outer.path()) == false);
}

TEST(ScratchDir, UnwritableParentIsAnError) {
  ScratchDir outer;
  testing::TmpfsMount ro(outer.path(), "size=64k");
  if (!ro.mounted()) GTEST_SKIP() << "read-only parent case skipped: " << ro.why_not();
  std::string why = ro.remount_read_only();
  if (!why.empty()) GTEST_SKIP() << why;
  auto e = expect_error([&] { ScratchDir d(ro.dir()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EROFS) << e->what();
}

TEST(ScratchDir, EmptyParentMeansTmpdir) {
  ScratchDir outer;
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  ::setenv("TMPDIR", outer.path().c_str(), 1);
  std::filesystem::path got;
  {
    ScratchDir d;
    got = d.path();
  }
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
  EXPECT_EQ(got.parent_path(), outer.path());
}

}  // namespace
}  // namespace iolab::io
