// The background flusher: flushes once an interval is dirty, everything at
// finish(), and its calls go through the syscall helper, so a fault given to
// them reaches the writer as an error naming the call and the file.
#include "iolab/io/background_flusher.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "iolab/io/scratch.h"
#include "iolab/testing/call_faults.h"

namespace iolab::io {
namespace {

void append(const std::filesystem::path& p, std::uint64_t bytes) {
  sys::Fd fd = sys::open(p, O_WRONLY | O_APPEND);
  std::vector<std::byte> data(static_cast<std::size_t>(bytes), std::byte{7});
  IoCounters c;
  sys::write_full(fd.get(), data, p, c);
  fd.close(p);
}

TEST(BackgroundFlusher, FlushesEverythingWrittenByFinish) {
  for (Durability how : {Durability::Fdatasync, Durability::Fsync, Durability::SyncFileRange, Durability::MsyncSync}) {
    SCOPED_TRACE(std::string(to_string(how)));
    ScratchDir scratch;
    auto p = scratch.create_file("f");
    BackgroundFlusher flusher(p, how, 8192);
    std::uint64_t total = 0;
    for (int i = 0; i < 5; ++i) {
      append(p, 4096);
      flusher.wrote(total += 4096);
    }
    flusher.finish();
    EXPECT_EQ(flusher.flushed_bytes(), total);
    EXPECT_GE(flusher.flushes(), 1u);
    EXPECT_LE(flusher.flushes(), 3u);  // at most one per 8 KiB crossed, plus the rest at the end
  }
}

TEST(BackgroundFlusher, AFailedFlushIsTheWritersErrorNamingCallAndFile) {
  ScratchDir scratch;
  auto p = scratch.create_file("f");
  sys::NthCallFault fault("fdatasync", 1, sys::Fault::Eio);
  sys::ScopedInjector on(fault);
  BackgroundFlusher flusher(p, Durability::Fdatasync, 4096);
  append(p, 4096);
  flusher.wrote(4096);
  try {
    flusher.finish();
    FAIL() << "a failed fdatasync was not reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fdatasync"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_EQ(e.error_number(), EIO);
  }
  EXPECT_TRUE(fault.fired());
}

}  // namespace
}  // namespace iolab::io
