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
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "iolab/base/proc.h"

namespace iolab::io {
class InterruptHook;  // io/scratch.h
}

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

// A memory cgroup limit a user gives (`--memory-limit`, shown as `given`):
// throws UsageError when it is below `least` (why: `why_least`), or not
// below this machine's physical memory, where a group's limit never binds
// and nothing would be measured past memory (a typo of 1g as 1t, or 0).
void check_memory_limit(std::uint64_t limit, std::uint64_t least, const std::string& given, std::string_view why_least);

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
  // All the memory charged to the group (memory.usage_in_bytes on v1,
  // memory.current on v2): its page cache, its processes' memory, the
  // kernel's on their behalf.
  std::optional<std::uint64_t> usage_bytes() const;
  // Sets a new limit (the kernel reclaims page cache down to it). Throws Error.
  void set_limit(std::uint64_t bytes);
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

// The child's end of a ChildSession: messages to and from its parent.
class ParentLink {
 public:
  explicit ParentLink(int fd) : fd_(fd) {}
  // The parent's next message; throws Error when the parent is gone.
  std::string receive();
  void send(std::string_view message);

 private:
  int fd_;
};

// A child process (fork, no exec) in `group`, running `body` while its
// parent talks with it: messages both ways (send, receive), then the text
// `body` returns (finish). So a child can do its work in steps the parent
// paces (the decision table's larger-than-memory cell: one round at a
// time, under the parent's budget). The child is in the group before
// `body` starts. A signal that ends iolab meanwhile kills the child and
// removes the group first, then calls `after_signal` (the child's files:
// the parent's scratch directory does not know them). Create it from a
// process with no other threads doing work (the child has only the calling
// thread).
class ChildSession {
 public:
  ChildSession(MemoryCgroup& group, std::function<std::string(ParentLink&)> body, std::function<void()> after_signal = {});
  ~ChildSession();  // kills the child if it still runs, and reaps it
  ChildSession(const ChildSession&) = delete;
  ChildSession& operator=(const ChildSession&) = delete;

  void send(std::string_view message);
  // The child's next message. Throws Error when the child ended instead:
  // an exception in `body` (its message), a signal, an exit, or `body`
  // returning with the parent still waiting for a message.
  std::string receive();
  // Waits for the child to end and returns what `body` returned. Throws
  // Error naming the child's failure: an exception in `body` (its
  // message), a signal, an exit without a result, a message left unread.
  std::string finish();

 private:
  [[noreturn]] void ended(const std::string& why);  // reaps the child, throws its failure
  int reap();
  MemoryCgroup& group_;
  std::function<void()> after_signal_;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;  // waitpid's, once reaped
  std::unique_ptr<io::InterruptHook> hook_;  // kills the child and removes the group on a signal
};

// Runs `body` in a ChildSession that sends no messages and returns the
// text `body` returned (ChildSession::finish says what it throws).
std::string run_in_child(MemoryCgroup& group, const std::function<std::string()>& body,
                         std::function<void()> after_signal = {});

}  // namespace iolab::harness
