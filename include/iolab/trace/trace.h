// A program's file I/O as iolab records and replays it (issue 41): the trace
// format's model, and the streaming reader and writer of its text form
// (docs/trace-format.md). No data is recorded, only what moved where and when;
// paths become file ids. `iolab trace` writes it from strace's output or a fio
// iolog, `iolab replay` and `recommend --trace` read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace iolab::trace {

inline constexpr int kFormatVersion = 1;

// What one line of a trace does. lseek is not an operation of its own: the
// recorder resolves each read and write to the offset it reached, so every
// operation names its offset and any method can replay it.
enum class OpKind {
  Open,           // the file is opened (offset, length 0); flags: kCreate, kTruncate, kAppend, kDirect
  Close,          // the program closed its last descriptor of the file
  Read,           // read, pread64, readv, preadv, preadv2 (flags say which form)
  Write,          // write, pwrite64, writev, pwritev, pwritev2
  Fsync,          // fsync(2): data and metadata durable
  Fdatasync,      // fdatasync(2): data durable
  SyncFileRange,  // sync_file_range(2) over [offset, offset+length): a writeback hint, not durable
  Msync,          // msync(MS_SYNC) of [offset, offset+length) of a mapping of the file: data durable
  Truncate,       // ftruncate(2) to `offset`
  Allocate,       // fallocate(2) of [offset, offset+length)
  Map,            // mmap(2) of [offset, offset+length) of the file (flags: kMapWrite when PROT_WRITE and MAP_SHARED)
  Unmap,          // munmap(2) of a mapping made by Map (offset, length as mapped)
};
// "open", "close", "read", "write", "fsync", "fdatasync", "sync_file_range",
// "msync", "truncate", "allocate", "map", "unmap".
std::string_view to_string(OpKind kind);
// The reverse; nullopt for an unknown word (the reader names it and the line).
std::optional<OpKind> parse_op_kind(std::string_view word);

// Flags of an operation: how the program asked for it, so a replay can say
// what it changed (a vectored write replayed as one pwrite) and a method that
// cannot honour one (O_DIRECT) is skipped with the reason.
enum OpFlag : std::uint32_t {
  kPositional = 1u << 0,  // pread/pwrite family: the call named its offset
  kVectored = 1u << 1,    // readv/writev family
  kAppend = 1u << 2,      // Open: O_APPEND; Write: made through an O_APPEND descriptor
  kCreate = 1u << 3,      // Open: O_CREAT
  kTruncate = 1u << 4,    // Open: O_TRUNC
  kDirect = 1u << 5,      // Open: O_DIRECT; Read/Write: through an O_DIRECT descriptor
  kMapWrite = 1u << 6,    // Map: a writable shared mapping
  kShort = 1u << 7,       // Read: the call returned fewer bytes than asked (end of file); length is what it returned
};
// The flags as the format writes them: words joined by '|' ("pos|vec"), "-" for none.
std::string flags_to_string(std::uint32_t flags);

struct Op {
  std::uint64_t time_ns = 0;  // since the trace's first operation
  std::uint32_t thread = 0;   // the program's thread (or process) as the trace numbers them, from 0
  std::uint32_t file = 0;     // the file id, from the header
  OpKind kind = OpKind::Read;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint32_t flags = 0;
  bool operator==(const Op&) const = default;
};

struct FileInfo {
  std::uint32_t id = 0;
  // Its size when the program first opened it (0 for a file it created);
  // the replay rebuilds it at this size before the first operation.
  std::uint64_t initial_size = 0;
  std::uint32_t open_flags = 0;  // the OpFlag bits of its first Open
};

struct Header {
  int version = kFormatVersion;
  std::string source;   // "strace", "fio-iolog-v2", "fio-iolog-v3", "iolab"
  std::string command;  // the traced command line as the user gave it (informational)
  std::vector<FileInfo> files;
  std::optional<std::uint64_t> op_count;  // when the writer knew it
};

// Limits the reader holds every trace to, so a hostile one cannot take the
// machine: a trace names at most kMaxFiles files, a line is at most
// kMaxLineBytes, an operation ends below 2^62 (offset + length).
inline constexpr std::size_t kMaxFiles = 65536;
inline constexpr std::size_t kMaxLineBytes = 4096;
inline constexpr std::uint64_t kMaxEnd = std::uint64_t{1} << 62;

// Reads a trace one operation at a time (bounded memory whatever its length).
// Malformed input throws UsageError naming the trace, the line number and
// what is wrong ("trace t.iotrace line 12: file 7 was never declared").
class Reader {
 public:
  // `name` is what errors call the trace (its path as the user gave it).
  Reader(std::istream& in, std::string name);
  ~Reader();
  const Header& header() const;
  // The next operation, or false at the end. Checks each one: a declared
  // file, offset + length below kMaxEnd, times that never go backwards.
  bool next(Op& op);
  std::uint64_t line() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes a trace: the header first, then operations in time order.
class Writer {
 public:
  Writer(std::ostream& out, const Header& header);
  void write(const Op& op);
  std::uint64_t written() const { return written_; }

 private:
  std::ostream& out_;
  std::uint64_t written_ = 0;
};

}  // namespace iolab::trace
