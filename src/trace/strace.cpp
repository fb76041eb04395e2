// strace's output as a trace (import.h, docs/trace-format.md "From strace").
//
// Two passes over the same text. The first learns the files: which paths
// are regular files (a descriptor's fstat says S_IFREG, or nothing says
// otherwise), the evidence of each one's size before the program changed
// it, and how many operations each gets. The header is written from that;
// the second pass replays the same state machine and writes the operations.
// Only the per-path tables grow with the input: memory is bounded by the
// number of files, descriptors and mappings alive, not by the trace's length.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/import.h"
#include "strace_converter.h"

namespace iolab::trace {

namespace {

using strace::Converter;
using strace::PathInfo;

constexpr std::string_view kSyscalls =
    "read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,lseek,fsync,fdatasync,"
    "sync_file_range,msync,ftruncate,fallocate,open,openat,creat,close,dup,dup2,dup3,fcntl,mmap,munmap,"
    "sendfile,copy_file_range,fstat,newfstatat,statx,clone,clone3,fork,vfork";

// Each line of `in`, from its start, to `f` (a line longer than kMaxLineBytes
// x 16 is cut: strace's lines at -s 0 are short).
template <typename F>
void each_line(std::istream& in, F&& f) {
  in.clear();
  in.seekg(0);
  if (!in) throw Error("read", "strace output", "it cannot be read from its start again");
  std::string line;
  while (std::getline(in, line)) f(std::string_view(line));
  if (in.bad()) throw Error("read", "strace output", "the stream failed");
}

}  // namespace

std::string_view strace_syscalls() { return kSyscalls; }

ImportSummary strace_to_trace(std::istream& in, const std::string& command, const StraceSettings& settings,
                              std::ostream& out) {
  std::vector<PathInfo> paths;
  std::unordered_map<std::string, std::size_t> index;
  {
    Converter first(settings, paths, false);
    each_line(in, [&](std::string_view l) { first.line(l); });
    first.finish();
    index = std::move(first.index);
  }
  // The files: paths with operations that are regular files, numbered in
  // the order the program first used them.
  Header header;
  header.source = "strace";
  header.command = command;
  std::vector<std::uint32_t> id(paths.size(), UINT32_MAX);
  std::vector<std::uint64_t> initial(paths.size(), 0);
  std::uint64_t ops = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const PathInfo& p = paths[i];
    // A descriptor the program inherited and only moved (a shell's dup2 of
    // its stdout) is no file it used: left out with what it did not do.
    if (p.excluded || p.ops == 0 || (!p.opened && p.io == 0) ||
        (settings.directory_now && settings.directory_now(p.path))) {
      paths[i].excluded = true;  // the second pass writes nothing of it
      continue;
    }
    if (header.files.size() >= kMaxFiles)
      throw Error("convert", "strace output", "the program used more than " + std::to_string(kMaxFiles) +
                                                  " files; a trace holds at most that many");
    // The initial size (docs/trace-format.md): what strace showed before any
    // change; else, for a file the program never changed, its size now; else
    // the furthest byte read before the first change (a lower bound).
    std::uint64_t size = p.read_end;
    if (p.evidence) size = *p.evidence;
    else if (!p.modified && settings.size_now)
      if (auto now = settings.size_now(p.path)) size = std::max(size, *now);
    initial[i] = std::min<std::uint64_t>(size, kMaxEnd - 1);
    id[i] = static_cast<std::uint32_t>(header.files.size());
    header.files.push_back(FileInfo{id[i], initial[i], p.open_flags.value_or(0)});
    ops += p.ops;
  }
  header.op_count = ops;
  Writer writer(out, header);
  Converter second(settings, paths, true);
  second.index = std::move(index);
  second.sizes = initial;
  second.emit = [&](const Op& o) {
    Op renumbered = o;
    renumbered.file = id[o.file];
    writer.write(renumbered);
  };
  each_line(in, [&](std::string_view l) { second.line(l); });
  second.finish();
  if (writer.written() != ops)
    throw Error("convert", "strace output", "the second pass wrote " + std::to_string(writer.written()) +
                                                " operations, the first counted " + std::to_string(ops));
  ImportSummary s;
  s.ops = ops;
  s.files = header.files.size();
  s.threads = second.threads();
  s.lines = second.lines;
  s.ignored = second.ignored;
  return s;
}

}  // namespace iolab::trace
