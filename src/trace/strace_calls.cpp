// What each system call strace showed does to the converter's state
// (strace_converter.h): opens, closes and dups move descriptors, reads and
// writes move bytes at a position, mappings, syncs, truncations and
// allocations become the operations of trace.h.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "strace_converter.h"

namespace iolab::trace::strace {

namespace {

// A pointer to an offset as strace shows it: "NULL", "[4096]", "[1] => [3]".
std::optional<std::optional<std::uint64_t>> offset_pointer(std::string_view arg) {
  if (arg == "NULL") return std::optional<std::uint64_t>{};
  if (!arg.starts_with('[')) return std::nullopt;
  const std::size_t end = arg.find(']');
  if (end == std::string_view::npos) return std::nullopt;
  const auto n = strace::parse_number(arg.substr(1, end - 1));
  if (!n || *n < 0) return std::nullopt;
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*n));
}

}  // namespace

void Converter::call(std::uint64_t pid, std::uint64_t time, std::string_view text) {
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

// `bytes` moved by a read or a write through `d`: at `at` (a positional
// call) or the description's position, which it then advances; a write
// through O_APPEND at the file's end, whatever the call named (pwrite
// too, on Linux). A read of fewer bytes than `asked` is short: it met the
// end of the file.
void Converter::transfer(std::uint64_t pid, std::uint64_t time, Description& d, bool read, std::optional<std::uint64_t> at,
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

// sendfile(out, in, offset, count) and copy_file_range(in, off_in, out,
// off_out, count, flags): a read of one file and a write of the other.
void Converter::copy(std::uint64_t pid, std::uint64_t time, const Call& c) {
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

}  // namespace iolab::trace::strace
