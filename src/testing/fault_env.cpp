// FaultEnv: an in-memory file system that records what a program does and
// replays it into power-loss states (include/iolab/io/fault_env.h).
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

namespace iolab::io {
namespace {

using Bytes = std::vector<std::byte>;
using Path = std::filesystem::path;

Path normal(const Path& p) { return p.lexically_normal(); }
Path parent_of(const Path& p) {
  Path d = p.parent_path();
  return d.empty() ? Path(".") : d;
}

enum class OpKind { Create, Rename, Remove, Mkdir, Rmdir, SyncDir, Write, SetSize, Sync, SyncRange };

// One recorded operation.
struct Op {
  OpKind kind;
  std::uint64_t inode = 0;     // file operations, Create, Rename, Remove
  Path path, to;               // directory operations (SyncDir: the directory)
  std::uint64_t offset = 0;    // Write, SyncRange
  std::uint64_t length = 0;    // SetSize: the new size; SyncRange: the range
  Bytes data;                  // Write
  bool is_sync() const { return kind == OpKind::SyncDir || kind == OpKind::Sync || kind == OpKind::SyncRange; }
  bool is_dir_op() const {
    return kind == OpKind::Create || kind == OpKind::Rename || kind == OpKind::Remove || kind == OpKind::Mkdir ||
           kind == OpKind::Rmdir;
  }
  // The directory operation touches `dir`.
  bool in_dir(const Path& dir) const {
    if (kind == OpKind::Rename) return parent_of(path) == dir || parent_of(to) == dir;
    return parent_of(path) == dir;
  }
};

class Region;

// A file's bytes: reserved address space, so a mapping's address holds as
// the file grows. `shadow` is the content as the trace knows it; the
// difference is stores through a mapping not yet recorded.
struct Inode {
  std::uint64_t id = 0;
  std::byte* base = nullptr;
  std::uint64_t reserved = 0;
  std::uint64_t size = 0;
  Bytes shadow;
  Path name;  // its latest name, for messages
  std::vector<Region*> regions;

  Inode(std::uint64_t id_, std::uint64_t reserve, Path name_) : id(id_), reserved(reserve), name(std::move(name_)) {
    void* p = ::mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw Error("reserve memory for", name.string(), errno);
    base = static_cast<std::byte*>(p);
  }
  ~Inode() { ::munmap(base, reserved); }
  Inode(const Inode&) = delete;
  Inode& operator=(const Inode&) = delete;
};

}  // namespace

struct FaultEnv::Impl {
  std::uint64_t max_file_size;
  mutable std::mutex mu;
  std::map<Path, std::shared_ptr<Inode>> names;
  std::set<Path> dirs;           // created through the env, present now
  std::set<Path> created_dirs;   // ever created through the env (its files vanish with it)
  std::vector<Op> ops;
  std::uint64_t next_inode = 1;
  // The starting state (FaultEnv(CrashState)): durable from the first point.
  std::map<Path, std::uint64_t> initial_names;
  std::map<std::uint64_t, Bytes> initial_content;
  std::set<Path> initial_dirs;

  explicit Impl(std::uint64_t max) : max_file_size(max) {}

  std::shared_ptr<Inode> make_inode(const Path& name) {
    return std::make_shared<Inode>(next_inode++, max_file_size, name);
  }
  void record(Op op) { ops.push_back(std::move(op)); }

  // Records stores through the mappings of `f` in [lo, hi) as writes, one
  // per dirty page. Throws for a store past the end of file (a real mapping
  // would have raised SIGBUS).
  void detect(Inode& f, std::uint64_t lo, std::uint64_t hi);
  void detect_all(Inode& f) { detect(f, 0, f.reserved); }

  void write(Inode& f, std::uint64_t offset, std::span<const std::byte> src) {
    if (src.empty()) return;
    if (offset > f.reserved || src.size() > f.reserved - offset)
      throw Error("pwrite", f.name.string(), "past the fault env's largest file size", EFBIG);
    detect(f, offset, offset + src.size());
    std::memcpy(f.base + offset, src.data(), src.size());
    f.size = std::max<std::uint64_t>(f.size, offset + src.size());
    if (f.shadow.size() < f.size) f.shadow.resize(f.size);
    std::memcpy(f.shadow.data() + offset, src.data(), src.size());
    record({OpKind::Write, f.id, {}, {}, offset, 0, Bytes(src.begin(), src.end())});
  }
  void set_size(Inode& f, std::uint64_t size, const char* call) {
    if (size > f.reserved) throw Error(call, f.name.string(), "past the fault env's largest file size", EFBIG);
    detect_all(f);
    if (size < f.size) std::memset(f.base + size, 0, f.size - size);  // regrowth reads zeros
    f.size = size;
    f.shadow.resize(size);
    record({OpKind::SetSize, f.id, {}, {}, 0, size, {}});
  }
};

namespace {

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

}  // namespace

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

void CrashState::write_under(const Path& root) const {
  for (const Path& d : dirs) std::filesystem::create_directories(root / d.relative_path());
  for (const auto& [path, bytes] : files) {
    Path p = root / path.relative_path();
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error("write crash state", p.string(), "the write failed", EIO);
  }
}

// ---------------------------------------------------------------- replay

namespace {

// A not-yet-durable change to a file's bytes: a write (or the part of one a
// range sync left) or a size change.
struct Pending {
  bool set_size = false;
  std::uint64_t offset = 0;
  std::span<const std::byte> data;  // into the recorded operation
  std::uint64_t size = 0;
};

void apply_change(Bytes& image, const Pending& e) {
  if (e.set_size) {
    image.resize(e.size);
    return;
  }
  if (e.data.empty()) return;
  if (image.size() < e.offset + e.data.size()) image.resize(e.offset + e.data.size());
  std::memcpy(image.data() + e.offset, e.data.data(), e.data.size());
}

struct FileModel {
  Bytes durable;
  std::vector<Pending> pending;
  std::uint64_t size = 0;  // with every pending change applied
};

}  // namespace

struct CrashReplay::Model {
  std::shared_ptr<const FaultEnv::Impl> env;
  CrashOptions options;
  std::size_t point = 0;
  std::map<std::uint64_t, FileModel> files;
  std::map<Path, std::uint64_t> names;  // durable
  std::set<Path> dirs;                  // durable
  std::vector<const Op*> pending_dir;

  void sync_file(FileModel& f) {
    for (const Pending& e : f.pending) apply_change(f.durable, e);
    f.pending.clear();
  }
  void sync_range(FileModel& f, std::uint64_t lo, std::uint64_t hi) {
    std::vector<Pending> rest;
    for (const Pending& e : f.pending) {
      if (e.set_size) {
        // msync persists the size as fdatasync does: durable now, and no
        // earlier write can show up past a size it cut.
        apply_change(f.durable, e);
        for (Pending& r : rest) {
          if (r.offset >= e.size)
            r.data = {};
          else if (r.offset + r.data.size() > e.size)
            r.data = r.data.first(e.size - r.offset);
        }
        std::erase_if(rest, [](const Pending& r) { return r.data.empty(); });
        continue;
      }
      std::uint64_t a = e.offset, b = e.offset + e.data.size();
      std::uint64_t in_lo = std::max(a, lo), in_hi = std::min(b, hi);
      if (in_lo >= in_hi) {
        rest.push_back(e);
        continue;
      }
      apply_change(f.durable, {false, in_lo, e.data.subspan(in_lo - a, in_hi - in_lo), 0});
      if (a < in_lo) rest.push_back({false, a, e.data.first(in_lo - a), 0});
      if (in_hi < b) rest.push_back({false, in_hi, e.data.subspan(in_hi - a), 0});
    }
    f.pending = std::move(rest);
    // The size covers the writes still pending: what lies past the synced
    // ones reads as zeros if their own writes are lost.
    if (f.durable.size() < f.size) f.durable.resize(f.size);
  }
  static void apply_dir(const Op& op, std::map<Path, std::uint64_t>& names, std::set<Path>& dirs) {
    switch (op.kind) {
      case OpKind::Create: names[op.path] = op.inode; break;
      case OpKind::Rename: {
        auto it = names.find(op.path);
        if (it == names.end() || it->second != op.inode) break;  // its create was lost
        names.erase(it);
        names[op.to] = op.inode;
        break;
      }
      case OpKind::Remove: {
        auto it = names.find(op.path);
        if (it != names.end() && it->second == op.inode) names.erase(it);
        break;
      }
      case OpKind::Mkdir: dirs.insert(op.path); break;
      case OpKind::Rmdir: dirs.erase(op.path); break;
      default: break;
    }
  }

  void step(const Op& op) {
    switch (op.kind) {
      case OpKind::Write: {
        FileModel& f = files[op.inode];
        f.pending.push_back({false, op.offset, op.data, 0});
        f.size = std::max<std::uint64_t>(f.size, op.offset + op.data.size());
        break;
      }
      case OpKind::SetSize: {
        FileModel& f = files[op.inode];
        f.pending.push_back({true, 0, {}, op.length});
        f.size = op.length;
        break;
      }
      case OpKind::Sync:
        if (options.honour_syncs) sync_file(files[op.inode]);
        break;
      case OpKind::SyncRange:
        if (options.honour_syncs) sync_range(files[op.inode], op.offset, op.offset + op.length);
        break;
      case OpKind::SyncDir: {
        if (!options.honour_syncs) break;
        std::vector<const Op*> rest;
        for (const Op* d : pending_dir) {
          if (d->in_dir(op.path))
            apply_dir(*d, names, dirs);
          else
            rest.push_back(d);
        }
        pending_dir = std::move(rest);
        break;
      }
      default: pending_dir.push_back(&op); break;
    }
  }
};

CrashReplay::CrashReplay(const FaultEnv& env, const CrashOptions& options) : model_(std::make_unique<Model>()) {
  model_->env = env.impl_;
  model_->options = options;
  if (options.sector == 0) throw UsageError("crash sector size 0", "must be at least 1 byte");
  const FaultEnv::Impl& m = *env.impl_;
  model_->names = m.initial_names;
  model_->dirs = m.initial_dirs;
  for (const auto& [id, bytes] : m.initial_content) {
    FileModel& f = model_->files[id];
    f.durable = bytes;
    f.size = bytes.size();
  }
}

CrashReplay::~CrashReplay() = default;

void CrashReplay::advance_to(std::size_t point) {
  std::lock_guard lock(model_->env->mu);
  const auto& ops = model_->env->ops;
  if (point > ops.size()) point = ops.size();
  for (; model_->point < point; ++model_->point) model_->step(ops[model_->point]);
}

std::size_t CrashReplay::point() const noexcept { return model_->point; }

std::size_t CrashReplay::pending() const {
  std::size_t n = model_->pending_dir.size();
  for (const auto& [id, f] : model_->files) n += f.pending.size();
  return n;
}

CrashState CrashReplay::state(std::uint64_t seed) const {
  const Model& m = *model_;
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); };
  // A profile per state, so the states cover both ends (every unsynced
  // change lost: LevelDB's fault env; every one kept: a process crash)
  // and everything between.
  double keep = 0, tear = 0, keep_dir = 0;
  switch (rng() % 10) {
    case 0: break;  // all lost
    case 1: keep = keep_dir = 1; break;
    default:
      keep = uniform();
      tear = uniform() * (1 - keep) * 0.6;
      keep_dir = uniform();
  }
  CrashState s;
  auto names = m.names;
  s.dirs = m.dirs;
  for (const Op* d : m.pending_dir) {
    if (uniform() < keep_dir) {
      Model::apply_dir(*d, names, s.dirs);
      ++s.kept;
    } else {
      ++s.dropped;
    }
  }
  const auto& created = m.env->created_dirs;
  for (const auto& [path, id] : names) {
    Path dir = parent_of(path);
    if (created.count(dir) != 0 && s.dirs.count(dir) == 0) continue;  // its directory was lost
    auto it = m.files.find(id);
    Bytes image;
    if (it != m.files.end()) {
      const FileModel& f = it->second;
      image = f.durable;
      for (const Pending& e : f.pending) {
        double u = uniform();
        if (u < keep) {
          apply_change(image, e);
          ++s.kept;
        } else if (!e.set_size && u < keep + tear && e.data.size() > 1) {
          // Torn: each sector (aligned in the file) kept or lost on its own.
          ++s.torn;
          std::uint64_t at = e.offset, end = e.offset + e.data.size();
          while (at < end) {
            std::uint64_t next = std::min<std::uint64_t>(end, (at / m.options.sector + 1) * m.options.sector);
            if (rng() & 1) apply_change(image, {false, at, e.data.subspan(at - e.offset, next - at), 0});
            at = next;
          }
        } else {
          ++s.dropped;
        }
      }
    }
    s.files[path] = std::move(image);
  }
  return s;
}

}  // namespace iolab::io
