// Reading a commit log: the validator every open runs, and the catch-up
// readers a benchmark times.
//
// A log is a directory of segment files (format.h). Reading starts at the
// first segment and checks every frame: its length, its CRC32C, and that its
// sequence number is one more than the last (a log starts at 1). It stops at
// the first frame that fails and reports where and why; it never returns a
// message after that point, even when valid messages follow (docs/commitlog.md:
// they are reported, and recovery drops them unless told to refuse).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/commitlog/format.h"

namespace iolab::commitlog {

// How a reader moves bytes out of a segment file.
enum class ReadPath {
  Pread,     // pread(2) into a buffer (Kafka's FileChannel reads)
  Mmap,      // frames read in place through a read-only mapping (RocketMQ, QMQ)
  Read,      // lseek + read(2) (ActiveMQ's RandomAccessFile)
  Sendfile,  // sendfile(2) to a socket pair, received on the other end (Kafka's transferTo to consumers)
};
inline constexpr ReadPath kAllReadPaths[] = {ReadPath::Pread, ReadPath::Mmap, ReadPath::Read, ReadPath::Sendfile};
std::string_view to_string(ReadPath p) noexcept;
// Throws UsageError naming the text for an unknown path.
ReadPath parse_read_path(std::string_view name);

// Where a frame is.
struct FrameLocation {
  std::filesystem::path segment;
  std::uint64_t offset = 0;    // in the segment file
  std::uint64_t sequence = 0;  // of the frame found there (0 when none)
};

// The first place a log stops being valid before its end.
struct Damage {
  FrameLocation at;                      // where the bad frame (or missing segment start) is
  FrameCheck check = FrameCheck::Valid;  // what is wrong with it
  std::uint64_t expected_sequence = 0;
  // The next valid frame after it with a higher sequence number, if any:
  // none means a torn tail (what a crash mid-append leaves), one means data
  // was lost or corrupted before the end of the log.
  std::optional<FrameLocation> next_valid;

  bool torn_tail() const noexcept { return !next_valid.has_value(); }
  // "segment <path> offset N: CRC32C mismatch (sequence 7 expected); valid messages follow from ..."
  std::string describe() const;
};

struct SegmentScan {
  std::filesystem::path path;
  std::uint64_t base = 0;       // log position of its first byte (from its name)
  std::uint64_t file_size = 0;
  std::uint64_t valid_end = 0;  // offset just past its last valid frame
  std::uint64_t messages = 0;
};

// A message as a reader hands it out: valid only during the callback.
struct MessageView {
  std::uint64_t sequence = 0;
  std::span<const std::byte> body;
  std::size_t segment = 0;  // index into LogScan::segments
  std::uint64_t offset = 0; // of its frame in the segment file
};

struct LogScan {
  std::vector<SegmentScan> segments;  // every segment file, in log order
  std::uint64_t messages = 0, body_bytes = 0;
  std::uint64_t last_sequence = 0;    // 0 for an empty log
  // The end of the valid log: the segment (index) and offset after its last
  // valid frame. Everything from there on is what recovery cuts.
  std::size_t end_segment = 0;
  std::uint64_t end_offset = 0;
  std::optional<Damage> damage;
};

// Reads and checks a whole log directory; `visit` sees every valid message in
// order. Never throws for bad frames (they end up in `damage`); throws Error
// for a directory or file that cannot be read, or a name in `dir` that is not
// a segment file (a directory that is not a log).
LogScan scan_log(const std::filesystem::path& dir, const std::function<void(const MessageView&)>& visit = {});

// What a read of whole logs moved.
struct LogsRead {
  std::uint64_t messages = 0, bytes = 0;  // frames and their bytes
  std::uint64_t calls = 0;                // system calls that moved data
};
// Reads every log in `log_dirs` start to end through `path`, every frame
// checked, with no clock: the harness's engine times it (the suites'
// catch-up workload). Throws Error when a frame fails its check, naming the
// segment and offset (catch-up reads only complete, synced logs).
LogsRead read_logs(std::span<const std::filesystem::path> log_dirs, ReadPath path);
// The segment files of the logs in `log_dirs`, in log order.
std::vector<std::filesystem::path> segment_files(std::span<const std::filesystem::path> log_dirs);

// A read of whole logs through one read path, every frame checked, timed by
// its own clock (bench/commitlog_bench.cpp and tests; the suite times
// read_logs through the engine instead).
struct CatchUpResult {
  ReadPath path = ReadPath::Pread;
  bool cold = false;
  std::uint64_t messages = 0, bytes = 0;  // frames and their bytes
  double seconds = 0;
  std::uint64_t calls = 0;                 // system calls that moved data
  double resident_before = 0;              // fraction of the files' pages in the page cache just before
};

// Reads every log in `log_dirs` start to end through `path`. cold: each
// segment is synced and evicted (posix_fadvise DONTNEED) first; warm: read
// once, untimed, first. Throws Error when a frame fails its check, naming the
// segment and offset (catch-up reads only complete, synced logs).
CatchUpResult catch_up(std::span<const std::filesystem::path> log_dirs, ReadPath path, bool cold);

}  // namespace iolab::commitlog
