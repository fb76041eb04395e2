// Internal: the one seam through which the commit log touches files.
//
// Every file operation of the log, its indexes, its recovery and its readers
// goes through LogFs / LogFile, so the whole log can run on another
// implementation (a fault-injecting one in the power-loss tests). posix_fs()
// is the real one.
//
// Thread safety: a LogFile may be used from several threads at once as long
// as they touch different byte ranges (a flusher syncs while the appender
// writes further on, as RocketMQ's flush service does); seek_and_write is the
// exception: it moves the file position and needs the caller's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iolab/io/file.h"

namespace iolab::commitlog::detail {

// A shared mapping of a file (read-only or read-write); unmapped on destruction.
class MappedRegion {
 public:
  MappedRegion() = default;
  MappedRegion(std::byte* data, std::size_t size, std::filesystem::path path)
      : data_(data), size_(size), path_(std::move(path)) {}
  MappedRegion(MappedRegion&& o) noexcept { *this = std::move(o); }
  MappedRegion& operator=(MappedRegion&& o) noexcept;
  ~MappedRegion();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return data_ == nullptr; }

  // msync(MS_SYNC) of the pages holding [offset, offset + length): durable
  // like fdatasync for those bytes (MS_ASYNC would promise nothing).
  void sync(std::uint64_t offset, std::uint64_t length);
  // mlock; false (and why) when the kernel refuses, e.g. RLIMIT_MEMLOCK.
  bool lock(std::string& why) noexcept;
  void advise_will_need() noexcept;

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

class LogFile {
 public:
  virtual ~LogFile() = default;
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // pwrite all of `data` at `offset` (the FileChannel-style write).
  virtual void write_at(std::uint64_t offset, std::span<const std::byte> data) = 0;
  // The pieces back to back from `offset`, in as few pwritev(2) calls as it takes.
  virtual void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) = 0;
  // lseek to `offset`, then writev(2) of the pieces (RandomAccessFile-style).
  // REQUIRES: the caller's lock (it moves the file position).
  virtual void seek_and_write(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) = 0;
  // Reads up to dst.size() bytes; fewer only at end of file.
  virtual std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) = 0;
  // read(2) at the file position after an lseek (RandomAccessFile-style reads).
  virtual std::size_t seek_and_read(std::uint64_t offset, std::span<std::byte> dst) = 0;
  virtual void sync_data() = 0;  // fdatasync
  virtual void truncate(std::uint64_t size) = 0;
  // Allocates blocks for [0, size) (the size grows to at least `size`), so
  // stores through a mapping never meet a full disk (SIGBUS).
  virtual void allocate(std::uint64_t size) = 0;
  virtual std::uint64_t size() = 0;
  virtual MappedRegion map(std::size_t size, bool writable) = 0;
  // Cache control for cold reads: write back, then drop the file's pages
  // (fdatasync + posix_fadvise DONTNEED); and the fraction still cached (mincore).
  virtual void drop_cache() = 0;
  virtual double resident_fraction() = 0;
  // The descriptor, for sendfile and fadvise; -1 where there is none.
  virtual int native_handle() const noexcept = 0;
  // Closes, reporting a failed close (it can lose written data). Twice is harmless.
  virtual void close() = 0;

  const std::filesystem::path& path() const noexcept { return path_; }
  // System calls made through this file (data, sync, size changes).
  std::uint64_t calls() const noexcept { return counters_.calls; }

 protected:
  explicit LogFile(std::filesystem::path path) : path_(std::move(path)) {}
  io::IoCounters counters_;

 private:
  std::filesystem::path path_;
};

class LogFs {
 public:
  virtual ~LogFs() = default;
  // A new empty file (O_EXCL, O_NOFOLLOW): fails if anything is there.
  virtual std::unique_ptr<LogFile> create(const std::filesystem::path& path) = 0;
  // An existing regular file, never following a symbolic link.
  virtual std::unique_ptr<LogFile> open(const std::filesystem::path& path, bool writable) = 0;
  // Creates the directory unless it exists (a symbolic link is refused);
  // true when it created it (its name is durable once the parent is synced).
  virtual bool make_dir(const std::filesystem::path& dir) = 0;
  virtual bool exists(const std::filesystem::path& path) = 0;
  // A directory itself (a symbolic link to one is not).
  virtual bool is_directory(const std::filesystem::path& path) = 0;
  // Names of the entries of `dir`, sorted.
  virtual std::vector<std::string> list(const std::filesystem::path& dir) = 0;
  virtual void remove(const std::filesystem::path& path) = 0;
  virtual void remove_dir(const std::filesystem::path& dir) = 0;  // an empty one
  // fsync of the directory: makes created and removed names durable.
  virtual void sync_dir(const std::filesystem::path& dir) = 0;
};

LogFs& posix_fs();

}  // namespace iolab::commitlog::detail
