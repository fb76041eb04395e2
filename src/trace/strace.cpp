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
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/import.h"
#include "strace_line.h"

namespace iolab::trace {

namespace {

using strace::Call;

constexpr std::string_view kSyscalls =
    "read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,lseek,fsync,fdatasync,"
    "sync_file_range,msync,ftruncate,fallocate,open,openat,creat,close,dup,dup2,dup3,fcntl,mmap,munmap,"
    "sendfile,copy_file_range,fstat,newfstatat,statx,clone,clone3,fork,vfork";

// Paths that are no file a program stores data in, and (unless asked) the
// system's files every program reads at start.
bool special_path(std::string_view p) {
  if (p.empty() || p.front() != '/') return true;  // pipe:[...], socket:[...], anon_inode:...
  for (std::string_view prefix : {"/proc", "/sys", "/dev"})
    if (p.starts_with(prefix) && (p.size() == prefix.size() || p[prefix.size()] == '/')) return true;
  return false;
}
bool system_path(std::string_view p) {
  for (std::string_view prefix : {"/usr/", "/lib/", "/lib32/", "/lib64/", "/etc/", "/bin/", "/sbin/"})
    if (p.starts_with(prefix)) return true;
  return false;
}

std::string without_deleted(std::string path) {
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.ends_with(kDeleted)) path.resize(path.size() - kDeleted.size());
  return path;
}

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

  void line(std::string_view text) {
    ++lines;
    const strace::Line l = strace::split_line(text);
    switch (l.kind) {
      case strace::LineKind::Call: call(l.pid, l.time_ns, l.text); return;
      case strace::LineKind::Unfinished:
        pending_[l.pid] = {std::string(l.text), l.time_ns};
        return;
      case strace::LineKind::Resumed: {
        auto it = pending_.find(l.pid);
        if (it == pending_.end()) break;
        std::string whole = it->second.first;
        if (!whole.ends_with(' ') && !whole.ends_with('(') && !l.text.starts_with(')') && !l.text.starts_with(','))
          whole += ' ';
        whole += l.text;
        const std::uint64_t t = it->second.second;
        pending_.erase(it);
        call(l.pid, t, whole);
        return;
      }
      case strace::LineKind::Exited:
        exited(l.pid, l.time_ns);
        ++ignored;
        return;
      case strace::LineKind::Other: break;
    }
    ++ignored;
  }

  // The end of the output: every file still open is closed and every mapping unmapped.
  void finish() {
    std::vector<std::uint64_t> pids;
    for (const auto& [pid, table] : tables_) pids.push_back(pid);
    for (auto pid : pids) exited(pid, last_time_);
    for (const auto& [address, m] : mappings_) op(last_pid_, last_time_, m.path, OpKind::Unmap, m.offset, m.length, 0);
    mappings_.clear();
  }

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

  std::size_t path_index(const std::string& raw) {
    const std::string path = without_deleted(raw);
    auto [it, added] = index.emplace(path, paths_.size());
    if (added) {
      if (second_) throw Error("convert", "strace output", "the second pass met a path the first did not");
      if (paths_.size() >= kMaxFiles * 4)
        throw Error("convert", "strace output", "the program used more than " + std::to_string(kMaxFiles * 4) +
                                                    " paths; a trace holds at most " + std::to_string(kMaxFiles) + " files");
      PathInfo info;
      info.path = path;
      info.excluded = special_path(path) || (!settings_.all_files && system_path(path));
      paths_.push_back(std::move(info));
    }
    if (descriptors_.size() < paths_.size()) descriptors_.resize(paths_.size(), 0);
    if (second_ && sizes.size() < paths_.size()) sizes.resize(paths_.size(), 0);
    return it->second;
  }

  FdTable& table(std::uint64_t pid) {
    auto& t = tables_[pid];
    if (!t) t = std::make_shared<FdTable>();
    return *t;
  }

  void op(std::uint64_t pid, std::uint64_t time, std::size_t path, OpKind kind, std::uint64_t offset,
          std::uint64_t length, std::uint32_t flags) {
    PathInfo& info = paths_[path];
    if (kind == OpKind::Open && !info.open_flags) info.open_flags = flags;
    if (offset >= kMaxEnd || length >= kMaxEnd - offset) {
      ++ignored;
      return;
    }
    ++info.ops;
    if (kind != OpKind::Open && kind != OpKind::Close) ++info.io;
    last_time_ = std::max(last_time_, time);
    last_pid_ = pid;
    if (!second_ || info.excluded || !emit) return;
    if (!t0_) t0_ = time;
    Op o;
    // A call's time is when it started; one that finished after a later
    // call is kept in order by never going back.
    o.time_ns = std::max(last_ns_, time >= *t0_ ? time - *t0_ : 0);
    last_ns_ = o.time_ns;
    auto [it, added] = threads_.emplace(pid, static_cast<std::uint32_t>(threads_.size()));
    o.thread = it->second;
    o.file = static_cast<std::uint32_t>(path);  // renumbered by the caller
    o.kind = kind;
    o.offset = offset;
    o.length = length;
    o.flags = flags;
    emit(o);
  }

  void modified(std::size_t path) { paths_[path].modified = true; }

  void grow(std::size_t path, std::uint64_t end) {
    if (second_) sizes[path] = std::max(sizes[path], end);
  }

  // A descriptor starts referring to a description: the file's first one opens it.
  void attach(std::uint64_t pid, std::uint64_t time, std::int64_t fd, DescriptionPtr d, std::uint32_t open_flags) {
    release(pid, time, fd);
    if (descriptors_[d->path]++ == 0) op(pid, time, d->path, OpKind::Open, 0, 0, open_flags);
    table(pid)[fd] = std::move(d);
  }

  // A descriptor goes (close, or replaced by dup2): the file's last one closes it.
  void release(std::uint64_t pid, std::uint64_t time, std::int64_t fd) {
    FdTable& t = table(pid);
    auto it = t.find(fd);
    if (it == t.end()) return;
    const std::size_t path = it->second->path;
    t.erase(it);
    if (descriptors_[path] > 0 && --descriptors_[path] == 0) op(pid, time, path, OpKind::Close, 0, 0, 0);
  }

  void exited(std::uint64_t pid, std::uint64_t time) {
    auto it = tables_.find(pid);
    if (it == tables_.end()) return;
    std::shared_ptr<FdTable> t = std::move(it->second);
    tables_.erase(it);
    if (t.use_count() > 1) return;  // a thread: its process's table lives on
    for (const auto& [fd, d] : *t)
      if (descriptors_[d->path] > 0 && --descriptors_[d->path] == 0) op(pid, time, d->path, OpKind::Close, 0, 0, 0);
  }

  // The description a descriptor argument refers to, for the path strace
  // showed: the process's own, another's of the same path (a thread whose
  // clone was not seen, an inherited descriptor), or a new one at offset 0
  // (a descriptor opened before the trace began: stdin from a file).
  Description* resolve(std::uint64_t pid, std::uint64_t time, std::string_view arg) {
    const auto fd = strace::parse_fd(arg);
    if (!fd || !fd->path) return nullptr;
    const std::size_t path = path_index(*fd->path);
    FdTable& t = table(pid);
    auto it = t.find(fd->fd);
    if (it != t.end() && it->second->path == path) return it->second.get();
    for (const auto& [other, table] : tables_) {
      if (other == pid || !table) continue;
      auto found = table->find(fd->fd);
      if (found != table->end() && found->second->path == path) {
        attach(pid, time, fd->fd, found->second, 0);
        return t[fd->fd].get();
      }
    }
    auto d = std::make_shared<Description>();
    d->path = path;
    attach(pid, time, fd->fd, d, 0);
    return d.get();
  }

  void evidence(std::size_t path, std::uint64_t size) {
    PathInfo& info = paths_[path];
    if (!info.modified && !info.evidence) info.evidence = size;
  }

  void call(std::uint64_t pid, std::uint64_t time, std::string_view text) {
    const std::optional<Call> c = strace::parse_call(text);
    if (!c || !c->ok) {
      ++ignored;
      return;
    }
    const std::string_view n = c->name;
    const auto& a = c->args;
    auto arg_number = [&](std::size_t i) -> std::optional<std::int64_t> {
      return i < a.size() ? strace::parse_number(a[i]) : std::nullopt;
    };
    if (n == "clone" || n == "clone3" || n == "fork" || n == "vfork") {
      // The child shares the table (CLONE_FILES: a thread) or gets a copy of it.
      const std::uint64_t child = c->result_u;
      const bool shares = (n == "clone" || n == "clone3") && text.find("CLONE_FILES") != std::string_view::npos;
      // A child that ran before its parent's clone returned already has the
      // table its calls built (resolve() shared what it used): kept.
      table(pid);
      if (tables_.contains(child)) return;
      if (shares) {
        tables_[child] = tables_[pid];
      } else {
        auto copy = std::make_shared<FdTable>(*tables_[pid]);
        for (const auto& [fd, d] : *copy) ++descriptors_[d->path];
        tables_[child] = std::move(copy);
      }
      return;
    }
    if (n == "open" || n == "openat" || n == "creat") {
      if (!c->result_path) return ignore();
      std::string_view flags = n == "open" && a.size() > 1 ? a[1] : n == "openat" && a.size() > 2 ? a[2] : "";
      const bool creat = n == "creat";
      if (strace::has_flag(flags, "O_DIRECTORY") || strace::has_flag(flags, "O_PATH")) return ignore();
      std::uint32_t f = 0;
      if (creat || strace::has_flag(flags, "O_CREAT")) f |= kCreate;
      if (creat || strace::has_flag(flags, "O_TRUNC")) f |= kTruncate;
      if (strace::has_flag(flags, "O_APPEND")) f |= kAppend;
      if (strace::has_flag(flags, "O_DIRECT")) f |= kDirect;
      auto d = std::make_shared<Description>();
      d->path = path_index(*c->result_path);
      d->append = (f & kAppend) != 0;
      d->direct = (f & kDirect) != 0;
      const std::size_t path = d->path;
      paths_[path].opened = true;
      const bool was_open = descriptors_[path] > 0;
      if ((f & kTruncate) != 0) {
        evidence(path, 0);
        modified(path);
        if (second_) sizes[path] = 0;
      }
      attach(pid, time, c->result, d, f);
      if (was_open && (f & kTruncate) != 0) op(pid, time, path, OpKind::Truncate, 0, 0, 0);
      return;
    }
    if (n == "close") {
      const auto fd = a.empty() ? std::nullopt : strace::parse_fd(a[0]);
      if (!fd) return ignore();
      release(pid, time, fd->fd);
      return;
    }
    if (n == "dup" || n == "dup2" || n == "dup3" || n == "fcntl") {
      if (n == "fcntl" && (a.size() < 2 || (a[1] != "F_DUPFD" && a[1] != "F_DUPFD_CLOEXEC"))) return ignore();
      if (a.empty() || !c->result_path) return ignore();
      Description* d = resolve(pid, time, a[0]);
      if (d == nullptr) return ignore();
      const DescriptionPtr shared = table(pid)[strace::parse_fd(a[0])->fd];
      if (c->result == strace::parse_fd(a[0])->fd) return;  // dup2(fd, fd)
      attach(pid, time, c->result, shared, 0);
      return;
    }
    if (n == "munmap") {
      const auto address = arg_number(0);
      auto it = address ? mappings_.find(static_cast<std::uint64_t>(*address)) : mappings_.end();
      if (it == mappings_.end()) return ignore();
      op(pid, time, it->second.path, OpKind::Unmap, it->second.offset, it->second.length, 0);
      mappings_.erase(it);
      return;
    }
    if (n == "msync") {
      const auto address = arg_number(0), length = arg_number(1);
      if (!address || !length || a.size() < 3 || !strace::has_flag(a[2], "MS_SYNC")) return ignore();
      const auto at = static_cast<std::uint64_t>(*address);
      auto it = mappings_.upper_bound(at);
      if (it == mappings_.begin()) return ignore();
      --it;
      if (at >= it->first + it->second.length) return ignore();
      op(pid, time, it->second.path, OpKind::Msync, it->second.offset + (at - it->first),
         static_cast<std::uint64_t>(*length), 0);
      return;
    }
    if (n == "mmap") {
      if (a.size() < 6) return ignore();
      Description* d = resolve(pid, time, a[4]);
      const auto length = arg_number(1), offset = arg_number(5);
      if (d == nullptr || !length || !offset || *length <= 0 || *offset < 0) return ignore();
      const bool writes = strace::has_flag(a[2], "PROT_WRITE") &&
                          (strace::has_flag(a[3], "MAP_SHARED") || strace::has_flag(a[3], "MAP_SHARED_VALIDATE"));
      if (writes) modified(d->path);
      mappings_[c->result_u] = {d->path, static_cast<std::uint64_t>(*offset), static_cast<std::uint64_t>(*length)};
      op(pid, time, d->path, OpKind::Map, static_cast<std::uint64_t>(*offset), static_cast<std::uint64_t>(*length),
         writes ? std::uint32_t{kMapWrite} : 0u);
      return;
    }
    if (n == "sendfile" || n == "sendfile64" || n == "copy_file_range") return copy(pid, time, *c);
    // Everything else names its file by its first argument.
    if (a.empty()) return ignore();
    if (n == "fstat" || n == "newfstatat" || n == "statx") {
      // On a descriptor only: fstat(fd, ...), or *at(fd, "", ..., AT_EMPTY_PATH).
      if (n != "fstat" && text.find("AT_EMPTY_PATH") == std::string_view::npos) return ignore();
      const auto fd = strace::parse_fd(a[0]);
      if (!fd || !fd->path) return ignore();
      const std::size_t path = path_index(*fd->path);
      const auto mode = strace::field(text, n == "statx" ? "stx_mode" : "st_mode");
      const auto size = strace::field(text, n == "statx" ? "stx_size" : "st_size");
      if (mode && !strace::has_flag(*mode, "S_IFREG") && mode->find("S_IFREG") == std::string_view::npos) {
        paths_[path].excluded = true;  // a directory, a device, a FIFO
        return;
      }
      const auto bytes = size ? strace::parse_number(*size) : std::nullopt;
      if (bytes && *bytes >= 0) {
        evidence(path, static_cast<std::uint64_t>(*bytes));
        if (second_) sizes[path] = static_cast<std::uint64_t>(*bytes);
      }
      return;
    }
    Description* d = resolve(pid, time, a[0]);
    if (d == nullptr) return ignore();
    const std::size_t path = d->path;
    const std::uint64_t result = c->result_u;
    const bool read = n == "read" || n == "pread64" || n == "readv" || n == "preadv" || n == "preadv2";
    const bool write = n == "write" || n == "pwrite64" || n == "writev" || n == "pwritev" || n == "pwritev2";
    if (read || write) {
      const bool vectored = n.find('v') != std::string_view::npos;
      std::optional<std::int64_t> at;  // the offset a positional call named (-1: the current position)
      if (n != "read" && n != "write" && n != "readv" && n != "writev") at = arg_number(3);
      if (at && *at < -1) return ignore();
      // strace shows no iovec lengths at -s 0: a vectored read is never known short.
      transfer(pid, time, *d, read, at && *at >= 0 ? std::optional<std::uint64_t>(*at) : std::nullopt, result,
               vectored ? std::nullopt : arg_number(2), vectored ? std::uint32_t{kVectored} : 0u);
      return;
    }
    if (n == "lseek") {
      d->position = result;
      return;
    }
    if (n == "fsync" || n == "fdatasync") {
      op(pid, time, path, n == "fsync" ? OpKind::Fsync : OpKind::Fdatasync, 0, 0, 0);
      return;
    }
    if (n == "sync_file_range") {
      const auto offset = arg_number(1), length = arg_number(2);
      if (!offset || !length || *offset < 0 || *length < 0) return ignore();
      op(pid, time, path, OpKind::SyncFileRange, static_cast<std::uint64_t>(*offset), static_cast<std::uint64_t>(*length), 0);
      return;
    }
    if (n == "ftruncate") {
      const auto length = arg_number(1);
      if (!length || *length < 0) return ignore();
      modified(path);
      if (second_) sizes[path] = static_cast<std::uint64_t>(*length);
      op(pid, time, path, OpKind::Truncate, static_cast<std::uint64_t>(*length), 0, 0);
      return;
    }
    if (n == "fallocate") {
      const auto offset = arg_number(2), length = arg_number(3);
      if (a.size() < 4 || !offset || !length || *offset < 0 || *length < 0) return ignore();
      if (a[1].find("FALLOC_FL_PUNCH_HOLE") != std::string_view::npos) return ignore();  // no operation of trace.h
      modified(path);
      if (a[1].find("FALLOC_FL_KEEP_SIZE") == std::string_view::npos)
        grow(path, static_cast<std::uint64_t>(*offset) + static_cast<std::uint64_t>(*length));
      op(pid, time, path, OpKind::Allocate, static_cast<std::uint64_t>(*offset), static_cast<std::uint64_t>(*length), 0);
      return;
    }
    ignore();
  }

  void ignore() { ++ignored; }

  // `bytes` moved by a read or a write through `d`: at `at` (a positional
  // call) or the description's position, which it then advances; a write
  // through O_APPEND at the file's end, whatever the call named (pwrite
  // too, on Linux). A read of fewer bytes than `asked` is short: it met the
  // end of the file.
  void transfer(std::uint64_t pid, std::uint64_t time, Description& d, bool read, std::optional<std::uint64_t> at,
                std::uint64_t bytes, std::optional<std::int64_t> asked, std::uint32_t flags) {
    const std::size_t path = d.path;
    std::uint64_t offset = at ? *at : d.position;
    flags |= (at ? std::uint32_t{kPositional} : 0u) | (d.direct ? std::uint32_t{kDirect} : 0u);
    if (!read && d.append) {
      offset = second_ ? sizes[path] : 0;
      flags |= kAppend;
    }
    if (offset >= kMaxEnd || bytes >= kMaxEnd - offset) return ignore();
    if (read) {
      if (asked && *asked >= 0 && bytes < static_cast<std::uint64_t>(*asked)) {
        flags |= kShort;
        evidence(path, offset + bytes);
      }
      if (!paths_[path].modified) paths_[path].read_end = std::max(paths_[path].read_end, offset + bytes);
    } else {
      modified(path);
      grow(path, offset + bytes);
    }
    if (!at) d.position = offset + bytes;
    op(pid, time, path, read ? OpKind::Read : OpKind::Write, offset, bytes, flags);
  }

  // A pointer to an offset as strace shows it: "NULL", "[4096]", "[1] => [3]".
  static std::optional<std::optional<std::uint64_t>> offset_pointer(std::string_view arg) {
    if (arg == "NULL") return std::optional<std::uint64_t>{};
    if (!arg.starts_with('[')) return std::nullopt;
    const std::size_t end = arg.find(']');
    if (end == std::string_view::npos) return std::nullopt;
    const auto n = strace::parse_number(arg.substr(1, end - 1));
    if (!n || *n < 0) return std::nullopt;
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*n));
  }

  // sendfile(out, in, offset, count) and copy_file_range(in, off_in, out,
  // off_out, count, flags): a read of one file and a write of the other.
  void copy(std::uint64_t pid, std::uint64_t time, const Call& c) {
    const auto& a = c.args;
    const bool sendfile = c.name == "sendfile" || c.name == "sendfile64";
    if (a.size() < (sendfile ? 4u : 5u)) return ignore();
    const std::string_view in_fd = sendfile ? a[1] : a[0], out_fd = sendfile ? a[0] : a[2];
    const auto in_at = offset_pointer(sendfile ? a[2] : a[1]);
    const auto out_at = sendfile ? std::optional<std::optional<std::uint64_t>>(std::optional<std::uint64_t>{})
                                 : offset_pointer(a[3]);
    const auto asked = strace::parse_number(sendfile ? a[3] : a[4]);
    if (!in_at || !out_at) return ignore();
    Description* in = resolve(pid, time, in_fd);
    if (in != nullptr) transfer(pid, time, *in, true, *in_at, c.result_u, asked, 0);
    Description* out = resolve(pid, time, out_fd);
    if (out != nullptr) transfer(pid, time, *out, false, *out_at, c.result_u, std::nullopt, 0);
  }
};

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
