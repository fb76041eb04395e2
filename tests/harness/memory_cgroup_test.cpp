// The memory cgroup component on a fake cgroup root (a plain directory):
// no root and no real cgroup needed. Its removal at the end, on error and on
// a signal is checked here; tests/suites/memory_suite_test.cpp runs the
// suite in real groups where the machine offers them.
#include "iolab/harness/memory_cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"

namespace iolab::harness {
namespace {

namespace fs = std::filesystem;

struct FakeRoot {
  testing::TestDir place;
  fs::path dir = place.path();
  CgroupRoot root(CgroupVersion v = CgroupVersion::V1) const { return CgroupRoot{dir, v}; }
  unsigned groups() const {
    unsigned n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().starts_with("iolab-");
    return n;
  }
};

// Waits (bounded) for the forked `test` process to signal it is at work
// (the file `at_work` exists), sends it SIGINT and checks it ended by it;
// the outcome is that exit status, not the wait.
void interrupt_once_at_work(pid_t test, const fs::path& at_work) {
  for (int i = 0; i < 2000 && !fs::exists(at_work); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(at_work));
  ::kill(test, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(test, &status, 0), test);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST(FindMemoryCgroup, PrefersV2WithMemoryForChildrenElseV1ElseSaysWhy) {
  FakeRoot fake;
  fs::create_directories(fake.dir / "unified");
  fs::create_directories(fake.dir / "memory");
  proc::CgroupMounts mounts{fake.dir / "memory", fake.dir / "unified"};
  CgroupPlace v1 = find_memory_cgroup(mounts);  // unified without controllers, as on this machine
  ASSERT_TRUE(v1.root) << v1.why;
  EXPECT_EQ(v1.root->version, CgroupVersion::V1);
  EXPECT_EQ(v1.root->dir, fake.dir / "memory");
  std::ofstream(fake.dir / "unified" / "cgroup.subtree_control") << "cpu io memory pids\n";
  CgroupPlace v2 = find_memory_cgroup(mounts);
  ASSERT_TRUE(v2.root);
  EXPECT_EQ(v2.root->version, CgroupVersion::V2);
  CgroupPlace none = find_memory_cgroup(proc::CgroupMounts{});
  EXPECT_FALSE(none.root);
  EXPECT_NE(none.why.find("no memory cgroup controller"), std::string::npos) << none.why;
}

TEST(CgroupMountsReader, FindsTheV1MemoryHierarchyAndTheUnifiedOne) {
  FakeRoot fake;
  std::ofstream(fake.dir / "mounts") << "sysfs /sys sysfs rw 0 0\n"
                                        "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid 0 0\n"
                                        "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu,cpuacct 0 0\n"
                                        "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n";
  proc::CgroupMounts m = proc::cgroup_mounts(fake.dir / "mounts");
  EXPECT_EQ(m.memory_v1, "/sys/fs/cgroup/memory");
  EXPECT_EQ(m.unified, "/sys/fs/cgroup/unified");
  std::ofstream(fake.dir / "memory.stat") << "cache 123\nrss 7\nfile 99\n";
  EXPECT_EQ(proc::keyed_value(fake.dir / "memory.stat", "cache"), 123u);
  EXPECT_EQ(proc::keyed_value(fake.dir / "memory.stat", "file"), 99u);
  EXPECT_FALSE(proc::keyed_value(fake.dir / "memory.stat", "nothing"));
}

TEST(MemoryCgroup, SetsItsLimitAndIsRemovedAtTheEnd) {
  FakeRoot fake;
  fs::path where;
  {
    MemoryCgroup v1(fake.root(CgroupVersion::V1), 32u << 20);
    where = v1.path();
    EXPECT_EQ(testing::read_file(where / "memory.limit_in_bytes"), std::to_string(32u << 20));
    MemoryCgroup v2(fake.root(CgroupVersion::V2), 4096);
    EXPECT_EQ(testing::read_file(v2.path() / "memory.max"), "4096");
    EXPECT_NE(v1.path(), v2.path());
    EXPECT_EQ(fake.groups(), 2u);
    v2.remove();
    EXPECT_TRUE(v2.removed());
    v2.remove();  // twice: harmless
  }
  EXPECT_FALSE(fs::exists(where));
  EXPECT_EQ(fake.groups(), 0u);
}

// A process that has ended and been reaped: its pid names no process now.
pid_t a_pid_that_is_gone() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// What a SIGKILL leaves (no cleanup runs): empty groups under the killed
// pid, which a later process may have again. The next group made reclaims
// them, and a group whose name this process's pid reuses no longer stops it
// ("mkdir: File exists"); a live process's group and other names stay.
TEST(MemoryCgroup, GroupsLeftByAKilledProcessAreReclaimedAndTheirNamesReused) {
  FakeRoot fake;
  auto leave = [&](const std::string& name) {
    fs::create_directory(fake.dir / name);
    std::ofstream(fake.dir / name / "cgroup.procs");
    std::ofstream(fake.dir / name / "memory.limit_in_bytes") << 1;
    return fake.dir / name;
  };
  const std::string mine = "iolab-" + std::to_string(::getpid()) + "-";
  std::vector<fs::path> left;
  for (int n = 0; n < 300; ++n) left.push_back(leave(mine + std::to_string(n)));  // every name this pid will try
  left.push_back(leave("iolab-" + std::to_string(a_pid_that_is_gone()) + "-0"));
  const fs::path live_one = leave("iolab-1-0");  // pid 1 lives
  const fs::path not_ours = leave("iolab-x-0");
  {
    MemoryCgroup group(fake.root(), 32u << 20);
    for (const auto& p : left) {
      if (p == group.path()) continue;
      EXPECT_FALSE(fs::exists(p)) << p << " was left by a process that is gone";
    }
    EXPECT_FALSE(fs::exists(group.path() / "cgroup.procs")) << "the name reused is a group made afresh";
    EXPECT_TRUE(fs::exists(group.path()));
    EXPECT_TRUE(fs::exists(live_one)) << "a live process's group is not touched";
    EXPECT_TRUE(fs::exists(not_ours)) << "a name iolab does not give is not touched";
    MemoryCgroup second(fake.root(), 32u << 20);  // reclaiming again spares this process's own live group
    EXPECT_TRUE(fs::exists(group.path()));
  }
  EXPECT_EQ(fake.groups(), 2u);  // iolab-1-0 and iolab-x-0
}

TEST(RunInChild, ReturnsWhatTheChildSaysFromInsideTheGroup) {
  FakeRoot fake;
  MemoryCgroup group(fake.root(), 1u << 20);
  std::string text = run_in_child(group, [] { return "pid " + std::to_string(::getpid()); });
  const std::string child_pid = testing::read_file(group.path() / "cgroup.procs");
  EXPECT_EQ(text, "pid " + child_pid) << "the child was placed in the group before its work started";
  EXPECT_NE(child_pid, std::to_string(::getpid()));
}

TEST(RunInChild, AChildsFailureIsTheCallersErrorAndTheGroupStillGoes) {
  FakeRoot fake;
  try {
    MemoryCgroup group(fake.root(), 1u << 20);
    run_in_child(group, []() -> std::string { throw Error("read", "/some/file", "it broke", EIO); });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it broke"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("child in v1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fake.groups(), 0u);
  MemoryCgroup group(fake.root(), 1u << 20);
  EXPECT_THROW(run_in_child(group, []() -> std::string { ::_exit(9); }), Error);
}

// A child paced by its parent: messages both ways, then its result; a
// failure in the middle is the parent's error at its next receive, with the
// child's message, and the group still goes.
TEST(ChildSession, MessagesBothWaysThenTheResult) {
  FakeRoot fake;
  MemoryCgroup group(fake.root(), 1u << 20);
  ChildSession session(group, [](ParentLink& parent) {
    std::string said;
    for (std::string m; (m = parent.receive()) != "end";) {
      if (m == "more?") throw Error("parse", "message", "a child does not ask its own question");
      parent.send("more?");
      said += m + (parent.receive() == "yes" ? "+" : "-");
    }
    return said;
  });
  for (const char* m : {"a", "b"}) {
    session.send(m);
    EXPECT_EQ(session.receive(), "more?");
    session.send(std::string(m) == "a" ? "yes" : "no");
  }
  session.send("end");
  EXPECT_EQ(session.finish(), "a+b-");
}

TEST(ChildSession, AFailureInTheMiddleIsTheParentsErrorAndTheGroupStillGoes) {
  FakeRoot fake;
  {
    MemoryCgroup group(fake.root(), 1u << 20);
    ChildSession session(group, [](ParentLink& parent) -> std::string {
      parent.receive();
      throw Error("read", "/some/file", "it broke midway", EIO);
    });
    session.send("go");
    try {
      session.receive();
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("it broke midway"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("child in v1"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(fake.groups(), 0u);
  // A child that ends without answering: the parent is not left waiting.
  MemoryCgroup group(fake.root(), 1u << 20);
  ChildSession quiet(group, [](ParentLink&) { return std::string("done"); });
  EXPECT_THROW(quiet.receive(), Error);
}

// A signal iolab handles while the child works: the child is killed and the
// group removed before the process ends by that signal.
TEST(RunInChild, SigintRemovesTheGroup) {
  FakeRoot fake;
  const fs::path started = fake.dir / "started";
  const pid_t test = ::fork();
  ASSERT_GE(test, 0);
  if (test == 0) {
    io::remove_scratch_dirs_on_signals();
    MemoryCgroup group(fake.root(), 1u << 20);
    run_in_child(group, [&]() -> std::string {
      std::ofstream(started) << "x";
      for (;;) ::pause();
    });
    ::_exit(0);
  }
  interrupt_once_at_work(test, started);
  EXPECT_EQ(fake.groups(), 0u) << "the group outlived the signal";
}

// The larger-than-memory column's session, mid-conversation: a signal kills
// the child, removes the group, and runs `after_signal`, which removes the
// files the child made (the parent's scratch directory does not know them).
TEST(ChildSession, SigintMidConversationRemovesTheGroupAndTheChildsFiles) {
  FakeRoot fake;
  const fs::path childs_file = fake.dir / "childs-file";
  const fs::path at_work = fake.dir / "at-work";
  const pid_t test = ::fork();
  ASSERT_GE(test, 0);
  if (test == 0) {
    io::remove_scratch_dirs_on_signals();
    MemoryCgroup group(fake.root(), 1u << 20);
    ChildSession session(
        group,
        [&](ParentLink& parent) -> std::string {
          std::ofstream(childs_file) << "data";
          parent.send("made");
          parent.receive();  // never comes
          return "unreachable";
        },
        [&] { fs::remove(childs_file); });
    if (session.receive() != "made" || !fs::exists(childs_file)) ::_exit(3);  // at work only once the file is there
    std::ofstream(at_work) << "x";
    for (;;) ::pause();
  }
  interrupt_once_at_work(test, at_work);
  EXPECT_EQ(fake.groups(), 0u) << "the group outlived the signal";
  EXPECT_FALSE(fs::exists(childs_file)) << "the child's file outlived the signal";
}

}  // namespace
}  // namespace iolab::harness
