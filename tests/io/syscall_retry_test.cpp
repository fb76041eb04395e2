// The one place where EINTR is retried and short transfers are completed
// (include/iolab/io/syscall.h): proven with a pipe, which hands data over in pieces and
// whose reads block, so a signal can interrupt them.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include "iolab/io/syscall.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

struct Pipe {
  int rd = -1, wr = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw Error("pipe2", "", errno);
    rd = fds[0];
    wr = fds[1];
  }
  ~Pipe() {
    if (rd >= 0) ::close(rd);
    if (wr >= 0) ::close(wr);
  }
  void close_writer() {
    ::close(wr);
    wr = -1;
  }
};

TEST(Posix, ReadFullCompletesShortReads) {
  Pipe p;
  std::vector<std::byte> data(10000);
  fill_pattern(1, 0, data);
  // Three pieces: each read(2) on the pipe returns at most what is there.
  std::thread writer([&] {
    for (std::size_t at : {0u, 1u, 4097u}) {
      std::size_t end = at == 0 ? 1 : at == 1 ? 4097 : data.size();
      ASSERT_EQ(::write(p.wr, data.data() + at, end - at), static_cast<ssize_t>(end - at));
    }
    p.close_writer();
  });
  std::vector<std::byte> got(20000);
  IoCounters c;
  std::size_t n = sys::read_full(p.rd, got, "pipe", c);
  writer.join();
  EXPECT_EQ(n, data.size()) << "every piece until end of file";
  EXPECT_TRUE(std::equal(data.begin(), data.end(), got.begin()));
  EXPECT_EQ(c.bytes_read, data.size());
  EXPECT_GE(c.calls, 2u);
}

std::atomic<int> g_signals{0};
void count_signal(int) { g_signals.fetch_add(1); }

// The state letter of a thread in /proc ('S' = sleeping in a blocking call).
char thread_state(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close_paren = all.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= all.size() ? '?' : all[close_paren + 2];
}

TEST(Posix, EintrIsRetried) {
  // A handler without SA_RESTART: a blocked read(2) fails with EINTR.
  struct sigaction sa {}, old {};
  sa.sa_handler = count_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &old), 0);
  g_signals = 0;

  Pipe p;
  std::atomic<pid_t> reader_tid{0};
  std::atomic<bool> reader_done{false};
  std::size_t n = 0;
  std::string failure;
  std::byte buf[3];
  std::thread reader([&] {
    reader_tid = ::gettid();
    IoCounters c;
    try {
      n = sys::read_full(p.rd, buf, "pipe", c);
    } catch (const Error& e) {
      failure = e.what();
    }
    reader_done = true;
  });
  while (reader_tid.load() == 0) std::this_thread::yield();
  // Interrupt the reader three times while it is blocked in read(2).
  // If EINTR escaped, the reader has ended: stop interrupting it.
  for (int i = 0; i < 3 && !reader_done; ++i) {
    while (!reader_done && thread_state(reader_tid) != 'S') std::this_thread::yield();
    if (reader_done) break;
    int before = g_signals;
    ::pthread_kill(reader.native_handle(), SIGUSR1);
    while (g_signals == before) std::this_thread::yield();
  }
  std::byte data[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  EXPECT_EQ(::write(p.wr, data, 3), 3);
  reader.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(failure, "") << "EINTR escaped instead of being retried";
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(g_signals.load(), 3);
}

TEST(Posix, FailingWriteIsReportedNotLooped) {
  // /dev/full fails every write with ENOSPC: write_full must throw, not spin.
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "/dev/full is not available";
  std::byte b[10] = {};
  IoCounters c;
  try {
    sys::write_full(fd, b, "/dev/full", c);
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_number(), ENOSPC) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("write /dev/full: ", 0), 0u) << e.what();
  }
  ::close(fd);
}

}  // namespace
}  // namespace iolab::io
