// Crash test: a child process puts (and sometimes removes) with
// sync-every-put and reports each acknowledged operation through a pipe;
// the parent SIGKILLs it at a random moment. After reopening, the store
// must hold exactly the state after every acknowledged operation (plus,
// possibly, the one in flight), every record intact.
#include <csignal>
#include <cstdlib>
#include <cerrno>
#include <map>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "iolab/io/scratch.h"
#include "iolab/store/record_store.h"
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
// /dev/shm when writable: fsync is free there, so the child gets further).
TEST(StoreCrash, KilledWriterLosesNothingAcknowledged) {
  const char* dir = std::getenv("IOLAB_STORE_CRASH_DIR");
  const char* trials = std::getenv("IOLAB_STORE_CRASH_TRIALS");
  io::ScratchDir scratch(dir != nullptr && *dir != '\0' ? std::filesystem::path(dir) : testing::fast_scratch_parent());
  const unsigned kTrials = trials != nullptr ? static_cast<unsigned>(std::strtoul(trials, nullptr, 10)) : 24;
  std::mt19937 timing(99);
  std::uint64_t killed_mid_run = 0, max_acked = 0;
  for (unsigned trial = 0; trial < kTrials; ++trial) {
    Backend backend = kAllBackends[trial % 4];
    SCOPED_TRACE("trial " + std::to_string(trial) + " backend " + std::string(to_string(backend)));
    if (::testing::Test::HasFailure()) break;  // one failure is enough to report
    StoreOptions opt;
    opt.backend = backend;
    opt.sync = SyncPolicy::every_put();
    opt.mmap_grow_step = 1024;  // growth and re-mapping happen while the child is killed
    auto ops = operations(trial, 20000);  // more than any child finishes before the kill
    auto path = scratch.create_unique_file("crash");
    // Half the trials start from a journal already holding a prefix, so the
    // killed child also recovers a file and reuses its holes.
    std::size_t base = 0;
    if (trial % 2 == 1) {
      base = 100;
      StoreOptions quick = opt;
      quick.sync = SyncPolicy::at_close();
      RecordStore s(path, quick);
      for (std::size_t i = 0; i < base; ++i) ops[i].remove ? (void)s.remove(ops[i].e.last) : s.put(ops[i].e);
      s.close();
    }
    std::vector<Op> rest(ops.begin() + static_cast<std::ptrdiff_t>(base), ops.end());
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child(path, opt, rest, fds[1]);
    }
    ::close(fds[1]);
    ::usleep(500 + timing() % 15000);
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    std::uint32_t acked = 0, v;
    while (::read(fds[0], &v, sizeof v) == sizeof v) acked = v;
    ::close(fds[0]);
    if (WIFSIGNALED(status)) ++killed_mid_run;
    ASSERT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) << "child failed";
    max_acked = std::max<std::uint64_t>(max_acked, acked);

    StoreOptions reopen = opt;
    reopen.sync = SyncPolicy::none();
    RecordStore s(path, reopen);  // must open without salvage: a crash leaves only a torn tail
    EXPECT_TRUE(s.open_report().salvaged.empty());
    auto got = contents(s);  // reads and CRC-checks every record
    auto before = state_after(ops, base + acked), with_next = state_after(ops, base + acked + 1);
    EXPECT_TRUE(got == before || got == with_next)
        << acked << " acknowledged; store has " << got.size() << " records, expected " << before.size() << " or "
        << with_next.size();
    for (const auto& [key, e] : before) {
      Employee one;
      std::size_t in_flight = base + acked;
      if (in_flight < ops.size() && ops[in_flight].e.last == key) continue;  // may have replaced or removed it
      ASSERT_TRUE(s.get(key, one)) << "acknowledged key missing: " << key;
      EXPECT_EQ(one, e);
    }
  }
  EXPECT_GT(killed_mid_run, kTrials / 2) << "most trials should kill the child mid-run";
  EXPECT_GT(max_acked, 0u);
  std::printf("%u trials in %s, %llu killed mid-run, most acknowledged ops in one trial: %llu\n", kTrials,
              scratch.path().c_str(),
              static_cast<unsigned long long>(killed_mid_run), static_cast<unsigned long long>(max_acked));
}

}  // namespace
}  // namespace iolab::store
