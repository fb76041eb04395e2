// The public system-call helper (include/iolab/io/syscall.h): pwritev_full
// with more parts than IOV_MAX and with short transfers at every call, and
// errors that name their own call (an fsync failure is "fsync", not
// "fdatasync").
#include <gtest/gtest.h>

#include <fcntl.h>

#include <numeric>
#include <string>
#include <vector>

#include "io_test_support.h"
#include "iolab/testing/call_faults.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

TEST(Syscall, PwritevFullWritesEveryPartInOrderThroughShortTransfers) {
  ScratchDir scratch;
  // 2500 parts of 1..7 bytes (some empty): more than IOV_MAX (1024) per call.
  std::vector<std::vector<std::byte>> bufs(2500);
  std::vector<std::byte> expected;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    bufs[i].assign(i % 8, static_cast<std::byte>(i));
    expected.insert(expected.end(), bufs[i].begin(), bufs[i].end());
  }
  std::vector<std::span<const std::byte>> parts(bufs.begin(), bufs.end());
  for (std::uint64_t shorten : {0, 1, 2, 3}) {
    SCOPED_TRACE("short transfer at call " + std::to_string(shorten));
    auto path = scratch.create_unique_file("v");
    sys::Fd fd = sys::open_existing(path, Access::ReadWrite);
    sys::NthCallFault injector("pwritev", shorten, sys::Fault::ShortTransfer);
    IoCounters c;
    {
      sys::ScopedInjector on(injector);
      sys::pwritev_full(fd.get(), parts, 100, path, c);
    }
    fd.close(path);
    auto got = testing::read_bytes(path);
    ASSERT_EQ(got.size(), 100 + expected.size());
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got.begin() + 100));
    EXPECT_EQ(c.bytes_written, expected.size());
    EXPECT_EQ(injector.fired(), shorten != 0);
    EXPECT_GE(c.calls, 3u);  // 2188 non-empty parts, at most IOV_MAX (1024) per call
  }
}

TEST(Syscall, ErrorsNameTheirOwnCallAndPath) {
  ScratchDir scratch;
  auto path = scratch.create_file("f");
  sys::Fd fd = sys::open_existing(path, Access::ReadWrite);
  IoCounters c;
  for (auto [d, name] : {std::pair{Durability::Fsync, "fsync"}, std::pair{Durability::Fdatasync, "fdatasync"}}) {
    sys::NthCallFault injector(name, 1, sys::Fault::Eio);
    sys::ScopedInjector on(injector);
    try {
      sys::sync_fd(fd.get(), d, path, c);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string(name) + " " + path.string() + ": Input/output error");
    }
  }
  try {
    sys::rename(scratch.path() / "missing", scratch.path() / "other");
    ADD_FAILURE() << "renamed a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rename " + (scratch.path() / "missing").string() + " -> ", 0), 0u)
        << e.what();
  }
  fd.close(path);
}

}  // namespace
}  // namespace iolab::io
