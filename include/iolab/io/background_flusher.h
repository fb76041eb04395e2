// A thread that flushes a file while another thread writes it: whenever at
// least `interval` bytes have been written since its last flush, it flushes
// what is dirty; requests that arrive while a flush runs are served by the
// next one (coalescing, like RocketMQ's flush thread or Java's asynchronous
// force). A File is not thread-safe, so the flusher owns a second descriptor
// (and, for msync, its own mapping of the dirty range). Its calls go through
// the syscall helper, so the fault injector reaches them as it reaches the
// writer's.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/io/file.h"
#include "iolab/io/syscall.h"

namespace iolab::io {

class BackgroundFlusher {
 public:
  // `how`: Fdatasync, Fsync, SyncFileRange (the range written since the last
  // flush) or MsyncSync (that range, mapped).
  BackgroundFlusher(const std::filesystem::path& file, Durability how, std::uint64_t interval);
  ~BackgroundFlusher();
  BackgroundFlusher(const BackgroundFlusher&) = delete;
  BackgroundFlusher& operator=(const BackgroundFlusher&) = delete;

  // The writer, after each write: `total` bytes written so far. Cheap when
  // no flush is due (one relaxed store and a compare).
  void wrote(std::uint64_t total);
  // Waits for the flush of everything written, then stops; rethrows the
  // first flush error.
  void finish();
  std::uint64_t flushes() const { return flushes_; }
  std::uint64_t flushed_bytes() const { return flushed_; }

 private:
  void stop();
  void loop();
  void flush(std::uint64_t upto);

  std::filesystem::path path_;
  Durability how_;
  std::uint64_t interval_;
  std::uint64_t next_ = 0;  // the writer's: the total at which to wake the flusher next
  sys::Fd fd_;
  std::atomic<int> wake_{0};  // int: the futex-native width for atomic wait
  std::atomic<bool> done_{false};
  std::atomic<std::uint64_t> written_{0};
  std::uint64_t flushes_ = 0, flushed_ = 0;  // the flusher's; read after join
  std::optional<Error> error_;               // read after join
  IoCounters counters_;                      // the flusher's calls
  std::thread thread_;
};

}  // namespace iolab::io
