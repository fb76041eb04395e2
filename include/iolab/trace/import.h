// Traces made from what other tools print (issue 41, docs/trace-format.md):
// strace's output of a recorded program, and fio's iologs (v2 and v3).
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "iolab/trace/trace.h"

namespace iolab::trace {

// The system calls `iolab trace` asks strace for (-e trace=...): the file
// I/O of trace.h's operations (sendfile and copy_file_range as a read and a
// write), what follows a descriptor (open, dup, fcntl, close), what tells a
// file's size (fstat and its kin, on a descriptor) and what tells a thread
// from a process (clone, fork).
std::string_view strace_syscalls();

// strace's options besides -e trace and -o: every child followed (-f), an
// absolute time to the microsecond (-ttt), each descriptor's path (-y), no
// data (-s 0), no attach messages (-q), no signals.
inline constexpr std::string_view kStraceOptions[] = {"-f", "-ttt", "-y", "-s", "0", "-q", "-e", "signal=none"};

struct StraceSettings {
  // Also the files of the system (under /usr, /lib, /lib64, /etc, /bin,
  // /sbin: the loader's libraries, locales), which every program reads at
  // start; by default they are left out.
  bool all_files = false;
  // The size a path's file has now (after the program ended), for the
  // initial size of a file the program never changed and whose size strace
  // did not show; nullopt when unknown. Not called when unset.
  std::function<std::optional<std::uint64_t>(const std::string& path)> size_now;
  // Whether a path is a directory now: a program that opened a directory
  // without O_DIRECTORY and never fstat-ed it (SQLite opens its database's
  // directory to fsync it) shows strace nothing else. Not called when unset.
  std::function<bool(const std::string& path)> directory_now;
};

struct ImportSummary {
  std::uint64_t ops = 0;
  std::size_t files = 0, threads = 0;
  std::uint64_t lines = 0;    // of the input
  std::uint64_t ignored = 0;  // lines that were not a traced call strace completed (failed calls, other files, noise)
};

// strace's output (with kStraceOptions, any -e trace) as a trace on `out`.
// `in` is read twice (the file table is the header, written first), so it
// must be seekable (a file or a string stream). What strace printed cannot
// be bad input: a line that is not one of the calls understood, or names a
// descriptor that is no regular file, is ignored and counted. Throws Error
// when the program used more than kMaxFiles files, or `in` cannot be read.
ImportSummary strace_to_trace(std::istream& in, const std::string& command, const StraceSettings& settings,
                              std::ostream& out);

// fio's iolog (write_iolog=, read_iolog=), version 2 or 3, as a trace on
// `out`: one thread; a file per file name; "add" declares, "open" and
// "close" are operations, "read", "write", "sync", "datasync", "trim" act
// on the file named (a trim is not a trace operation: ignored and counted);
// v3's times (ms) become time_ns. Read twice, as above. Malformed input:
// UsageError naming the log (`name`), the line and the cause.
ImportSummary fio_iolog_to_trace(std::istream& in, const std::string& name, std::ostream& out);

}  // namespace iolab::trace
