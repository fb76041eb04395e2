#include "posix.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace iolab::io::posix {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

void Fd::close(const std::filesystem::path& path) {
  if (fd_ < 0) return;
  int fd = release();
  // Linux closes the descriptor even when close() fails with EINTR: do not retry.
  if (::close(fd) != 0 && errno != EINTR) fail("close", path);
}

Fd open_existing(const std::filesystem::path& path, Access access, int extra_flags) {
  int flags = (access == Access::Read ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW | extra_flags;
  int fd = retry_eintr([&] { return ::open(path.c_str(), flags); });
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) throw Error("open", path.string(), "is a symbolic link; iolab does not follow links", err);
    if (err == EINVAL && (extra_flags & O_DIRECT) != 0) {
      // EINVAL from O_DIRECT hides the real cause: a directory, a missing
      // file behind it... Open without O_DIRECT to tell them apart.
      Fd plain = open_existing(path, access, extra_flags & ~O_DIRECT);  // throws the real cause
      throw Error("open O_DIRECT", path.string(), "the filesystem refuses O_DIRECT", EINVAL);
    }
    fail("open", path, err);
  }
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("fstat", path);
  if (!S_ISREG(st.st_mode)) throw Error("open", path.string(), "not a regular file", EINVAL);
  return owned;
}

std::size_t pread_full(int fd, std::span<std::byte> dst, std::uint64_t offset,
                       const std::filesystem::path& path, IoCounters& counters, std::size_t granularity) {
  std::size_t done = 0;
  while (done < dst.size()) {
    ssize_t n = retry_eintr([&] {
      return ::pread(fd, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
    });
    ++counters.calls;
    if (n < 0) fail("pread", path);
    if (n == 0) break;  // end of file
    done += static_cast<std::size_t>(n);
    if (granularity > 1 && (offset + done) % granularity != 0) break;  // short O_DIRECT read: end of file
  }
  counters.bytes_read += done;
  return done;
}

void pwrite_full(int fd, std::span<const std::byte> src, std::uint64_t offset,
                 const std::filesystem::path& path, IoCounters& counters) {
  std::size_t done = 0;
  while (done < src.size()) {
    ssize_t n = retry_eintr([&] {
      return ::pwrite(fd, src.data() + done, src.size() - done, static_cast<off_t>(offset + done));
    });
    ++counters.calls;
    if (n < 0) fail("pwrite", path);
    if (n == 0) fail("pwrite", path, ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  counters.bytes_written += done;
}

std::size_t read_full(int fd, std::span<std::byte> dst, const std::filesystem::path& path,
                      IoCounters& counters) {
  std::size_t done = 0;
  while (done < dst.size()) {
    ssize_t n = retry_eintr([&] { return ::read(fd, dst.data() + done, dst.size() - done); });
    ++counters.calls;
    if (n < 0) fail("read", path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  counters.bytes_read += done;
  return done;
}

void write_full(int fd, std::span<const std::byte> src, const std::filesystem::path& path,
                IoCounters& counters) {
  std::size_t done = 0;
  while (done < src.size()) {
    ssize_t n = retry_eintr([&] { return ::write(fd, src.data() + done, src.size() - done); });
    ++counters.calls;
    if (n < 0) fail("write", path);
    if (n == 0) fail("write", path, ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  counters.bytes_written += done;
}

bool fd_supports(Durability d) {
  return d == Durability::None || d == Durability::Flush || d == Durability::SyncFileRange ||
         d == Durability::Fdatasync || d == Durability::Fsync;
}

void sync_fd(int fd, Durability d, const std::filesystem::path& path, IoCounters& counters) {
  int r = 0;
  switch (d) {
    case Durability::None:
    case Durability::Flush:
      return;  // nothing buffered at fd level
    case Durability::Fdatasync:
      r = retry_eintr([&] { return ::fdatasync(fd); });
      ++counters.calls;
      if (r != 0) fail("fdatasync", path);
      return;
    case Durability::Fsync:
      r = retry_eintr([&] { return ::fsync(fd); });
      ++counters.calls;
      if (r != 0) fail("fsync", path);
      return;
    case Durability::SyncFileRange:
      r = retry_eintr([&] {
        return ::sync_file_range(fd, 0, 0,
                                 SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                     SYNC_FILE_RANGE_WAIT_AFTER);
      });
      ++counters.calls;
      if (r != 0) fail("sync_file_range", path);
      return;
    case Durability::MsyncSync:
      break;
  }
  unsupported(d, "this method", path);
}

std::uint64_t file_size(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("fstat", path);
  return static_cast<std::uint64_t>(st.st_size);
}

void unsupported(Durability d, std::string_view method, const std::filesystem::path& path) {
  throw Error(std::string(to_string(d)), path.string(),
              std::string(method) + " does not support this durability call", EOPNOTSUPP);
}

}  // namespace iolab::io::posix
