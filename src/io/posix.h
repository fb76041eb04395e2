// Internal: the system-call plumbing shared by every method. EINTR is
// retried here and nowhere else; short transfers are completed here.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <sys/uio.h>

#include "iolab/error.h"
#include "iolab/io/file.h"

namespace iolab::io::posix {

// Calls f() until it does not fail with EINTR.
template <typename F>
auto retry_eintr(F&& f) {
  for (;;) {
    auto r = f();
    if (!(r == -1 && errno == EINTR)) return r;
  }
}

[[noreturn]] inline void fail(const char* op, const std::filesystem::path& path, int err = errno) {
  throw Error(op, path.string(), err);
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
  int release() noexcept { int f = fd_; fd_ = -1; return f; }
  // close(2) with its error reported (a failed close can lose written data).
  void close(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

// Opens an existing regular file without following a symlink or creating.
// extra_flags: e.g. O_DIRECT. Throws Error naming the path and the cause.
Fd open_existing(const std::filesystem::path& path, Access access, int extra_flags = 0);

// pread until `dst` is full or end of file; returns the bytes read.
// `granularity` (O_DIRECT: the offset alignment): a read that leaves the
// position off a multiple of it stopped at end of file, and a retry from
// there would be refused, so it ends the loop.
std::size_t pread_full(int fd, std::span<std::byte> dst, std::uint64_t offset,
                       const std::filesystem::path& path, IoCounters& counters, std::size_t granularity = 1);
// pwrite all of `src` or throw (a zero-byte write is reported as ENOSPC).
void pwrite_full(int fd, std::span<const std::byte> src, std::uint64_t offset,
                 const std::filesystem::path& path, IoCounters& counters);
// read(2)/write(2) at the current position, completing short transfers.
std::size_t read_full(int fd, std::span<std::byte> dst, const std::filesystem::path& path,
                      IoCounters& counters);
void write_full(int fd, std::span<const std::byte> src, const std::filesystem::path& path,
                IoCounters& counters);

// The fd-level durability calls (Fdatasync, Fsync, SyncFileRange). Other
// values are the caller's business; this throws EOPNOTSUPP for them.
void sync_fd(int fd, Durability d, const std::filesystem::path& path, IoCounters& counters);
bool fd_supports(Durability d);

std::uint64_t file_size(int fd, const std::filesystem::path& path);

// Throws EOPNOTSUPP for a durability a method does not support.
[[noreturn]] void unsupported(Durability d, std::string_view method, const std::filesystem::path& path);

}  // namespace iolab::io::posix
