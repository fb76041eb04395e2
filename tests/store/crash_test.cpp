// Crash tests. A process crash: a child puts and removes with
// sync-every-put and reports each acknowledged operation through a pipe;
// the parent SIGKILLs it once it has read a seeded number of
// acknowledgements (no sleeps: where the kill lands does not decide the
// outcome). After reopening, the store must hold exactly the state after
// every acknowledged operation (or the one in flight), every record intact.
//
// A power loss: the crash-state explorer (crash_explorer.h; bench/
// crash_states runs 2,000 states under ctest) must fail on a disk that
// ignores syncs, and the corner where a remove right after a replace could
// bring the old version back must hold in every crash state.
#include <csignal>
#include <cstdlib>
#include <cerrno>
#include <map>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "iolab/testing/fault_env.h"
#include "iolab/io/scratch.h"
#include "iolab/store/record_store.h"
#include "store/crash_explorer.h"
#include "store/store_test_util.h"

namespace iolab::store {
namespace {

using testing::contents;
using testing::key_name;
using testing::make_employee;

struct Op {
  bool remove = false;
  Employee e;
};

// The operations a trial's child performs, in order; the parent regenerates them.
std::vector<Op> operations(unsigned trial, std::size_t n) {
  std::mt19937_64 rng(trial * 7919u + 1);
  std::vector<Op> ops;
  std::map<std::string, std::uint64_t> version;
  for (std::size_t i = 0; i < n; ++i) {
    std::string key = key_name(rng() % 300);  // small key space: many replaces, so holes are reused
    Op op;
    op.remove = rng() % 8 == 0;
    if (op.remove)
      op.e.last = key;
    else
      op.e = make_employee(key, ++version[key]);
    ops.push_back(std::move(op));
  }
  return ops;
}

std::map<std::string, Employee> state_after(const std::vector<Op>& ops, std::size_t n) {
  std::map<std::string, Employee> m;
  for (std::size_t i = 0; i < n && i < ops.size(); ++i) {
    if (ops[i].remove)
      m.erase(ops[i].e.last);
    else
      m[ops[i].e.last] = ops[i].e;
  }
  return m;
}

[[noreturn]] void child(const std::filesystem::path& path, StoreOptions opt, const std::vector<Op>& ops, int ack_fd) {
  try {
    RecordStore s(path, opt);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].remove)
        s.remove(ops[i].e.last);
      else
        s.put(ops[i].e);
      auto done = static_cast<std::uint32_t>(i + 1);  // acknowledged: put returned after its sync
      if (::write(ack_fd, &done, sizeof done) != sizeof done) ::_exit(3);
    }
    s.close();
  } catch (...) {
    ::_exit(2);
  }
  ::_exit(0);
}

// bench/store_crash.sh runs many more trials, on a chosen filesystem:
// IOLAB_STORE_CRASH_TRIALS (default 24), IOLAB_STORE_CRASH_DIR (default
// /dev/shm when writable: fsync is free there).
TEST(StoreCrash, KilledWriterLosesNothingAcknowledged) {
  const char* dir = std::getenv("IOLAB_STORE_CRASH_DIR");
  const char* trials = std::getenv("IOLAB_STORE_CRASH_TRIALS");
  io::ScratchDir scratch(dir != nullptr && *dir != '\0' ? std::filesystem::path(dir) : testing::fast_scratch_parent());
  const unsigned kTrials = trials != nullptr ? static_cast<unsigned>(std::strtoul(trials, nullptr, 10)) : 24;
  std::mt19937 pick(99);
  for (unsigned trial = 0; trial < kTrials; ++trial) {
    Backend backend = kAllBackends[trial % 4];
    SCOPED_TRACE("trial " + std::to_string(trial) + " backend " + std::string(to_string(backend)));
    StoreOptions opt;
    opt.backend = backend;
    opt.sync = io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync};
    opt.mmap_grow_step = 1024;  // growth and re-mapping happen while the child is killed
    const std::size_t kOps = 3000;
    auto ops = operations(trial, kOps);
    auto path = scratch.create_unique_file("crash");
    // Half the trials start from a journal already holding a prefix, so the
    // killed child also recovers a file and reuses its holes.
    std::size_t base = 0;
    if (trial % 2 == 1) {
      base = 100;
      StoreOptions quick = opt;
      quick.sync = io::FlushPolicy{io::FlushSchedule::End, io::Durability::Fdatasync};
      RecordStore s(path, quick);
      for (std::size_t i = 0; i < base; ++i) ops[i].remove ? (void)s.remove(ops[i].e.last) : s.put(ops[i].e);
      s.close();
    }
    std::vector<Op> rest(ops.begin() + static_cast<std::ptrdiff_t>(base), ops.end());
    const std::uint32_t kill_after = 1 + pick() % 400;  // acknowledgements read before the kill
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child(path, opt, rest, fds[1]);
    }
    ::close(fds[1]);
    std::uint32_t acked = 0, v = 0;
    while (acked < kill_after && ::read(fds[0], &v, sizeof v) == sizeof v) acked = v;
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    while (::read(fds[0], &v, sizeof v) == sizeof v) acked = v;  // what it acknowledged before it died
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << "child failed";
    ASSERT_GE(acked, kill_after);

    StoreOptions reopen = opt;
    reopen.sync = io::FlushPolicy{};
    RecordStore s(path, reopen);  // must open without salvage
    EXPECT_TRUE(s.open_report().salvaged.empty());
    auto got = contents(s);  // reads and CRC-checks every record
    auto before = state_after(ops, base + acked), with_next = state_after(ops, base + acked + 1);
    EXPECT_TRUE(got == before || got == with_next)
        << acked << " acknowledged; store has " << got.size() << " records, expected " << before.size() << " or "
        << with_next.size();
    if (::testing::Test::HasFailure()) break;  // one failure is enough to report
  }
}

// The checker can fail: on a disk that ignores syncs, acknowledged records go missing.
TEST(StorePowerLoss, ExplorerCatchesADiskThatIgnoresSyncs) {
  crash::Options o;
  o.crash.honour_syncs = false;
  crash::Tally t = crash::explore({Backend::Gather, io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync}}, 300, o);
  EXPECT_EQ(t.states, 300u);
  EXPECT_GT(t.lost + t.corrupt + t.failed, 0u);
  crash::Tally honest = crash::explore({Backend::Gather, io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync}}, 300, crash::Options{});
  EXPECT_TRUE(honest.clean()) << (honest.examples.empty() ? "" : honest.examples.front());
}

// Replace a key (the old version is freed after the sync), then remove it
// at once: a power loss that keeps the remove's free mark but loses the
// older free mark would bring the old version back. The store syncs first.
TEST(StorePowerLoss, RemoveRightAfterReplaceNeverResurrects) {
  for (Backend b : kAllBackends) {
    SCOPED_TRACE(std::string(to_string(b)));
    io::FaultEnv env;
    StoreOptions o;
    o.backend = b;
    o.sync = io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync};
    o.env = &env;
    Employee v1 = make_employee("K", 1), v2 = make_employee("K", 2), other = make_employee("L", 1);
    std::size_t removed_from = 0;
    {
      RecordStore s("/d/journal", o);
      s.put(v1);
      s.put(other);
      s.put(v2);  // v1's free mark is written after this put's sync
      env.settle();
      removed_from = env.operations();
      EXPECT_TRUE(s.remove("K"));
      env.settle();
      s.close();
    }
    io::CrashReplay replay(env);
    for (std::size_t point = removed_from; point <= env.operations(); ++point) {
      replay.advance_to(point);
      for (std::uint64_t seed = 0; seed < 40; ++seed) {
        io::FaultEnv after(replay.state(seed));
        StoreOptions ro = o;
        ro.env = &after;
        RecordStore s("/d/journal", ro);
        auto k = s.get("K");
        ASSERT_TRUE(!k.has_value() || *k == v2) << "point " << point << " seed " << seed << ": K came back as "
                                                << k->comments;
        ASSERT_EQ(s.get("L"), other);
      }
    }
  }
}

}  // namespace
}  // namespace iolab::store
