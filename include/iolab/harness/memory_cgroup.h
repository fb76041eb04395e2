// "Run this measured part in a child under a memory limit": a memory cgroup
// iolab creates for one experiment (cgroup v2 memory.max or v1
// memory.limit_in_bytes, whichever the machine offers), a child process
// placed in it before its work starts, and the group's removal at the end,
// on error and on every signal iolab handles (io/scratch.h). Nothing else
// is changed: no other cgroup, no sysctl, no drop_caches.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "iolab/base/proc.h"

namespace iolab::harness {

enum class CgroupVersion { V1, V2 };
std::string_view to_string(CgroupVersion);  // "v1", "v2"

// The directory under which iolab makes its groups, and its version.
struct CgroupRoot {
  std::filesystem::path dir;
  CgroupVersion version = CgroupVersion::V1;
};
// Where a memory cgroup can be made here, or why not (`root` empty, `why`
// says: no memory controller, v2 without memory for child groups, no right
// to create a group).
struct CgroupPlace {
  std::optional<CgroupRoot> root;
  std::string why;
};
// v2 when the unified hierarchy gives child groups the memory controller
// (its root's cgroup.subtree_control lists it), else v1's memory hierarchy.
CgroupPlace find_memory_cgroup(const proc::CgroupMounts& mounts = proc::cgroup_mounts());

class MemoryCgroup {
 public:
  // Creates <root.dir>/iolab-<pid>-<n> with the limit set. Throws Error
  // naming the file and the cause. A directory that is not a cgroup (tests'
  // fake roots) works too: the control files are then plain files.
  MemoryCgroup(const CgroupRoot& root, std::uint64_t limit_bytes);
  ~MemoryCgroup();  // remove()
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  CgroupVersion version() const noexcept { return version_; }
  std::uint64_t limit_bytes() const noexcept { return limit_; }
  // "v1 /sys/fs/cgroup/memory/iolab-123-0" for records.
  std::string description() const;
  // Moves process `pid` into the group (cgroup.procs).
  void add(pid_t pid);
  // The group's page-cache bytes (memory.stat: "cache" on v1, "file" on v2).
  std::optional<std::uint64_t> page_cache_bytes() const;
  // Removes the group (waits briefly for exiting tasks to leave it).
  // Idempotent and safe from another thread (the signal cleanup's).
  void remove() noexcept;
  bool removed() const;

 private:
  std::filesystem::path path_;
  CgroupVersion version_;
  std::uint64_t limit_;
  mutable std::mutex mutex_;
  bool removed_ = false;
};

// Runs `body` in a child process (fork, no exec) that is in `group` before
// `body` starts, and returns the text `body` returned. Throws Error naming
// the child's failure: an exception in `body` (its message), a signal, an
// exit without a result. A signal that ends iolab meanwhile kills the child
// and removes the group first, then calls `after_signal` (the child's files:
// the parent's scratch directory does not know them). Call it from a
// process with no other threads doing work (the child has only the calling
// thread).
std::string run_in_child(MemoryCgroup& group, const std::function<std::string()>& body,
                         std::function<void()> after_signal = {});

}  // namespace iolab::harness
