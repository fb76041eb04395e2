#include "iolab/io/syscall.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

namespace iolab::io::sys {

namespace detail {
std::atomic<CallInjector*> g_injector{nullptr};
}  // namespace detail

ScopedInjector::ScopedInjector(CallInjector& injector)
    : previous_(detail::g_injector.exchange(&injector)) {}
ScopedInjector::~ScopedInjector() { detail::g_injector.store(previous_); }

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
  int injected = injected_error("close");
  // Linux closes the descriptor even when close() fails with EINTR: do not
  // retry, and do not report it.
  int r = ::close(fd);
  if (injected != 0) fail("close", path, injected);
  if (r != 0 && errno != EINTR) fail("close", path);
}

Fd open(const std::filesystem::path& path, int flags, mode_t mode) {
  flags |= O_CLOEXEC | O_NOFOLLOW;
  int fd = retry("open", [&] { return ::open(path.c_str(), flags, mode); });
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) throw Error("open", path.string(), "is a symbolic link; iolab does not follow links", err);
    fail("open", path, err);
  }
  return Fd(fd);
}

void require_regular(int fd, const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("fstat", path);
  if (!S_ISREG(st.st_mode)) throw Error(std::string(what), path.string(), "not a regular file", EINVAL);
}

Fd open_existing(const std::filesystem::path& path, Access access, int extra_flags) {
  int flags = (access == Access::Read ? O_RDONLY : O_RDWR) | extra_flags;
  Fd owned;
  try {
    owned = open(path, flags);
  } catch (const Error& e) {
    if (e.error_number() == EINVAL && (extra_flags & O_DIRECT) != 0) {
      // EINVAL from O_DIRECT hides the real cause: a directory, a missing
      // file behind it... Open without O_DIRECT to tell them apart.
      Fd plain = open_existing(path, access, extra_flags & ~O_DIRECT);  // throws the real cause
      throw Error("open O_DIRECT", path.string(), "the filesystem refuses O_DIRECT", EINVAL);
    }
    throw;
  }
  require_regular(owned.get(), path);
  return owned;
}

namespace {

// The loop every full transfer shares: call(done, len) moves at most `len`
// bytes, `done` bytes in. A zero-byte read is end of file; a zero-byte
// write is ENOSPC. `granularity` (O_DIRECT reads: the offset alignment): a
// read that leaves the position off a multiple of it stopped at end of
// file, and a retry from there would be refused.
template <typename Call>
std::size_t transfer(std::string_view name, bool write, std::size_t size, const std::filesystem::path& path,
                     IoCounters& counters, Call call, std::uint64_t offset = 0, std::size_t granularity = 1) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = retry(name, size - done, [&](std::size_t len) { return call(done, len); });
    ++counters.calls;
    if (n < 0) fail(name, path);
    if (n == 0) {
      if (write) fail(name, path, ENOSPC);
      break;  // end of file
    }
    done += static_cast<std::size_t>(n);
    if (granularity > 1 && (offset + done) % granularity != 0) break;
  }
  (write ? counters.bytes_written : counters.bytes_read) += done;
  return done;
}

}  // namespace

std::size_t pread_full(int fd, std::span<std::byte> dst, std::uint64_t offset,
                       const std::filesystem::path& path, IoCounters& counters, std::size_t granularity) {
  return transfer(
      "pread", false, dst.size(), path, counters,
      [&](std::size_t done, std::size_t len) {
        return ::pread(fd, dst.data() + done, len, static_cast<off_t>(offset + done));
      },
      offset, granularity);
}

void pwrite_full(int fd, std::span<const std::byte> src, std::uint64_t offset,
                 const std::filesystem::path& path, IoCounters& counters) {
  transfer("pwrite", true, src.size(), path, counters, [&](std::size_t done, std::size_t len) {
    return ::pwrite(fd, src.data() + done, len, static_cast<off_t>(offset + done));
  });
}

std::size_t read_full(int fd, std::span<std::byte> dst, const std::filesystem::path& path,
                      IoCounters& counters) {
  return transfer("read", false, dst.size(), path, counters,
                  [&](std::size_t done, std::size_t len) { return ::read(fd, dst.data() + done, len); });
}

void write_full(int fd, std::span<const std::byte> src, const std::filesystem::path& path,
                IoCounters& counters) {
  transfer("write", true, src.size(), path, counters,
           [&](std::size_t done, std::size_t len) { return ::write(fd, src.data() + done, len); });
}

void pwritev_full(int fd, std::span<const std::span<const std::byte>> parts, std::uint64_t offset,
                  const std::filesystem::path& path, IoCounters& counters) {
  // A few parts (the common case: a header and its data) need no allocation.
  constexpr std::size_t kOnStack = 8;
  iovec on_stack[kOnStack];
  std::vector<iovec> on_heap;
  const std::size_t max_iov = std::min<std::size_t>(parts.size(), IOV_MAX);
  if (max_iov > kOnStack) on_heap.resize(max_iov);
  iovec* const iov = max_iov > kOnStack ? on_heap.data() : on_stack;
  std::size_t part = 0, skip = 0;  // the first byte not yet written: parts[part][skip]
  std::uint64_t at = offset;
  while (part < parts.size()) {
    if (parts[part].size() == skip) {
      ++part;
      skip = 0;
      continue;
    }
    std::size_t count = 0, total = 0;
    for (std::size_t i = part; i < parts.size() && count < max_iov; ++i) {
      std::size_t from = i == part ? skip : 0;
      if (parts[i].size() == from) continue;
      iov[count++] = {const_cast<std::byte*>(parts[i].data()) + from, parts[i].size() - from};
      total += parts[i].size() - from;
    }
    ssize_t n = retry("pwritev", total, [&](std::size_t len) {
      if (len == total) return ::pwritev(fd, iov, static_cast<int>(count), static_cast<off_t>(at));
      // Shortened by the injector: the first `len` bytes, as a short pwritev would.
      std::size_t keep = 0, left = len;
      while (left > iov[keep].iov_len) left -= iov[keep++].iov_len;
      std::vector<iovec> cut(iov, iov + keep);
      cut.push_back({iov[keep].iov_base, left});
      return ::pwritev(fd, cut.data(), static_cast<int>(cut.size()), static_cast<off_t>(at));
    });
    ++counters.calls;
    if (n < 0) fail("pwritev", path);
    if (n == 0) fail("pwritev", path, ENOSPC);
    counters.bytes_written += static_cast<std::uint64_t>(n);
    at += static_cast<std::uint64_t>(n);
    // Advance (part, skip) by n bytes.
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      std::size_t avail = parts[part].size() - skip;
      if (left < avail) {
        skip += left;
        left = 0;
      } else {
        left -= avail;
        ++part;
        skip = 0;
      }
    }
  }
}

void seek(int fd, std::uint64_t offset, const std::filesystem::path& path, IoCounters& counters) {
  ++counters.calls;
  if (retry("lseek", [&] { return ::lseek(fd, static_cast<off_t>(offset), SEEK_SET); }) < 0) fail("lseek", path);
}

bool fd_supports(Durability d) {
  return d == Durability::None || d == Durability::Flush || d == Durability::SyncFileRange ||
         d == Durability::Fdatasync || d == Durability::Fsync;
}

void sync_fd(int fd, Durability d, const std::filesystem::path& path, IoCounters& counters) {
  switch (d) {
    case Durability::None:
    case Durability::Flush:
      return;  // nothing buffered at fd level
    case Durability::Fdatasync:
      ++counters.calls;
      if (retry("fdatasync", [&] { return ::fdatasync(fd); }) != 0) fail("fdatasync", path);
      return;
    case Durability::Fsync:
      ++counters.calls;
      if (retry("fsync", [&] { return ::fsync(fd); }) != 0) fail("fsync", path);
      return;
    case Durability::SyncFileRange:
      ++counters.calls;
      if (retry("sync_file_range", [&] {
            return ::sync_file_range(fd, 0, 0,
                                     SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
          }) != 0)
        fail("sync_file_range", path);
      return;
    case Durability::MsyncSync:
      break;
  }
  unsupported(d, "this method", path);
}

void sync_range(int fd, std::uint64_t offset, std::uint64_t length, const std::filesystem::path& path,
                IoCounters& counters) {
  ++counters.calls;
  if (retry("sync_file_range", [&] {
        return ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                                 SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      }) != 0)
    fail("sync_file_range", path);
}

void unsupported(Durability d, std::string_view method, const std::filesystem::path& path) {
  throw Error(std::string(to_string(d)), path.string(),
              std::string(method) + " does not support this durability call", EOPNOTSUPP);
}

std::uint64_t file_size(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (retry("fstat", [&] { return ::fstat(fd, &st); }) != 0) fail("fstat", path);
  return static_cast<std::uint64_t>(st.st_size);
}

void truncate(int fd, std::uint64_t size, const std::filesystem::path& path, IoCounters& counters) {
  ++counters.calls;
  if (retry("ftruncate", [&] { return ::ftruncate(fd, static_cast<off_t>(size)); }) != 0) fail("ftruncate", path);
}

void allocate(int fd, std::uint64_t offset, std::uint64_t length, const std::filesystem::path& path,
              IoCounters& counters) {
  if (length == 0) return;
  ++counters.calls;
  int r = retry("fallocate", [&] {
    return ::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(length));
  });
  if (r == 0) return;
  int err = errno;
  // Filesystems without fallocate: posix_fallocate writes zeros to allocate.
  if (err == EOPNOTSUPP) {
    ++counters.calls;
    err = ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(length));
  }
  if (err != 0)
    throw Error("fallocate", path.string(),
                std::string(std::strerror(err)) + " (allocating " + std::to_string(length) + " bytes at offset " +
                    std::to_string(offset) + ")",
                err);
}

void sync_dir(const std::filesystem::path& dir) {
  std::filesystem::path d = dir.empty() ? std::filesystem::path(".") : dir;
  Fd fd = open(d, O_RDONLY | O_DIRECTORY);
  if (retry("fsync", [&] { return ::fsync(fd.get()); }) != 0) fail("fsync directory", d);
  fd.close(d);
}

void rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (retry("rename", [&] { return ::rename(from.c_str(), to.c_str()); }) != 0)
    fail("rename", from.string() + " -> " + to.string());
}

void unlink(const std::filesystem::path& path) {
  if (retry("unlink", [&] { return ::unlink(path.c_str()); }) != 0) fail("remove", path);
}

void mkdir(const std::filesystem::path& path, mode_t mode) {
  if (retry("mkdir", [&] { return ::mkdir(path.c_str(), mode); }) != 0) fail("create directory", path);
}

void rmdir(const std::filesystem::path& path) {
  if (retry("rmdir", [&] { return ::rmdir(path.c_str()); }) != 0) fail("remove directory", path);
}

std::vector<std::string> list_dir(const std::filesystem::path& dir) {
  std::filesystem::path d = dir.empty() ? std::filesystem::path(".") : dir;
  Fd fd = open(d, O_RDONLY | O_DIRECTORY);
  DIR* stream = ::fdopendir(fd.get());
  if (stream == nullptr) fail("list directory", d);
  fd.release();  // the DIR owns it now
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(stream)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  int err = errno;
  ::closedir(stream);
  if (err != 0) fail("list directory", d, err);
  std::sort(names.begin(), names.end());
  return names;
}

std::byte* map(int fd, std::uint64_t offset, std::size_t length, int prot, const std::filesystem::path& path,
               IoCounters& counters) {
  ++counters.calls;
  if (int err = injected_error("mmap"); err != 0) fail("mmap", path, err);
  void* p = ::mmap(nullptr, length, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) fail("mmap", path);
  return static_cast<std::byte*>(p);
}

std::byte* remap(std::byte* addr, std::size_t old_length, std::size_t new_length, const std::filesystem::path& path,
                 IoCounters& counters) {
  ++counters.calls;
  if (int err = injected_error("mremap"); err != 0) fail("mremap", path, err);
  void* p = ::mremap(addr, old_length, new_length, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) fail("mremap", path);
  return static_cast<std::byte*>(p);
}

void unmap(std::byte* addr, std::size_t length, const std::filesystem::path& path) {
  if (::munmap(addr, length) != 0) fail("munmap", path);
}

void msync(std::byte* addr, std::size_t length, const std::filesystem::path& path, IoCounters& counters) {
  ++counters.calls;
  if (retry("msync", [&] { return ::msync(addr, length, MS_SYNC); }) != 0) fail("msync", path);
}

}  // namespace iolab::io::sys
