// Env::posix(): the real file system, every call through io/syscall.h.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "iolab/io/buffer.h"
#include "iolab/io/env.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

// Counters several threads may add to (a flusher syncs while a writer writes).
class SharedCounters {
 public:
  void add(const IoCounters& c) noexcept {
    calls_.fetch_add(c.calls, std::memory_order_relaxed);
    read_.fetch_add(c.bytes_read, std::memory_order_relaxed);
    written_.fetch_add(c.bytes_written, std::memory_order_relaxed);
  }
  IoCounters get() const noexcept {
    return {calls_.load(std::memory_order_relaxed), read_.load(std::memory_order_relaxed),
            written_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<std::uint64_t> calls_{0}, read_{0}, written_{0};
};

// Runs f(counters) with fresh counters and adds them to `into`, also when f throws.
template <typename F>
auto counted(SharedCounters& into, F&& f) {
  struct Add {
    SharedCounters& into;
    IoCounters c;
    ~Add() { into.add(c); }
  } add{into, {}};
  return f(add.c);
}

class PosixRegion final : public MappedRegion {
 public:
  PosixRegion(std::byte* data, std::size_t size, std::uint64_t offset, std::filesystem::path path,
              std::shared_ptr<SharedCounters> counters)
      : MappedRegion(data, size, offset), path_(std::move(path)), counters_(std::move(counters)) {}
  ~PosixRegion() override {
    if (data_ != nullptr) ::munmap(data_, size_);
  }

  void resize(std::size_t length) override {
    data_ = counted(*counters_, [&](IoCounters& c) { return sys::remap(data_, size_, length, path_, c); });
    size_ = length;
  }
  void sync(std::size_t offset, std::size_t length) override {
    if (length == 0) return;
    std::size_t lo = offset / kPageSize * kPageSize;
    counted(*counters_, [&](IoCounters& c) { sys::msync(data_ + lo, offset + length - lo, path_, c); });
  }
  void prefault(std::size_t offset, std::size_t length) noexcept override {
#ifdef MADV_POPULATE_WRITE
    std::size_t lo = offset / kPageSize * kPageSize;
    // Only a hint: older kernels say EINVAL, and stores fault pages in as usual.
    (void)::madvise(data_ + lo, offset + length - lo, MADV_POPULATE_WRITE);
#else
    (void)offset;
    (void)length;
#endif
  }
  void unmap() override {
    if (data_ == nullptr) return;
    std::byte* p = data_;
    data_ = nullptr;
    sys::unmap(p, size_, path_);
  }

 private:
  std::filesystem::path path_;
  std::shared_ptr<SharedCounters> counters_;  // the file's: a region may outlive its file
};

class PosixFile final : public EnvFile {
 public:
  PosixFile(const std::filesystem::path& path, sys::Fd fd) : EnvFile(path), fd_(std::move(fd)) {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    return counted(*counters_, [&](IoCounters& c) { return sys::pread_full(fd_.get(), dst, offset, path(), c); });
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    counted(*counters_, [&](IoCounters& c) { sys::pwrite_full(fd_.get(), src, offset, path(), c); });
  }
  void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> parts) override {
    counted(*counters_, [&](IoCounters& c) { sys::pwritev_full(fd_.get(), parts, offset, path(), c); });
  }
  void seek(std::uint64_t offset) override {
    counted(*counters_, [&](IoCounters& c) { sys::seek(fd_.get(), offset, path(), c); });
  }
  std::size_t read(std::span<std::byte> dst) override {
    return counted(*counters_, [&](IoCounters& c) { return sys::read_full(fd_.get(), dst, path(), c); });
  }
  void write(std::span<const std::byte> src) override {
    counted(*counters_, [&](IoCounters& c) { sys::write_full(fd_.get(), src, path(), c); });
  }
  std::uint64_t size() override { return sys::file_size(fd_.get(), path()); }
  void truncate(std::uint64_t size) override {
    counted(*counters_, [&](IoCounters& c) { sys::truncate(fd_.get(), size, path(), c); });
  }
  void allocate(std::uint64_t offset, std::uint64_t length) override {
    counted(*counters_, [&](IoCounters& c) { sys::allocate(fd_.get(), offset, length, path(), c); });
  }
  void sync(Durability d) override {
    if (d != Durability::None && d != Durability::Flush && d != Durability::Fdatasync && d != Durability::Fsync)
      sys::unsupported(d, "a file of the env", path());
    counted(*counters_, [&](IoCounters& c) { sys::sync_fd(fd_.get(), d, path(), c); });
  }
  std::unique_ptr<MappedRegion> map(std::uint64_t offset, std::size_t length, Access access) override {
    if (offset % kPageSize != 0)
      throw Error("mmap", path().string(), "offset " + std::to_string(offset) + " is not a multiple of the page size",
                  EINVAL);
    int prot = access == Access::ReadWrite ? PROT_READ | PROT_WRITE : PROT_READ;
    std::byte* p = counted(*counters_, [&](IoCounters& c) { return sys::map(fd_.get(), offset, length, prot, path(), c); });
    return std::make_unique<PosixRegion>(p, length, offset, path(), counters_);
  }
  void close() override { fd_.close(path()); }
  IoCounters counters() const override { return counters_->get(); }

 private:
  sys::Fd fd_;
  // Shared with the regions mapped from this file, which may outlive it.
  std::shared_ptr<SharedCounters> counters_ = std::make_shared<SharedCounters>();
};

class PosixEnv final : public Env {
 public:
  std::unique_ptr<EnvFile> open(const std::filesystem::path& path, OpenMode mode, Access access) override {
    int flags = access == Access::Read ? O_RDONLY : O_RDWR;
    if (mode == OpenMode::CreateNew) flags |= O_CREAT | O_EXCL;
    if (mode == OpenMode::OpenOrCreate) flags |= O_CREAT;
    sys::Fd fd = sys::open(path, flags);
    sys::require_regular(fd.get(), path);
    return std::make_unique<PosixFile>(path, std::move(fd));
  }
  bool exists(const std::filesystem::path& path) override {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    sys::fail("stat", path);
  }
  void rename(const std::filesystem::path& from, const std::filesystem::path& to) override { sys::rename(from, to); }
  void remove(const std::filesystem::path& path) override { sys::unlink(path); }
  void create_dir(const std::filesystem::path& dir) override { sys::mkdir(dir); }
  void remove_dir(const std::filesystem::path& dir) override { sys::rmdir(dir); }
  std::vector<std::string> list_dir(const std::filesystem::path& dir) override { return sys::list_dir(dir); }
  void sync_dir(const std::filesystem::path& dir) override { sys::sync_dir(dir); }
};

}  // namespace

Env& Env::posix() {
  static PosixEnv env;
  return env;
}

}  // namespace iolab::io
