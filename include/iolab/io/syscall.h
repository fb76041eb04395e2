// One way to make a system call on a file.
//
// EINTR is retried here and nowhere else (retry() below is the tree's one
// EINTR loop); short transfers are completed here; every failure is an Error
// naming the call and the path ("pwrite /x/journal: No space left on
// device"). Every call is shown first to the test-only injector
// (call_injection.h), so a test can fail any call the helper makes.
//
// Thread safety: the functions keep no state; several threads may use them
// on one descriptor as the kernel allows (positional calls at disjoint
// ranges, syncs concurrent with writes).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/io/call_injection.h"
#include "iolab/io/file.h"

namespace iolab::io::sys {

// Calls f(length) until it does not fail with EINTR, after asking the
// injector what this call should do (it may shrink `length` or fail the call
// with an errno value without making it). f returns -1 with errno set on
// failure, like the system calls it wraps. `length` is the transfer asked
// for (0 for calls that move no data).
template <typename F>
auto retry(std::string_view call, std::size_t length, F&& f) -> decltype(f(length)) {
  for (;;) {
    CallInjector* injector = detail::g_injector.load(std::memory_order_relaxed);
    decltype(f(length)) r;
    if (injector == nullptr) {
      r = f(length);
    } else {
      CallInjector::Decision d = injector->on_call(call, length);
      if (d.error != 0) {
        errno = d.error;
        r = -1;
      } else {
        r = f(d.length);
      }
    }
    if (!(r == -1 && errno == EINTR)) return r;
  }
}
// A call that moves no data: f().
template <typename F>
auto retry(std::string_view call, F&& f) -> decltype(f()) {
  return retry(call, 0, [&](std::size_t) { return f(); });
}

// For calls that are not retried (mmap, mremap, close): the errno value
// the injector wants this call to fail with, or 0. EINTR does not apply to
// them (mmap cannot be interrupted; close's EINTR is not an error).
inline int injected_error(std::string_view call) {
  CallInjector* injector = detail::g_injector.load(std::memory_order_relaxed);
  int err = injector == nullptr ? 0 : injector->on_call(call, 0).error;
  return err == EINTR ? 0 : err;
}

[[noreturn]] inline void fail(std::string_view call, const std::filesystem::path& path, int err = errno) {
  throw Error(std::string(call), path.string(), err);
}

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  ~Fd();
  int get() const noexcept { return fd_; }
  int release() noexcept {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  // close(2) with its error reported (a failed close can lose written data).
  // Not retried on EINTR: Linux has closed the descriptor anyway.
  void close(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC | O_NOFOLLOW added: a symlink is refused with a
// message saying so. With O_CREAT, `mode` applies. Does not check the type.
Fd open(const std::filesystem::path& path, int flags, mode_t mode = 0644);
// Opens an existing regular file without following a symlink or creating.
// extra_flags: e.g. O_DIRECT (whose EINVAL is told apart from other causes).
Fd open_existing(const std::filesystem::path& path, Access access, int extra_flags = 0);
// Throws unless `fd` is a regular file (what = the operation to name).
void require_regular(int fd, const std::filesystem::path& path, std::string_view what = "open");

// pread until `dst` is full or end of file; returns the bytes read.
// `granularity` (O_DIRECT: the offset alignment): a read that leaves the
// position off a multiple of it stopped at end of file, and a retry from
// there would be refused, so it ends the loop.
std::size_t pread_full(int fd, std::span<std::byte> dst, std::uint64_t offset,
                       const std::filesystem::path& path, IoCounters& counters, std::size_t granularity = 1);
// pwrite all of `src` or throw (a zero-byte write is reported as ENOSPC).
void pwrite_full(int fd, std::span<const std::byte> src, std::uint64_t offset,
                 const std::filesystem::path& path, IoCounters& counters);
// pwritev all of `parts` (in order, contiguous from `offset`) or throw:
// one call when the kernel takes it all, the rest completed after a short one.
void pwritev_full(int fd, std::span<const std::span<const std::byte>> parts, std::uint64_t offset,
                  const std::filesystem::path& path, IoCounters& counters);
// read(2)/write(2) at the current position, completing short transfers.
std::size_t read_full(int fd, std::span<std::byte> dst, const std::filesystem::path& path,
                      IoCounters& counters);
void write_full(int fd, std::span<const std::byte> src, const std::filesystem::path& path,
                IoCounters& counters);
// lseek(SEEK_SET).
void seek(int fd, std::uint64_t offset, const std::filesystem::path& path, IoCounters& counters);

// The fd-level durability calls (Fdatasync, Fsync, SyncFileRange; None and
// Flush do nothing at fd level). Other values throw EOPNOTSUPP.
void sync_fd(int fd, Durability d, const std::filesystem::path& path, IoCounters& counters);
bool fd_supports(Durability d);
// sync_file_range(WAIT_BEFORE | WRITE | WAIT_AFTER) of [offset, offset + length):
// writes back that range's dirty pages and waits (no metadata, no device flush).
void sync_range(int fd, std::uint64_t offset, std::uint64_t length, const std::filesystem::path& path,
                IoCounters& counters);
// Throws EOPNOTSUPP for a durability a method does not support.
[[noreturn]] void unsupported(Durability d, std::string_view method, const std::filesystem::path& path);

std::uint64_t file_size(int fd, const std::filesystem::path& path);
void truncate(int fd, std::uint64_t size, const std::filesystem::path& path, IoCounters& counters);
// Allocates blocks for [offset, offset + length) (the size grows to cover
// it): fallocate, or posix_fallocate where the filesystem lacks it. A full
// disk is an Error (ENOSPC) here rather than a SIGBUS later in a mapping.
void allocate(int fd, std::uint64_t offset, std::uint64_t length, const std::filesystem::path& path,
              IoCounters& counters);

// fsync of a directory: makes the creates, renames and removes in it durable.
void sync_dir(const std::filesystem::path& dir);
void rename(const std::filesystem::path& from, const std::filesystem::path& to);
void unlink(const std::filesystem::path& path);
void mkdir(const std::filesystem::path& path, mode_t mode = 0755);
void rmdir(const std::filesystem::path& path);
// Names in `dir` (not "." or ".."), sorted.
std::vector<std::string> list_dir(const std::filesystem::path& dir);

// Mappings. prot: PROT_READ [| PROT_WRITE]; shared.
std::byte* map(int fd, std::uint64_t offset, std::size_t length, int prot, const std::filesystem::path& path,
               IoCounters& counters);
std::byte* remap(std::byte* addr, std::size_t old_length, std::size_t new_length, const std::filesystem::path& path,
                 IoCounters& counters);
void unmap(std::byte* addr, std::size_t length, const std::filesystem::path& path);
// msync(MS_SYNC) of [addr, addr + length); addr must be page-aligned.
void msync(std::byte* addr, std::size_t length, const std::filesystem::path& path, IoCounters& counters);

}  // namespace iolab::io::sys
