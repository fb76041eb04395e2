// Error injection into the record store on every backend: the n-th call
// the syscall helper makes (through io::Env::posix()) fails with EIO,
// ENOSPC, EINTR or EAGAIN, or moves half its bytes, for every n a workload
// of puts, replaces, removes, commits, a compaction and a close reaches.
// EINTR and short transfers must be invisible. An error must be one line
// naming the call and the path, with the injected errno; then a reopen
// (no salvage) must show exactly the records of the operations that
// returned, or those plus the one that failed, every record intact, and
// no temporary journal left behind.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "iolab/base/error.h"
#include "iolab/testing/call_faults.h"
#include "iolab/io/scratch.h"
#include "iolab/store/record_store.h"
#include "store/store_test_util.h"

namespace iolab::store {
namespace {

using io::sys::Fault;
using testing::contents;
using testing::key_name;
using testing::make_employee;

using Model = std::map<std::string, Employee>;

struct Outcome {
  Model done;                   // state after the operations that returned
  std::optional<Model> maybe;   // ... with the one that failed applied
  std::optional<Error> error;
};

// Runs the workload; stops at the first Error.
Outcome workload(const std::filesystem::path& path, const StoreOptions& o) {
  Outcome out;
  auto apply = [&](auto&& op, auto&& change) {
    Model next = out.done;
    change(next);
    out.maybe = next;
    op();
    out.done = std::move(next);
    out.maybe.reset();
  };
  try {
    RecordStore s(path, o);
    for (int i = 0; i < 14; ++i) {
      std::string key = key_name(static_cast<std::uint64_t>(i % 6));
      Employee e = make_employee(key, static_cast<std::uint64_t>(i));
      apply([&] { s.put(e); }, [&](Model& m) { m[key] = e; });
      if (i % 4 == 3) apply([&] { s.remove(key_name(static_cast<std::uint64_t>(i % 5))); },
                            [&](Model& m) { m.erase(key_name(static_cast<std::uint64_t>(i % 5))); });
    }
    apply([&] { s.commit(); }, [](Model&) {});
    apply([&] { s.compact(); }, [](Model&) {});
    Employee last = make_employee("Last", 1);
    apply([&] { s.put(last); }, [&](Model& m) { m[last.last] = last; });
    apply([&] { s.close(); }, [](Model&) {});
  } catch (const Error& e) {
    out.error = e;
  }
  return out;
}

class StoreFaultInjection : public ::testing::TestWithParam<Backend> {};

TEST_P(StoreFaultInjection, EveryCallFailsCleanlyAndReopenShowsWhatReturned) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  StoreOptions o;
  o.backend = GetParam();
  o.sync = io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 2};
  o.mmap_grow_step = 4096;
  o.stage_buffer = 4096;
  std::string matrix;
  for (Fault fault : io::sys::kAllFaults) {
    SCOPED_TRACE(std::string(io::sys::to_string(fault)));
    std::uint64_t calls = 0;
    {
      auto path = scratch.create_unique_file("count");
      io::sys::NthCallFault counter("", 0, fault);
      io::sys::ScopedInjector on(counter);
      Outcome clean = workload(path, o);
      ASSERT_FALSE(clean.error) << clean.error->what();
      calls = counter.calls_seen();
    }
    std::uint64_t passed = 0;
    for (std::uint64_t n = 1; n <= calls; ++n) {
      SCOPED_TRACE("call " + std::to_string(n) + " of " + std::to_string(calls));
      auto path = scratch.create_unique_file("inject");
      io::sys::NthCallFault injector("", n, fault);
      Outcome out;
      {
        io::sys::ScopedInjector on(injector);
        out = workload(path, o);
      }
      ASSERT_TRUE(injector.fired());
      if (io::sys::error_number(fault) == 0) {
        ASSERT_FALSE(out.error) << "an injected " << io::sys::to_string(fault) << " was not absorbed: "
                                << out.error->what();
      } else {
        ASSERT_TRUE(out.error) << "an injected " << io::sys::to_string(fault) << " was swallowed";
        std::string what = out.error->what();
        EXPECT_EQ(out.error->error_number(), io::sys::error_number(fault)) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_NE(what.find(path.parent_path().string()), std::string::npos) << "names no path: " << what;
        EXPECT_NE(what.find(std::strerror(io::sys::error_number(fault))), std::string::npos) << what;
      }
      std::filesystem::path leftover = path.string() + ".compact";
      EXPECT_FALSE(std::filesystem::exists(leftover)) << "a failed compact left its temporary journal";
      {
        RecordStore again(path, StoreOptions{});  // no injection, no salvage
        Model got = contents(again);
        EXPECT_TRUE(got == out.done || (out.maybe && got == *out.maybe))
            << "after " << (out.error ? out.error->what() : "no error") << ": " << got.size() << " records, expected "
            << out.done.size() << (out.maybe ? " or " + std::to_string(out.maybe->size()) : "");
        again.close();
      }
      if (::testing::Test::HasFailure()) return;
      ++passed;
      std::filesystem::remove(leftover);
      scratch.remove_file(path);
    }
    matrix += ' ';  // (appended piecewise: gcc 12 warns falsely about " " + string)
    matrix += io::sys::to_string(fault);
    matrix += ' ';
    matrix += std::to_string(passed) + "/" + std::to_string(calls);
  }
  std::printf("store injection matrix  %s:%s\n", std::string(to_string(GetParam())).c_str(), matrix.c_str());
}

// The known gaps of issue 13, one by one: a failed rename leaves the store
// open and usable, with no temporary journal; a failed directory sync is
// reported (and the store then refuses changes until reopened); a failed
// fsync is reported as fsync.
TEST(StoreFaultInjection, CompactFailuresAreReportedAndLeaveNoTemporaryFile) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  auto path = scratch.create_file("journal");
  std::filesystem::path tmp = path.string() + ".compact";
  StoreOptions o;
  o.sync = io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync};
  o.sync.call = io::Durability::Fsync;
  RecordStore s(path, o);
  s.put(make_employee("A", 1));
  {
    io::sys::NthCallFault rename_fails("rename", 1, Fault::Eio);
    io::sys::ScopedInjector on(rename_fails);
    try {
      s.compact();
      ADD_FAILURE() << "the failed rename went unreported";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rename " + tmp.string() + " -> " + path.string()), std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
  s.put(make_employee("B", 1));  // still open and usable
  {
    io::sys::NthCallFault dir_sync_fails("fsync", 2, Fault::Eio);  // the tmp file's fsync, then the directory's
    io::sys::ScopedInjector on(dir_sync_fails);
    try {
      s.compact();
      ADD_FAILURE() << "the failed directory sync went unreported";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("fsync directory " + path.parent_path().string()), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(s.put(make_employee("C", 1)), Error);  // what is durable is unknown: reopen first
  s.close();
  {
    RecordStore again(path, o);
    EXPECT_EQ(again.size(), 2u);
    io::sys::NthCallFault fsync_fails("fsync", 1, Fault::Eio);
    io::sys::ScopedInjector on(fsync_fails);
    try {
      again.put(make_employee("C", 1));
      ADD_FAILURE() << "the failed fsync went unreported";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fsync " + path.string(), 0), 0u) << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(tmp));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreFaultInjection, ::testing::ValuesIn(kAllBackends),
                         [](const auto& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace iolab::store
