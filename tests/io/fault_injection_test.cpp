// Error injection for every method of the conformance suite: the n-th call
// the system-call helper (io/syscall.h) makes fails with EIO, ENOSPC,
// EINTR or EAGAIN, or moves half its bytes, for every n the workload
// reaches. EINTR and short transfers must be invisible (the data reads back
// exactly); the errors must surface as one iolab::Error of one line naming
// the call and the path, with the injected errno: no crash, no SIGBUS, no
// error swallowed. Calls a method makes outside the helper (stdio's and
// iostream's library calls, stores into a mapping, io_uring's ring) cannot
// be reached this way: the matrix printed at the end says what each method
// exposes.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "io_test_support.h"
#include "iolab/testing/call_faults.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

using sys::Fault;
using testing::Variant;

constexpr std::uint64_t kFaultSeed = 0x1e;

// The workload: open, two writes, a sync, a read of everything, the size,
// close. Returns the bytes it wrote (the file's expected content).
std::vector<std::byte> workload(const Variant& v, const std::filesystem::path& path) {
  const bool aligned = testing::rejects_unaligned(v);
  const std::size_t first = 64 * 1024, second = aligned ? 8192 : 5000;
  Buffer a(first, BufferKind::Aligned), b(second, BufferKind::Aligned), back(first + second, BufferKind::Aligned);
  fill_pattern(kFaultSeed, 0, a.span());
  fill_pattern(kFaultSeed, first, b.span());
  auto f = find_file_method(v.method).open(path, Access::ReadWrite, v.options);
  f->write_at(0, a.span());
  f->write_at(first, b.span());
  if (f->supports(Durability::Fdatasync)) f->sync(Durability::Fdatasync);
  std::size_t n = f->read_at(0, back.span());
  if (n != first + second) throw Error("read back", path.string(), "short read of " + std::to_string(n) + " bytes");
  if (f->size() != first + second) throw Error("size", path.string(), "wrong size " + std::to_string(f->size()));
  f->close();
  std::vector<std::byte> expected(first + second);
  fill_pattern(kFaultSeed, 0, expected);  // the pattern depends on the offset only: a then b
  if (!std::equal(expected.begin(), expected.end(), back.data()))
    throw Error("read back", path.string(), "the data read differs from the data written");
  return expected;
}

struct Cell {
  std::uint64_t calls = 0, passed = 0;
};

class FaultInjection : public ::testing::TestWithParam<Variant> {};

TEST_P(FaultInjection, EveryCallFailsCleanlyOrTransparently) {
  const Variant& v = GetParam();
  const Method& m = find_file_method(v.method);
  ScratchDir scratch;
  Availability av = m.probe(scratch.path());
  if (!av.available) GTEST_SKIP() << v.method << ": " << av.reason;
  std::map<Fault, Cell> cells;
  for (Fault fault : sys::kAllFaults) {
    SCOPED_TRACE(std::string(sys::to_string(fault)));
    std::uint64_t calls = 0;
    {
      auto path = scratch.create_unique_file("count");
      sys::NthCallFault counter("", 0, fault);
      sys::ScopedInjector on(counter);
      workload(v, path);
      calls = counter.calls_seen();
    }
    Cell& cell = cells[fault];
    cell.calls = calls;
    for (std::uint64_t n = 1; n <= calls; ++n) {
      SCOPED_TRACE("call " + std::to_string(n) + " of " + std::to_string(calls));
      auto path = scratch.create_unique_file("inject");
      sys::NthCallFault injector("", n, fault);
      std::optional<Error> error;
      std::vector<std::byte> expected;
      {
        sys::ScopedInjector on(injector);
        try {
          expected = workload(v, path);
        } catch (const Error& e) {
          error = e;
        }
      }
      if (!injector.fired()) {
        // A queued method's number of waits depends on when completions
        // arrive, so a later run may make fewer calls than the counting run:
        // nothing was injected, and the run must simply have succeeded.
        ASSERT_FALSE(error) << error->what();
        EXPECT_EQ(testing::read_bytes(path), expected);
        scratch.remove_file(path);
        continue;
      }
      if (sys::error_number(fault) == 0) {
        ASSERT_FALSE(error) << "an injected " << sys::to_string(fault) << " was not absorbed: " << error->what();
        EXPECT_EQ(testing::read_bytes(path), expected);
      } else {
        ASSERT_TRUE(error) << "an injected " << sys::to_string(fault) << " was swallowed";
        std::string what = error->what();
        EXPECT_EQ(error->error_number(), sys::error_number(fault)) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_NE(what.find(path.string()), std::string::npos) << "the message names no path: " << what;
        EXPECT_NE(what.find(std::strerror(sys::error_number(fault))), std::string::npos) << what;
        // The file is still a file iolab can open and read.
        EXPECT_NO_THROW(testing::read_bytes(path));
      }
      if (::testing::Test::HasFailure()) return;
      ++cell.passed;
      scratch.remove_file(path);
    }
  }
  std::string line = v.label + ":";
  for (const auto& [fault, cell] : cells)
    line += " " + std::string(sys::to_string(fault)) + " " + std::to_string(cell.passed) + "/" + std::to_string(cell.calls);
  std::printf("injection matrix  %s\n", line.c_str());
}

INSTANTIATE_TEST_SUITE_P(Methods, FaultInjection, ::testing::ValuesIn(testing::all_variants()),
                         [](const auto& p) { return p.param.label; });

// The injector itself: counts only matching calls, fires once, shortens by half.
TEST(CallInjector, NthMatchingCallOnly) {
  sys::NthCallFault f("pwrite", 2, Fault::ShortTransfer);
  EXPECT_EQ(f.on_call("pread", 100).length, 100u);
  EXPECT_EQ(f.on_call("pwrite", 100).length, 100u);
  EXPECT_EQ(f.on_call("pwrite", 100).length, 50u);
  EXPECT_TRUE(f.fired());
  EXPECT_EQ(f.on_call("pwrite", 100).length, 100u);
  EXPECT_EQ(f.calls_seen(), 3u);
  sys::NthCallFault e("", 1, Fault::Eio);
  EXPECT_EQ(e.on_call("fsync", 0).error, EIO);
  EXPECT_EQ(e.on_call("fsync", 0).error, 0);
}

}  // namespace
}  // namespace iolab::io
