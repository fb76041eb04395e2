// ScratchDir: the only place iolab writes. Fresh directory, O_EXCL files,
// removes only what it created, cleans up at destruction.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "io_test_support.h"
#include "iolab/testing/test_dir.h"

namespace iolab::io {
namespace {

using testing::expect_error;

TEST(ScratchDir, CreatesAFreshPrivateDirectory) {
  ScratchDir a, b;
  EXPECT_NE(a.path(), b.path());
  EXPECT_TRUE(std::filesystem::is_directory(a.path()));
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(a.path())) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{std::string(kScratchListName)}) << "nothing but the list of what it makes";
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

// A file a library makes beside one of ours (SQLite's -wal) goes with it;
// a file of another name, which iolab did not make, stays (and so does the directory).
TEST(ScratchDir, RemoveAllTakesCompanionsOfItsFilesOnly) {
  ScratchDir outer;
  std::filesystem::path dir;
  {
    ScratchDir d(outer.path());
    dir = d.path();
    auto db = d.create_file("store-sqlite-3");
    std::ofstream(db.string() + "-wal") << "log";
    std::ofstream(db.string() + "-journal") << "log";
    d.remove_all();
    EXPECT_FALSE(std::filesystem::exists(dir)) << "companions removed, then the directory";
  }
  {
    ScratchDir d(outer.path());
    dir = d.path();
    d.create_file("data");
    std::ofstream(dir / "stranger") << "not ours";
    std::ofstream(dir / "database") << "not ours either: not data-<suffix>";
    d.remove_all();
    EXPECT_TRUE(std::filesystem::exists(dir / "stranger"));
    EXPECT_TRUE(std::filesystem::exists(dir / "database"));
    EXPECT_FALSE(std::filesystem::exists(dir / "data"));
  }
  std::filesystem::remove(dir / "stranger");
  std::filesystem::remove(dir / "database");
  std::filesystem::remove(dir);
}

// SIGKILL runs no cleanup: the directory, its files, a library's companion,
// a directory made through it, and a child's scratch directory inside stay.
// The next ScratchDir under the same parent removes all that, following no
// symlink; a live process's directory, and a file the list does not name
// (with the directory holding it), stay.
TEST(ScratchDir, WhatAKilledProcessLeftIsReclaimedAndNothingElse) {
  testing::TestDir parent_dir("/tmp");
  const std::filesystem::path parent = parent_dir.path(), where = parent / "where", outside = parent / "outside";
  std::ofstream(outside) << "the user's";
  auto killed_child = [&](bool with_stranger) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ScratchDir d(parent);
      auto db = d.create_file("db");
      std::ofstream(db.string() + "-wal") << "log";
      auto sub = d.create_dir("commitlog-0");
      std::ofstream(sub / "00000000000000000000.log") << "segment";
      std::filesystem::create_symlink(outside, sub / "link");
      ScratchDir child(d.path());
      child.create_file("child-data");
      if (with_stranger) std::ofstream(d.path() / "stranger") << "not listed";
      std::ofstream(where) << d.path().string();
      ::kill(::getpid(), SIGKILL);
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    std::string dir;
    std::ifstream in(where);
    std::getline(in, dir);
    return std::filesystem::path(dir);
  };
  ScratchDir live(parent);
  live.create_file("live-data");
  const std::filesystem::path left = killed_child(false);
  ASSERT_TRUE(std::filesystem::exists(left / "commitlog-0" / "link"));
  ASSERT_EQ(::utimensat(AT_FDCWD, (left / std::string(kScratchListName)).c_str(), nullptr, 0), 0);
  EXPECT_TRUE(reclaim_abandoned_scratch_dirs(parent, 3600).empty()) << "a list that just changed may be one being made";
  EXPECT_EQ(reclaim_abandoned_scratch_dirs(parent, 0), std::vector<std::filesystem::path>{left});
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_EQ(testing::read_file(outside), "the user's") << "a symlink is removed, never followed";
  EXPECT_TRUE(std::filesystem::exists(live.path() / "live-data")) << "its process lives: its lock is held";

  const std::filesystem::path with_stranger = killed_child(true);
  EXPECT_TRUE(reclaim_abandoned_scratch_dirs(parent, 0).empty());
  EXPECT_TRUE(std::filesystem::exists(with_stranger / "stranger"));
  EXPECT_FALSE(std::filesystem::exists(with_stranger / "db"));
  EXPECT_FALSE(std::filesystem::exists(with_stranger / "db-wal"));
  EXPECT_FALSE(std::filesystem::exists(with_stranger / "commitlog-0"));
  std::filesystem::remove_all(with_stranger);
}

// An MPI rank reclaims rank 0's directory by name once rank 0 has ended:
// that one only, and only when no process holds its list.
TEST(ScratchDir, OneAbandonedDirectoryIsReclaimedByNameAndNoOther) {
  testing::TestDir parent_dir("/tmp");
  const std::filesystem::path parent = parent_dir.path();
  // Made before the killed process's, so their constructors reclaim nothing of each other.
  ScratchDir live(parent);
  live.create_file("live-data");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ScratchDir first(parent), second(parent);  // the second skips the first: its lock is held
    first.create_file("mpi-posix");
    second.create_file("mpi-posix");
    std::ofstream(parent / "first") << first.path().string();
    std::ofstream(parent / "second") << second.path().string();
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const std::filesystem::path first = testing::read_file(parent / "first"), second = testing::read_file(parent / "second");
  EXPECT_FALSE(reclaim_abandoned_scratch_dir(live.path(), 0)) << "its process lives";
  EXPECT_TRUE(std::filesystem::exists(live.path() / "live-data"));
  EXPECT_FALSE(reclaim_abandoned_scratch_dir(parent / "first", 0)) << "not a scratch directory's name";
  EXPECT_TRUE(reclaim_abandoned_scratch_dir(first, 0));
  EXPECT_FALSE(std::filesystem::exists(first));
  EXPECT_TRUE(std::filesystem::exists(second / "mpi-posix")) << "only the directory named";
  EXPECT_FALSE(reclaim_abandoned_scratch_dir(first, 0)) << "gone already";
  EXPECT_TRUE(reclaim_abandoned_scratch_dir(second, 0));
}

// What a child process left after `sig`: how it ended, and what its hook wrote.
struct SignalOutcome {
  int status = 0;
  bool scratch_left = true;
  std::string hook_saw;
};

// A child that sets up the cleanup, makes a scratch directory with a file
// and a SQLite-style companion, registers a hook, and is sent `sig` by itself.
SignalOutcome signal_child(int sig, bool ignored_before = false) {
  // Not a ScratchDir: the child's cleanup removes every ScratchDir it knows,
  // those it inherited from this process included.
  std::string parent = "/tmp/iolab-signal-test-XXXXXX";
  if (::mkdtemp(parent.data()) == nullptr) ADD_FAILURE() << std::strerror(errno);
  const std::filesystem::path marker = std::filesystem::path(parent) / "hook", where = std::filesystem::path(parent) / "where";
  pid_t pid = ::fork();
  if (pid == 0) {
    struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT, SIGXCPU, SIGXFSZ dump core by default
    if (ignored_before) ::signal(sig, SIG_IGN);
    remove_scratch_dirs_on_signals();
    ScratchDir d(parent);
    auto db = d.create_file("db");
    std::ofstream(db.string() + "-wal") << "log";
    std::ofstream(where) << d.path().string();
    InterruptHook hook([&](int s) { std::ofstream(marker) << signal_name(s); });
    ::kill(::getpid(), sig);
    if (ignored_before) ::_exit(0);  // still here: the signal stayed ignored; the destructors are skipped
    for (;;) ::pause();
  }
  SignalOutcome o;
  EXPECT_GT(pid, 0);
  while (::waitpid(pid, &o.status, 0) < 0 && errno == EINTR) {
  }
  std::ifstream in(where);
  std::string dir;
  std::getline(in, dir);
  o.scratch_left = dir.empty() || std::filesystem::exists(dir);
  std::ifstream hook_file(marker);
  std::getline(hook_file, o.hook_saw);
  std::error_code ec;
  std::filesystem::remove_all(parent, ec);
  return o;
}

TEST(ScratchSignals, EachSignalRunsTheHooksRemovesScratchAndEndsByThatSignal) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU, SIGXFSZ}) {
    SCOPED_TRACE(signal_name(sig));
    SignalOutcome o = signal_child(sig);
    ASSERT_TRUE(WIFSIGNALED(o.status)) << "exit status " << o.status;
    EXPECT_EQ(WTERMSIG(o.status), sig);
    EXPECT_FALSE(o.scratch_left) << "the directory, its file and the -wal beside it are gone";
    EXPECT_EQ(o.hook_saw, signal_name(sig));
  }
}

TEST(ScratchSignals, ASignalInheritedAsIgnoredStaysIgnored) {
  SignalOutcome o = signal_child(SIGHUP, /*ignored_before=*/true);  // nohup
  ASSERT_TRUE(WIFEXITED(o.status)) << "killed by " << WTERMSIG(o.status);
  EXPECT_EQ(WEXITSTATUS(o.status), 0);
  EXPECT_EQ(o.hook_saw, "") << "no cleanup ran";
}

TEST(ScratchSignals, SignalNames) {
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGPIPE), "SIGPIPE");
}

TEST(ScratchDir, ParentForFollowsTheConstructor) {
  EXPECT_EQ(ScratchDir::parent_for("/some/where"), "/some/where");
  const char* tmp = std::getenv("TMPDIR");
  EXPECT_EQ(ScratchDir::parent_for({}), (tmp && *tmp) ? std::filesystem::path(tmp) : std::filesystem::path("/tmp"));
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
