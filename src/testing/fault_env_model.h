// Inside the testing library: the in-memory file system's recorded state,
// shared by the env (fault_env.cpp) and the power-loss replay (crash_replay.cpp).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/testing/fault_env.h"

namespace iolab::io {
namespace fault_model {

using Bytes = std::vector<std::byte>;
using Path = std::filesystem::path;

inline Path normal(const Path& p) { return p.lexically_normal(); }
inline Path parent_of(const Path& p) {
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


}  // namespace fault_model

struct FaultEnv::Impl {
  std::uint64_t max_file_size;
  mutable std::mutex mu;
  std::map<fault_model::Path, std::shared_ptr<fault_model::Inode>> names;
  std::set<fault_model::Path> dirs;           // created through the env, present now
  std::set<fault_model::Path> created_dirs;   // ever created through the env (its files vanish with it)
  std::vector<fault_model::Op> ops;
  std::uint64_t next_inode = 1;
  // The starting state (FaultEnv(CrashState)): durable from the first point.
  std::map<fault_model::Path, std::uint64_t> initial_names;
  std::map<std::uint64_t, fault_model::Bytes> initial_content;
  std::set<fault_model::Path> initial_dirs;

  explicit Impl(std::uint64_t max) : max_file_size(max) {}

  std::shared_ptr<fault_model::Inode> make_inode(const fault_model::Path& name) {
    return std::make_shared<fault_model::Inode>(next_inode++, max_file_size, name);
  }
  void record(fault_model::Op op) { ops.push_back(std::move(op)); }

  // Records stores through the mappings of `f` in [lo, hi) as writes, one
  // per dirty page. Throws for a store past the end of file (a real mapping
  // would have raised SIGBUS).
  void detect(fault_model::Inode& f, std::uint64_t lo, std::uint64_t hi);
  void detect_all(fault_model::Inode& f) { detect(f, 0, f.reserved); }

  void write(fault_model::Inode& f, std::uint64_t offset, std::span<const std::byte> src) {
    if (src.empty()) return;
    if (offset > f.reserved || src.size() > f.reserved - offset)
      throw Error("pwrite", f.name.string(), "past the fault env's largest file size", EFBIG);
    detect(f, offset, offset + src.size());
    std::memcpy(f.base + offset, src.data(), src.size());
    f.size = std::max<std::uint64_t>(f.size, offset + src.size());
    if (f.shadow.size() < f.size) f.shadow.resize(f.size);
    std::memcpy(f.shadow.data() + offset, src.data(), src.size());
    record({fault_model::OpKind::Write, f.id, {}, {}, offset, 0, fault_model::Bytes(src.begin(), src.end())});
  }
  void set_size(fault_model::Inode& f, std::uint64_t size, const char* call) {
    if (size > f.reserved) throw Error(call, f.name.string(), "past the fault env's largest file size", EFBIG);
    detect_all(f);
    if (size < f.size) std::memset(f.base + size, 0, f.size - size);  // regrowth reads zeros
    f.size = size;
    f.shadow.resize(size);
    record({fault_model::OpKind::SetSize, f.id, {}, {}, 0, size, {}});
  }
};

}  // namespace iolab::io
