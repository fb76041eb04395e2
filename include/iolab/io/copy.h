// File-to-file copy methods: a read/write loop, and the kernel's zero-copy paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "iolab/io/buffer.h"
#include "iolab/io/file.h"

namespace iolab::io {

struct CopyOptions {
  std::size_t buffer_size = std::size_t{1} << 20;  // read/write loop, splice chunk, mmap+write chunk
  BufferKind buffer = BufferKind::Aligned;          // read/write loop
  bool flush = false;                               // fdatasync the destination before closing it
};

struct CopyStats {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;  // system calls that moved data or synced
};

// What a copy method is (code outside io/ decides by these, not by names).
struct CopyTraits {
  bool user_space_buffer = false;  // data passes through a buffer of ours (CopyOptions::buffer)
  // Most bytes one call moves: 0 = CopyOptions::buffer_size.
  std::uint64_t max_call_bytes = 0;
};

// Both ends of a copy, opened before the copy is timed: `from` for
// reading, the existing `to` (created by scratch) for writing, truncated;
// and the user-space buffer, allocated once and kept for every copy the
// ends are opened for (a program copying many files reuses its buffer, and
// a 16 MiB buffer faulted in again before each pass cost more than the copy).
// Refuses a source and destination that are the same file. Closes quietly
// when not finished.
class CopyEnds {
 public:
  // Allocates the buffer (options.buffer_size of options.buffer); open() opens the ends.
  explicit CopyEnds(const CopyOptions& options);
  CopyEnds(const std::filesystem::path& from, const std::filesystem::path& to, const CopyOptions& options);
  ~CopyEnds();
  // Opens both ends for the next copy (closing any left open).
  void open(const std::filesystem::path& from, const std::filesystem::path& to);
  // Closes both ends quietly (a copy that did not finish).
  void close() noexcept;
  CopyEnds(const CopyEnds&) = delete;
  CopyEnds& operator=(const CopyEnds&) = delete;

  int from_fd() const noexcept { return from_fd_; }
  int to_fd() const noexcept { return to_fd_; }
  std::uint64_t size() const noexcept { return size_; }
  const std::filesystem::path& from() const noexcept { return from_; }
  const std::filesystem::path& to() const noexcept { return to_; }
  Buffer& buffer() noexcept { return buffer_; }
  // The end of a copy (inside its timed region): fdatasync `to` when asked,
  // close it reporting errors, and check it holds size() bytes.
  void finish(bool flush, CopyStats& stats);

 private:
  std::filesystem::path from_, to_;
  int from_fd_ = -1, to_fd_ = -1;
  std::uint64_t size_ = 0;
  Buffer buffer_;
};

class CopyMethod {
 public:
  virtual ~CopyMethod() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual CopyTraits traits() const = 0;
  virtual Availability probe(const std::filesystem::path& dir) const = 0;
  // Copies all of ends.from into ends.to, then ends.finish(options.flush).
  // `to` ends byte-identical to `from`.
  virtual CopyStats copy(CopyEnds& ends, const CopyOptions& options = {}) const = 0;
  // Opens both ends and copies (for callers that time nothing).
  CopyStats copy(const std::filesystem::path& from, const std::filesystem::path& to,
                 const CopyOptions& options = {}) const;
};

}  // namespace iolab::io
