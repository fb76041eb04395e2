// Cache control: make a file resident, evict it, and prove which it is
// (mincore over a fresh read-only mapping, which faults nothing in).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "iolab/error.h"
#include "iolab/harness/runner.h"

namespace iolab::harness {
namespace {

class Descriptor {
 public:
  Descriptor(const std::filesystem::path& file, int flags, const char* why) : fd_(::open(file.c_str(), flags | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(why, file.string(), errno);
  }
  ~Descriptor() { ::close(fd_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::uint64_t size_of(int fd, const std::filesystem::path& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("stat", file.string(), errno);
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

double resident_fraction(const std::filesystem::path& file) {
  Descriptor fd(file, O_RDONLY, "measure residency of");
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

void make_warm(const std::filesystem::path& file) {
  Descriptor fd(file, O_RDONLY, "warm");
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (off_t off = 0;;) {
    ssize_t n = ::pread(fd.get(), buf.get(), kChunk, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("warm (read)", file.string(), errno);
    if (n == 0) break;
    off += n;
  }
}

bool can_drop_caches() { return ::geteuid() == 0 && ::access("/proc/sys/vm/drop_caches", W_OK) == 0; }

std::string make_cold(const std::filesystem::path& file, Eviction how) {
  if (how == Eviction::DropCaches) {
    if (!can_drop_caches())
      throw Error("drop caches for", file.string(), "writing /proc/sys/vm/drop_caches needs root", EPERM);
    ::sync();  // drop_caches frees only clean pages
    // "1": the page cache only; dentries and inodes stay, so other work on the machine is spared a metadata refill.
    int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw Error("open", "/proc/sys/vm/drop_caches", errno);
    ssize_t w = ::write(fd, "1", 1);
    int err = errno;
    ::close(fd);
    if (w != 1) throw Error("write", "/proc/sys/vm/drop_caches", err);
    return "drop_caches";
  }
  Descriptor fd(file, O_RDONLY, "evict");
  // DONTNEED drops only clean pages: write dirty ones back first.
  if (::fdatasync(fd.get()) != 0) throw Error("fdatasync", file.string(), errno);
  int r = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (r != 0) throw Error("posix_fadvise(DONTNEED)", file.string(), r);
  return "fadvise";
}

}  // namespace iolab::harness
