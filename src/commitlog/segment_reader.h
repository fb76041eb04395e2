// Internal: reading frames out of segment files, through any read path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "files.h"
#include "iolab/commitlog/reader.h"

namespace iolab::commitlog::detail {

// One segment file opened for reading through one read path.
class SegmentSource {
 public:
  virtual ~SegmentSource() = default;
  // Reads up to dst.size() bytes at `offset`; fewer only at end of file.
  virtual std::size_t read(std::uint64_t offset, std::span<std::byte> dst) = 0;
  // The whole mapping for ReadPath::Mmap (frames are read in place), else empty.
  virtual std::span<const std::byte> mapped() const noexcept { return {}; }
  virtual std::uint64_t calls() const noexcept = 0;
  LogFile& file() noexcept { return *file_; }

 protected:
  explicit SegmentSource(std::unique_ptr<LogFile> file) : file_(std::move(file)) {}
  std::unique_ptr<LogFile> file_;
};

// Opens `path` for reading through `read_path`. `map_size`: how much of the
// file to map for ReadPath::Mmap (0: the file's size now; a tailing reader
// maps the segment's capacity and reads only what is visible).
std::unique_ptr<SegmentSource> open_source(LogFs& fs, const std::filesystem::path& path, ReadPath read_path,
                                           std::uint64_t map_size = 0);

// Frames of one segment, from an offset up to a limit (the file's size, or
// what a writer has made visible), each checked.
class FrameStream {
 public:
  FrameStream(SegmentSource& source, std::uint64_t offset, std::uint64_t limit);

  // Checks the frame at offset(); Valid fills `frame` (valid until the next
  // call) and moves past it. `expected_sequence` 0 accepts any.
  FrameCheck next(std::uint64_t expected_sequence, Frame& frame);
  std::uint64_t offset() const noexcept { return offset_; }
  void set_limit(std::uint64_t limit) noexcept { limit_ = limit; }

 private:
  // Makes [at, at + n) readable in the buffer; returns how much of it is.
  std::span<const std::byte> window(std::uint64_t at, std::uint64_t n);

  SegmentSource& source_;
  std::uint64_t offset_, limit_;
  std::vector<std::byte> buffer_;
  std::uint64_t buffer_offset_ = 0, buffer_length_ = 0;
};

struct SegmentName {
  std::filesystem::path path;
  std::uint64_t base = 0;
};
// The segment files of a log directory in order. Index files (".index") are
// skipped; any other name is refused with an Error naming it.
std::vector<SegmentName> list_segments(LogFs& fs, const std::filesystem::path& dir);

// scan_log through `fs`.
LogScan scan_log(LogFs& fs, const std::filesystem::path& dir, const std::function<void(const MessageView&)>& visit);

}  // namespace iolab::commitlog::detail
