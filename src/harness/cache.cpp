// Cache control: make a file resident, evict it, and prove which it is
// (mincore over a fresh read-only mapping, which faults nothing in).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/buffer.h"
#include "iolab/io/syscall.h"

namespace iolab::harness {
namespace {

std::uint64_t size_of(int fd, const std::filesystem::path& file) { return io::sys::file_size(fd, file); }

}  // namespace

double resident_fraction(const std::filesystem::path& file) {
  io::sys::Fd fd = io::sys::open(file, O_RDONLY);
  std::uint64_t size = size_of(fd.get(), file);
  if (size == 0) return 0;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) throw Error("mmap (for mincore)", file.string(), errno);
  long page = ::sysconf(_SC_PAGESIZE);
  std::size_t pages = static_cast<std::size_t>((size + static_cast<std::uint64_t>(page) - 1) / static_cast<std::uint64_t>(page));
  std::vector<unsigned char> vec(pages);
  int r = ::mincore(map, size, vec.data());
  int err = errno;
  ::munmap(map, size);
  if (r != 0) throw Error("mincore", file.string(), err);
  std::size_t resident = 0;
  for (unsigned char v : vec) resident += v & 1;
  return static_cast<double>(resident) / static_cast<double>(pages);
}

void make_warm(const std::filesystem::path& file) { read_into_cache(file, 0, UINT64_MAX); }

std::uint64_t read_into_cache(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t bytes) {
  io::sys::Fd fd = io::sys::open(file, O_RDONLY);
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  io::Buffer chunk(kChunk, io::BufferKind::Heap);
  io::IoCounters unused;
  std::uint64_t read = 0;
  while (read < bytes) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, bytes - read));
    const std::size_t n = io::sys::pread_full(fd.get(), chunk.span().first(want), offset + read, file, unused);
    read += n;
    if (n < want) break;
  }
  return read;
}

void make_warm_from_disk(const std::filesystem::path& file) {
  make_cold(file, results::Eviction::PerFile);
  make_warm(file);
}

bool can_drop_caches() { return ::geteuid() == 0 && ::access("/proc/sys/vm/drop_caches", W_OK) == 0; }

std::string make_cold(const std::filesystem::path& file, results::Eviction how) {
  if (how == results::Eviction::DropCaches) {
    if (!can_drop_caches())
      throw Error("drop caches for", file.string(), "writing /proc/sys/vm/drop_caches needs root", EPERM);
    ::sync();  // drop_caches frees only clean pages
    // "1": the page cache only; dentries and inodes stay, so other work on the machine is spared a metadata refill.
    const std::filesystem::path knob = "/proc/sys/vm/drop_caches";
    io::sys::Fd fd = io::sys::open(knob, O_WRONLY);
    io::IoCounters unused;
    io::sys::write_full(fd.get(), std::as_bytes(std::span("1", 1)), knob, unused);
    fd.close(knob);
    return "drop_caches";
  }
  io::sys::Fd fd = io::sys::open(file, O_RDONLY);
  // DONTNEED drops only clean pages: write dirty ones back first.
  io::IoCounters unused;
  io::sys::sync_fd(fd.get(), io::Durability::Fdatasync, file, unused);
  int r = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (r != 0) throw Error("posix_fadvise(DONTNEED)", file.string(), r);
  return "fadvise";
}

}  // namespace iolab::harness
