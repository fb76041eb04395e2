#include "files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <climits>
#include <unistd.h>

#include <vector>

#include "iolab/error.h"
#include "iolab/io/buffer.h"
#include "iolab/units.h"
#include "io/posix.h"

namespace iolab::commitlog::detail {

namespace posix = io::posix;

MappedRegion& MappedRegion::operator=(MappedRegion&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    path_ = std::move(o.path_);
  }
  return *this;
}

MappedRegion::~MappedRegion() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void MappedRegion::sync(std::uint64_t offset, std::uint64_t length) {
  if (data_ == nullptr || length == 0) return;
  std::uint64_t start = offset / io::kPageSize * io::kPageSize;
  std::uint64_t end = std::min<std::uint64_t>(offset + length, size_);
  if (end <= start) return;
  if (posix::retry_eintr([&] { return ::msync(data_ + start, end - start, MS_SYNC); }) != 0)
    posix::fail("msync", path_);
}

bool MappedRegion::lock(std::string& why) noexcept {
  if (::mlock(data_, size_) == 0) return true;
  why = std::string("mlock: ") + std::strerror(errno);
  return false;
}

void MappedRegion::advise_will_need() noexcept { ::madvise(data_, size_, MADV_WILLNEED); }

namespace {

class PosixLogFile final : public LogFile {
 public:
  PosixLogFile(posix::Fd fd, std::filesystem::path path) : LogFile(std::move(path)), fd_(std::move(fd)) {}

  void write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    posix::pwrite_full(fd_.get(), data, offset, path(), counters_);
  }

  void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) override {
    write_pieces(pieces, "pwritev", [&](const iovec* iov, int n, std::uint64_t done) {
      return ::pwritev(fd_.get(), iov, n, static_cast<off_t>(offset + done));
    });
  }

  void seek_and_write(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) override {
    seek(offset);
    write_pieces(pieces, "writev", [&](const iovec* iov, int n, std::uint64_t) { return ::writev(fd_.get(), iov, n); });
  }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    return posix::pread_full(fd_.get(), dst, offset, path(), counters_);
  }

  std::size_t seek_and_read(std::uint64_t offset, std::span<std::byte> dst) override {
    seek(offset);
    return posix::read_full(fd_.get(), dst, path(), counters_);
  }

  void sync_data() override { posix::sync_fd(fd_.get(), io::Durability::Fdatasync, path(), counters_); }

  void truncate(std::uint64_t size) override {
    ++counters_.calls;
    if (posix::retry_eintr([&] { return ::ftruncate(fd_.get(), static_cast<off_t>(size)); }) != 0)
      posix::fail("ftruncate", path());
  }

  void allocate(std::uint64_t size) override {
    if (size == 0) return;
    ++counters_.calls;
    int err = 0;
    if (posix::retry_eintr([&] { return ::fallocate(fd_.get(), 0, 0, static_cast<off_t>(size)); }) != 0) {
      err = errno;
      if (err == EOPNOTSUPP) err = ::posix_fallocate(fd_.get(), 0, static_cast<off_t>(size));
    }
    if (err != 0)
      throw Error("fallocate", path().string(),
                  std::string(std::strerror(err)) + " (allocating " + format_bytes(static_cast<double>(size)) + ")",
                  err);
  }

  std::uint64_t size() override { return posix::file_size(fd_.get(), path()); }

  MappedRegion map(std::size_t size, bool writable) override {
    if (size == 0) return {};
    int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd_.get(), 0);
    if (p == MAP_FAILED) posix::fail("mmap", path());
    return MappedRegion(static_cast<std::byte*>(p), size, path());
  }

  void drop_cache() override {
    sync_data();
    ++counters_.calls;
    int err = ::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_DONTNEED);
    if (err != 0) posix::fail("posix_fadvise", path(), err);
  }

  double resident_fraction() override {
    std::uint64_t bytes = size();
    if (bytes == 0) return 0;
    MappedRegion m = map(bytes, false);
    std::size_t pages = (bytes + io::kPageSize - 1) / io::kPageSize;
    std::vector<unsigned char> in_core(pages);
    if (::mincore(m.data(), bytes, in_core.data()) != 0) posix::fail("mincore", path());
    std::size_t resident = 0;
    for (unsigned char c : in_core) resident += c & 1u;
    return static_cast<double>(resident) / static_cast<double>(pages);
  }

  int native_handle() const noexcept override { return fd_.get(); }

  void close() override { fd_.close(path()); }

 private:
  // Writes every piece through `call` (pwritev or writev), IOV_MAX at a
  // time, completing short writes. A write of nothing is a full disk.
  template <typename Call>
  void write_pieces(std::span<const std::span<const std::byte>> pieces, const char* op, Call&& call) {
    thread_local std::vector<iovec> iov;
    iov.clear();
    for (auto p : pieces)
      if (!p.empty()) iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
    std::size_t next = 0;
    std::uint64_t done = 0;
    while (next < iov.size()) {
      int n = static_cast<int>(std::min<std::size_t>(iov.size() - next, IOV_MAX));
      ssize_t r = posix::retry_eintr([&] { return call(iov.data() + next, n, done); });
      ++counters_.calls;
      if (r < 0) posix::fail(op, path());
      if (r == 0) posix::fail(op, path(), ENOSPC);
      auto left = static_cast<std::size_t>(r);
      done += left;
      counters_.bytes_written += left;
      while (left > 0) {
        if (left >= iov[next].iov_len) {
          left -= iov[next].iov_len;
          ++next;
        } else {
          iov[next].iov_base = static_cast<std::byte*>(iov[next].iov_base) + left;
          iov[next].iov_len -= left;
          left = 0;
        }
      }
    }
  }

  void seek(std::uint64_t offset) {
    ++counters_.calls;
    if (::lseek(fd_.get(), static_cast<off_t>(offset), SEEK_SET) < 0) posix::fail("lseek", path());
  }

  posix::Fd fd_;
};

class PosixLogFs final : public LogFs {
 public:
  std::unique_ptr<LogFile> create(const std::filesystem::path& path) override {
    int fd = posix::retry_eintr(
        [&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); });
    if (fd < 0) posix::fail("create", path);
    return std::make_unique<PosixLogFile>(posix::Fd(fd), path);
  }

  std::unique_ptr<LogFile> open(const std::filesystem::path& path, bool writable) override {
    return std::make_unique<PosixLogFile>(
        posix::open_existing(path, writable ? io::Access::ReadWrite : io::Access::Read), path);
  }

  bool make_dir(const std::filesystem::path& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0) return true;
    int err = errno;
    struct stat st {};
    if (err == EEXIST && ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return false;
    if (err == EEXIST) throw Error("mkdir", dir.string(), "exists and is not a directory", err);
    posix::fail("mkdir", dir, err);
  }

  bool exists(const std::filesystem::path& path) override {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
  }

  bool is_directory(const std::filesystem::path& path) override {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  std::vector<std::string> list(const std::filesystem::path& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) posix::fail("opendir", dir);
    std::vector<std::string> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) posix::fail("readdir", dir, err);
    std::sort(names.begin(), names.end());
    return names;
  }

  void remove(const std::filesystem::path& path) override {
    if (::unlink(path.c_str()) != 0) posix::fail("unlink", path);
  }

  void remove_dir(const std::filesystem::path& dir) override {
    if (::rmdir(dir.c_str()) != 0) posix::fail("rmdir", dir);
  }

  void sync_dir(const std::filesystem::path& dir) override {
    int fd = posix::retry_eintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW); });
    if (fd < 0) posix::fail("open directory", dir);
    posix::Fd owned(fd);
    io::IoCounters ignored;
    posix::sync_fd(fd, io::Durability::Fsync, dir, ignored);
    owned.close(dir);
  }
};

}  // namespace

LogFs& posix_fs() {
  static PosixLogFs fs;
  return fs;
}

}  // namespace iolab::commitlog::detail
