// The converter's bookkeeping (strace_converter.h): strace's lines joined
// when a call was interrupted, paths numbered and classed, descriptor tables
// per process, descriptions attached and released, and the operations they
// emit.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "strace_converter.h"

namespace iolab::trace::strace {

namespace {

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

}  // namespace

void Converter::line(std::string_view text) {
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
void Converter::finish() {
  std::vector<std::uint64_t> pids;
  for (const auto& [pid, table] : tables_) pids.push_back(pid);
  for (auto pid : pids) exited(pid, last_time_);
  for (const auto& [address, m] : mappings_) op(last_pid_, last_time_, m.path, OpKind::Unmap, m.offset, m.length, 0);
  mappings_.clear();
}

std::size_t Converter::path_index(const std::string& raw) {
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

FdTable& Converter::table(std::uint64_t pid) {
  auto& t = tables_[pid];
  if (!t) t = std::make_shared<FdTable>();
  return *t;
}

void Converter::op(std::uint64_t pid, std::uint64_t time, std::size_t path, OpKind kind, std::uint64_t offset,
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

void Converter::grow(std::size_t path, std::uint64_t end) {
  if (second_) sizes[path] = std::max(sizes[path], end);
}

// A descriptor starts referring to a description: the file's first one opens it.
void Converter::attach(std::uint64_t pid, std::uint64_t time, std::int64_t fd, DescriptionPtr d, std::uint32_t open_flags) {
  release(pid, time, fd);
  if (descriptors_[d->path]++ == 0) op(pid, time, d->path, OpKind::Open, 0, 0, open_flags);
  table(pid)[fd] = std::move(d);
}

// A descriptor goes (close, or replaced by dup2): the file's last one closes it.
void Converter::release(std::uint64_t pid, std::uint64_t time, std::int64_t fd) {
  FdTable& t = table(pid);
  auto it = t.find(fd);
  if (it == t.end()) return;
  const std::size_t path = it->second->path;
  t.erase(it);
  if (descriptors_[path] > 0 && --descriptors_[path] == 0) op(pid, time, path, OpKind::Close, 0, 0, 0);
}

void Converter::exited(std::uint64_t pid, std::uint64_t time) {
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
Description* Converter::resolve(std::uint64_t pid, std::uint64_t time, std::string_view arg) {
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

void Converter::evidence(std::size_t path, std::uint64_t size) {
  PathInfo& info = paths_[path];
  if (!info.modified && !info.evidence) info.evidence = size;
}

}  // namespace iolab::trace::strace
