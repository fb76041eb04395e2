// FaultEnv: an in-memory file system that records what a program does
// (include/iolab/testing/fault_env.h); crash_replay.cpp turns the record
// into power-loss states.
#include "iolab/testing/fault_env.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <span>

#include "iolab/base/error.h"
#include "iolab/io/buffer.h"

#include "fault_env_model.h"

namespace iolab::io {

using namespace fault_model;

namespace fault_model {

class Region final : public MappedRegion {
 public:
  Region(std::shared_ptr<FaultEnv::Impl> env, std::shared_ptr<Inode> inode, std::uint64_t offset, std::size_t length,
         bool writable)
      : MappedRegion(inode->base + offset, length, offset),
        env_(std::move(env)),
        inode_(std::move(inode)),
        writable_(writable) {
    inode_->regions.push_back(this);
  }
  ~Region() override {
    try {
      unmap();
    } catch (...) {  // quietly, as the interface promises
    }
  }
  std::uint64_t end() const noexcept { return offset_ + size_; }
  bool writable() const noexcept { return writable_; }

  void resize(std::size_t length) override {
    std::lock_guard lock(env_->mu);
    check_open("mremap");
    if (writable_ && offset_ + length > inode_->reserved)
      throw Error("mremap", inode_->name.string(), "past the fault env's largest file size", EFBIG);
    env_->detect(*inode_, offset_, end());
    size_ = length;
  }
  void sync(std::size_t offset, std::size_t length) override {
    std::lock_guard lock(env_->mu);
    check_open("msync");
    if (length == 0) return;
    // msync works on whole pages, but only the range's own bytes are read
    // for stores (see detect): the model never syncs more than was asked.
    std::uint64_t lo = offset_ + offset, hi = lo + length;
    env_->detect(*inode_, lo, hi);
    env_->record({OpKind::SyncRange, inode_->id, {}, {}, lo, hi - lo, {}});
  }
  void prefault(std::size_t, std::size_t) noexcept override {}
  void unmap() override {
    std::lock_guard lock(env_->mu);
    if (data_ == nullptr) return;
    auto forget = [&] {
      auto& list = inode_->regions;
      list.erase(std::remove(list.begin(), list.end(), this), list.end());
      data_ = nullptr;
    };
    try {
      env_->detect(*inode_, offset_, end());
    } catch (...) {  // a store past the end of file: unmapped all the same
      forget();
      throw;
    }
    forget();
  }

 private:
  void check_open(const char* call) const {
    if (data_ == nullptr) throw Error(call, inode_->name.string(), "the region is unmapped", EINVAL);
  }
  std::shared_ptr<FaultEnv::Impl> env_;
  std::shared_ptr<Inode> inode_;
  bool writable_;  // a read-only mapping cannot store: never scanned
};

class FaultFile final : public EnvFile {
 public:
  FaultFile(std::shared_ptr<FaultEnv::Impl> env, std::shared_ptr<Inode> inode, const Path& path, Access access)
      : EnvFile(path), env_(std::move(env)), inode_(std::move(inode)), access_(access) {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    std::lock_guard lock(env_->mu);
    check("pread");
    ++counters_.calls;
    if (offset >= inode_->size || dst.empty()) return 0;
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(dst.size(), inode_->size - offset));
    std::memcpy(dst.data(), inode_->base + offset, n);
    counters_.bytes_read += n;
    return n;
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    std::lock_guard lock(env_->mu);
    check_writable("pwrite");
    ++counters_.calls;
    env_->write(*inode_, offset, src);
    counters_.bytes_written += src.size();
  }
  void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> parts) override {
    Bytes all;  // one pwritev: one recorded write
    for (auto p : parts) all.insert(all.end(), p.begin(), p.end());
    std::lock_guard lock(env_->mu);
    check_writable("pwritev");
    ++counters_.calls;
    env_->write(*inode_, offset, all);
    counters_.bytes_written += all.size();
  }
  void seek(std::uint64_t offset) override {
    std::lock_guard lock(env_->mu);
    check("lseek");
    ++counters_.calls;
    position_ = offset;
  }
  std::size_t read(std::span<std::byte> dst) override {
    std::size_t n = read_at(position_, dst);
    position_ += n;
    return n;
  }
  void write(std::span<const std::byte> src) override {
    std::lock_guard lock(env_->mu);
    check_writable("write");
    ++counters_.calls;
    env_->write(*inode_, position_, src);
    position_ += src.size();
    counters_.bytes_written += src.size();
  }
  std::uint64_t size() override {
    std::lock_guard lock(env_->mu);
    check("fstat");
    return inode_->size;
  }
  void truncate(std::uint64_t size) override {
    std::lock_guard lock(env_->mu);
    check_writable("ftruncate");
    ++counters_.calls;
    env_->set_size(*inode_, size, "ftruncate");
  }
  void allocate(std::uint64_t offset, std::uint64_t length) override {
    std::lock_guard lock(env_->mu);
    check_writable("fallocate");
    ++counters_.calls;
    if (offset + length > inode_->size) env_->set_size(*inode_, offset + length, "fallocate");
  }
  void sync(Durability d) override {
    std::lock_guard lock(env_->mu);
    check("fsync");
    if (d == Durability::None || d == Durability::Flush) return;
    if (d != Durability::Fdatasync && d != Durability::Fsync)
      throw Error(std::string(to_string(d)), path().string(), "a file of the env does not support this durability call",
                  EOPNOTSUPP);
    ++counters_.calls;
    env_->detect_all(*inode_);  // fdatasync writes back pages dirtied through a mapping too
    env_->record({OpKind::Sync, inode_->id, {}, {}, 0, 0, {}});
  }
  std::unique_ptr<MappedRegion> map(std::uint64_t offset, std::size_t length, Access access) override {
    std::lock_guard lock(env_->mu);
    check("mmap");
    if (offset % kPageSize != 0)
      throw Error("mmap", path().string(), "offset " + std::to_string(offset) + " is not a multiple of the page size",
                  EINVAL);
    if (access == Access::ReadWrite && access_ != Access::ReadWrite)
      throw Error("mmap", path().string(), std::strerror(EACCES), EACCES);
    // A read-only mapping may reach past the largest file, as a real one may
    // reach past the end of file: only what lies below the end is read.
    if (access == Access::ReadWrite && offset + length > inode_->reserved)
      throw Error("mmap", path().string(), "past the fault env's largest file size", EFBIG);
    if (offset > inode_->reserved) throw Error("mmap", path().string(), "past the fault env's largest file size", EFBIG);
    ++counters_.calls;
    return std::make_unique<Region>(env_, inode_, offset, length, access == Access::ReadWrite);
  }
  void close() override {
    std::lock_guard lock(env_->mu);
    closed_ = true;
  }
  IoCounters counters() const override {
    std::lock_guard lock(env_->mu);
    return counters_;
  }

 private:
  void check(const char* call) const {
    if (closed_) throw Error(call, path().string(), "the file is closed", EBADF);
  }
  void check_writable(const char* call) const {
    check(call);
    if (access_ != Access::ReadWrite) throw Error(call, path().string(), "opened for reading only", EBADF);
  }

  std::shared_ptr<FaultEnv::Impl> env_;
  std::shared_ptr<Inode> inode_;
  Access access_;
  std::uint64_t position_ = 0;
  bool closed_ = false;
  IoCounters counters_;
};

}  // namespace fault_model

void FaultEnv::Impl::detect(Inode& f, std::uint64_t lo, std::uint64_t hi) {
  // Only the bytes of [lo, hi) are read: a range sync looks at its range
  // and not at the rest of its pages, where another thread may be storing.
  // Each page's changed bytes become one recorded write.
  for (const Region* r : f.regions) {
    if (!r->writable()) continue;
    std::uint64_t from = std::max<std::uint64_t>(lo, r->file_offset());
    std::uint64_t to = std::min<std::uint64_t>(hi, r->end());
    for (std::uint64_t at = from; at < to;) {
      std::uint64_t page_end = std::min<std::uint64_t>((at / kPageSize + 1) * kPageSize, to);
      if (at < f.size) {
        std::uint64_t end = std::min(page_end, f.size);
        if (std::memcmp(f.base + at, f.shadow.data() + at, end - at) != 0) {
          std::memcpy(f.shadow.data() + at, f.base + at, end - at);
          record({OpKind::Write, f.id, {}, {}, at, 0, Bytes(f.base + at, f.base + end)});
        }
      }
      std::uint64_t past = std::max(at, f.size);
      if (past < page_end &&
          std::any_of(f.base + past, f.base + page_end, [](std::byte b) { return b != std::byte{0}; }))
        throw Error("store through a mapping", f.name.string(),
                    "past the end of file at offset " + std::to_string(past) + " (SIGBUS on a real file)", EFAULT);
      at = page_end;
    }
  }
}

// ---------------------------------------------------------------- the env

FaultEnv::FaultEnv(std::uint64_t max_file_size) : impl_(std::make_shared<Impl>(max_file_size)) {}

FaultEnv::FaultEnv(const CrashState& start, std::uint64_t max_file_size) : FaultEnv(max_file_size) {
  Impl& m = *impl_;
  for (const auto& d : start.dirs) {
    m.dirs.insert(normal(d));
    m.created_dirs.insert(normal(d));
    m.initial_dirs.insert(normal(d));
  }
  for (const auto& [path, bytes] : start.files) {
    Path p = normal(path);
    auto f = m.make_inode(p);
    if (bytes.size() > f->reserved) throw Error("load crash state", p.string(), "larger than the largest file", EFBIG);
    if (!bytes.empty()) std::memcpy(f->base, bytes.data(), bytes.size());  // an empty vector may hold no pointer
    f->size = bytes.size();
    f->shadow = bytes;
    m.names[p] = f;
    m.initial_names[p] = f->id;
    m.initial_content[f->id] = bytes;
  }
}

FaultEnv::~FaultEnv() = default;

std::unique_ptr<EnvFile> FaultEnv::open(const Path& path, OpenMode mode, Access access) {
  Path p = normal(path);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (m.dirs.count(p) != 0) throw Error("open", p.string(), "not a regular file", EINVAL);
  auto it = m.names.find(p);
  if (it != m.names.end()) {
    if (mode == OpenMode::CreateNew) throw Error("open", p.string(), EEXIST);
    return std::make_unique<FaultFile>(impl_, it->second, p, access);
  }
  if (mode == OpenMode::OpenExisting) throw Error("open", p.string(), ENOENT);
  Path dir = parent_of(p);
  if (m.created_dirs.count(dir) != 0 && m.dirs.count(dir) == 0) throw Error("open", p.string(), ENOENT);
  auto f = m.make_inode(p);
  m.names[p] = f;
  m.record({OpKind::Create, f->id, p, {}, 0, 0, {}});
  return std::make_unique<FaultFile>(impl_, f, p, access);
}

bool FaultEnv::exists(const Path& path) {
  Path p = normal(path);
  std::lock_guard lock(impl_->mu);
  return impl_->names.count(p) != 0 || impl_->dirs.count(p) != 0;
}

void FaultEnv::rename(const Path& from, const Path& to) {
  Path a = normal(from), b = normal(to);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  auto it = m.names.find(a);
  if (it == m.names.end()) throw Error("rename", a.string() + " -> " + b.string(), ENOENT);
  if (m.dirs.count(b) != 0) throw Error("rename", a.string() + " -> " + b.string(), EISDIR);
  auto f = it->second;
  m.names.erase(it);
  m.names[b] = f;
  f->name = b;
  m.record({OpKind::Rename, f->id, a, b, 0, 0, {}});
}

void FaultEnv::remove(const Path& path) {
  Path p = normal(path);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  auto it = m.names.find(p);
  if (it == m.names.end()) throw Error("remove", p.string(), m.dirs.count(p) != 0 ? EISDIR : ENOENT);
  std::uint64_t id = it->second->id;
  m.names.erase(it);
  m.record({OpKind::Remove, id, p, {}, 0, 0, {}});
}

void FaultEnv::create_dir(const Path& dir) {
  Path p = normal(dir);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (m.dirs.count(p) != 0 || m.names.count(p) != 0) throw Error("create directory", p.string(), EEXIST);
  m.dirs.insert(p);
  m.created_dirs.insert(p);
  m.record({OpKind::Mkdir, 0, p, {}, 0, 0, {}});
}

void FaultEnv::remove_dir(const Path& dir) {
  Path p = normal(dir);
  std::lock_guard lock(impl_->mu);
  Impl& m = *impl_;
  if (m.dirs.count(p) == 0) throw Error("remove directory", p.string(), m.names.count(p) ? ENOTDIR : ENOENT);
  bool empty = std::none_of(m.names.begin(), m.names.end(), [&](const auto& e) { return parent_of(e.first) == p; }) &&
               std::none_of(m.dirs.begin(), m.dirs.end(), [&](const Path& d) { return parent_of(d) == p; });
  if (!empty) throw Error("remove directory", p.string(), ENOTEMPTY);
  m.dirs.erase(p);
  m.record({OpKind::Rmdir, 0, p, {}, 0, 0, {}});
}

std::vector<std::string> FaultEnv::list_dir(const Path& dir) {
  Path p = normal(dir);
  std::lock_guard lock(impl_->mu);
  const Impl& m = *impl_;
  if (m.names.count(p) != 0) throw Error("list directory", p.string(), ENOTDIR);
  if (m.created_dirs.count(p) != 0 && m.dirs.count(p) == 0) throw Error("list directory", p.string(), ENOENT);
  std::vector<std::string> out;
  for (const auto& [name, f] : m.names)
    if (parent_of(name) == p) out.push_back(name.filename().string());
  for (const Path& d : m.dirs)
    if (parent_of(d) == p) out.push_back(d.filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void FaultEnv::sync_dir(const Path& dir) {
  Path p = normal(dir);
  std::lock_guard lock(impl_->mu);
  impl_->record({OpKind::SyncDir, 0, p, {}, 0, 0, {}});
}

void FaultEnv::settle() {
  std::lock_guard lock(impl_->mu);
  for (auto& [name, f] : impl_->names) impl_->detect_all(*f);
}

std::size_t FaultEnv::operations() const {
  std::lock_guard lock(impl_->mu);
  return impl_->ops.size();
}

std::vector<std::size_t> FaultEnv::sync_points() const {
  std::lock_guard lock(impl_->mu);
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < impl_->ops.size(); ++i)
    if (impl_->ops[i].is_sync()) points.push_back(i + 1);
  return points;
}

std::string FaultEnv::describe(std::size_t index) const {
  std::lock_guard lock(impl_->mu);
  if (index >= impl_->ops.size()) return "no operation " + std::to_string(index);
  const Op& op = impl_->ops[index];
  std::string file = "inode " + std::to_string(op.inode);
  for (const auto& [name, f] : impl_->names)
    if (f->id == op.inode) file = name.string();
  auto range = [](std::uint64_t a, std::uint64_t n) {
    std::string r(1, '[');  // (not "[" + ...: gcc 12 warns falsely about the copy)
    r += std::to_string(a);
    r += ", ";
    r += std::to_string(a + n);
    r += ')';
    return r;
  };
  switch (op.kind) {
    case OpKind::Create: return "create " + op.path.string();
    case OpKind::Rename: return "rename " + op.path.string() + " -> " + op.to.string();
    case OpKind::Remove: return "remove " + op.path.string();
    case OpKind::Mkdir: return "mkdir " + op.path.string();
    case OpKind::Rmdir: return "rmdir " + op.path.string();
    case OpKind::SyncDir: return "sync dir " + op.path.string();
    case OpKind::Write: return "write " + file + " " + range(op.offset, op.data.size());
    case OpKind::SetSize: return "set size " + file + " " + std::to_string(op.length);
    case OpKind::Sync: return "sync " + file;
    case OpKind::SyncRange: return "sync range " + file + " " + range(op.offset, op.length);
  }
  return "?";
}

CrashState FaultEnv::current() const {
  std::lock_guard lock(impl_->mu);
  CrashState s;
  for (const auto& [name, f] : impl_->names) s.files[name] = Bytes(f->base, f->base + f->size);
  s.dirs = impl_->dirs;
  return s;
}

CrashState FaultEnv::crash_state(std::size_t point, std::uint64_t seed, const CrashOptions& options) const {
  CrashReplay replay(*this, options);
  replay.advance_to(point);
  return replay.state(seed);
}


}  // namespace iolab::io
