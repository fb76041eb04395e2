// Internal: the converter of strace's output (strace.cpp runs it twice).
// One Converter follows the program through one pass: the processes' and
// threads' descriptor tables, the open file descriptions they share, the
// mappings, and what each path is; the operations those imply go to `emit`.
// Its bookkeeping is in strace_state.cpp, what each system call does to it in
// strace_calls.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iolab/trace/import.h"
#include "strace_line.h"

namespace iolab::trace::strace {

// What the first pass learns of a path, kept for the second.
struct PathInfo {
  std::string path;
  bool excluded = false;       // not a regular file, or a system file left out
  bool modified = false;       // the program has changed it (first pass: evidence stops)
  std::optional<std::uint64_t> evidence;  // its size before any change, as strace showed it
  std::uint64_t read_end = 0;  // the furthest byte read before any change
  std::uint64_t ops = 0;       // operations the first pass counted
  std::uint64_t io = 0;        // of them, neither an open nor a close
  bool opened = false;         // opened during the trace (not only inherited)
  std::optional<std::uint32_t> open_flags;  // of its first Open
};

struct Description {  // an open file description: what a descriptor refers to
  std::size_t path = 0;
  std::uint64_t position = 0;
  bool append = false, direct = false;
};
using DescriptionPtr = std::shared_ptr<Description>;
using FdTable = std::map<std::int64_t, DescriptionPtr>;

struct Mapping {
  std::size_t path = 0;
  std::uint64_t offset = 0, length = 0;
};

class Converter {
 public:
  Converter(const StraceSettings& settings, std::vector<PathInfo>& paths, bool second)
      : settings_(settings), paths_(paths), second_(second) {}

  // Called per operation: second pass only.
  std::function<void(const Op&)> emit;
  std::vector<std::uint64_t> sizes;  // second pass: each path's size as the trace goes (its initial size first)
  std::unordered_map<std::string, std::size_t> index;  // path -> index in paths_

  std::uint64_t lines = 0, ignored = 0;
  std::size_t threads() const { return threads_.size(); }

  void line(std::string_view text);

  // The end of the output: every file still open is closed and every mapping unmapped.
  void finish();

 private:
  const StraceSettings& settings_;
  std::vector<PathInfo>& paths_;
  bool second_;
  std::map<std::uint64_t, std::shared_ptr<FdTable>> tables_;  // per pid (threads share theirs)
  std::unordered_map<std::uint64_t, std::pair<std::string, std::uint64_t>> pending_;  // pid -> unfinished call, its time
  std::map<std::uint64_t, Mapping> mappings_;  // by address
  std::vector<std::uint32_t> descriptors_;     // per path: descriptors open (Open at 0 -> 1, Close at 1 -> 0)
  std::unordered_map<std::uint64_t, std::uint32_t> threads_;  // pid -> thread number
  std::optional<std::uint64_t> t0_;
  std::uint64_t last_time_ = 0, last_pid_ = 0, last_ns_ = 0;

  std::size_t path_index(const std::string& raw);

  FdTable& table(std::uint64_t pid);

  void op(std::uint64_t pid, std::uint64_t time, std::size_t path, OpKind kind, std::uint64_t offset,
          std::uint64_t length, std::uint32_t flags);

  void modified(std::size_t path) { paths_[path].modified = true; }

  void grow(std::size_t path, std::uint64_t end);

  // A descriptor starts referring to a description: the file's first one opens it.
  void attach(std::uint64_t pid, std::uint64_t time, std::int64_t fd, DescriptionPtr d, std::uint32_t open_flags);

  // A descriptor goes (close, or replaced by dup2): the file's last one closes it.
  void release(std::uint64_t pid, std::uint64_t time, std::int64_t fd);

  void exited(std::uint64_t pid, std::uint64_t time);

  // The description a descriptor argument refers to, for the path strace
  // showed: the process's own, another's of the same path (a thread whose
  // clone was not seen, an inherited descriptor), or a new one at offset 0
  // (a descriptor opened before the trace began: stdin from a file).
  Description* resolve(std::uint64_t pid, std::uint64_t time, std::string_view arg);

  void evidence(std::size_t path, std::uint64_t size);

  // What one call did (strace_calls.cpp).
  void call(std::uint64_t pid, std::uint64_t time, std::string_view text);

  void ignore() { ++ignored; }

  // `bytes` moved by a read or a write through `d`: at `at` (a positional
  // call) or the description's position, which it then advances; a write
  // through O_APPEND at the file's end, whatever the call named (pwrite
  // too, on Linux). A read of fewer bytes than `asked` is short: it met the
  // end of the file.
  void transfer(std::uint64_t pid, std::uint64_t time, Description& d, bool read, std::optional<std::uint64_t> at,
                std::uint64_t bytes, std::optional<std::int64_t> asked, std::uint32_t flags);

  // sendfile(out, in, offset, count) and copy_file_range(in, off_in, out,
  // off_out, count, flags): a read of one file and a write of the other.
  void copy(std::uint64_t pid, std::uint64_t time, const Call& c);
};

}  // namespace iolab::trace::strace
