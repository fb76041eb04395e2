// A tailing consumer: follows a commit log as it grows and reads each message
// once the log makes it visible, through a chosen read path, checking every
// frame. It reads the files, not the writer's memory, as a consumer process would.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog {

class TailingConsumer {
 public:
  // Starts at the beginning of every log of `log`. REQUIRES: `log` outlives it.
  TailingConsumer(CommitLog& log, ReadPath path);
  ~TailingConsumer();
  TailingConsumer(const TailingConsumer&) = delete;
  TailingConsumer& operator=(const TailingConsumer&) = delete;

  using Visit = std::function<void(std::uint32_t log, const Frame& frame)>;
  // Reads every message visible now, in order per log. Returns how many.
  // Throws Error naming the segment and offset when a visible frame fails its check.
  std::uint64_t poll(const Visit& visit);
  // Waits (up to `timeout`) until some log shows a message not read yet, then polls.
  std::uint64_t poll_wait(std::chrono::nanoseconds timeout, const Visit& visit);
  // Messages read so far, and system calls made to read them.
  std::uint64_t consumed() const noexcept { return consumed_; }
  std::uint64_t calls() const noexcept;

 private:
  struct Cursor;
  CommitLog& log_;
  ReadPath path_;
  std::vector<std::unique_ptr<Cursor>> cursors_;
  std::uint64_t consumed_ = 0;
  std::uint32_t next_wait_ = 0;
};

}  // namespace iolab::commitlog
