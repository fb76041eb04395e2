// Internal: the commit log's view of the file-system layer (io/env.h).
//
// Every file operation of the log, its indexes, its recovery and its readers
// goes through an io::Env: Env::posix() in production, a FaultEnv in the
// power-loss tests. LogFs and LogFile add what the log needs on top: a
// directory check that never follows a link, gather writes at the file
// position, mlock for warm-up, and, on the real file system only, a
// descriptor for sendfile and cache control (the readers' business, not
// the durability the fault layer checks).
//
// Thread safety: as io::EnvFile's. Syncs may run while another thread writes
// elsewhere in the file (RocketMQ's flush service beside its appender);
// seek_and_write needs the caller's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iolab/io/env.h"
#include "iolab/io/syscall.h"

namespace iolab::commitlog::detail {

// A shared mapping of a file from its start; unmapped on destruction.
class MappedRegion {
 public:
  MappedRegion() = default;
  explicit MappedRegion(std::unique_ptr<io::MappedRegion> region) : region_(std::move(region)) {}

  std::byte* data() const noexcept { return region_ ? region_->data() : nullptr; }
  std::size_t size() const noexcept { return region_ ? region_->size() : 0; }
  bool empty() const noexcept { return region_ == nullptr; }

  // msync(MS_SYNC) of the pages holding [offset, offset + length): durable
  // like fdatasync for those bytes (MS_ASYNC would promise nothing).
  void sync(std::uint64_t offset, std::uint64_t length);
  // Warm-up: fault every page in for writing, mlock, MADV_WILLNEED. Returns
  // why mlock was refused (e.g. RLIMIT_MEMLOCK), or nothing.
  std::string warm(std::size_t from);
  // Faults [offset, offset + length) in for writing, storing nothing (a hint).
  void prefault(std::size_t offset, std::size_t length) noexcept {
    if (region_) region_->prefault(offset, length);
  }

 private:
  std::unique_ptr<io::MappedRegion> region_;
};

class LogFile {
 public:
  LogFile(std::unique_ptr<io::EnvFile> file, bool posix) : file_(std::move(file)), posix_(posix) {}
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // pwrite (the FileChannel-style write).
  void write_at(std::uint64_t offset, std::span<const std::byte> data) { file_->write_at(offset, data); }
  // The pieces back to back from `offset`: pwritev.
  void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> pieces) {
    file_->write_at(offset, pieces);
  }
  // lseek, then one write(2) (RandomAccessFile-style: KahaDB's writer
  // thread writes a batch so). REQUIRES: one writer of the file at a time.
  void seek_and_write(std::uint64_t offset, std::span<const std::byte> data) {
    file_->seek(offset);
    file_->write(data);
  }
  // Up to dst.size() bytes; fewer only at end of file.
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) { return file_->read_at(offset, dst); }
  // lseek + read(2).
  std::size_t seek_and_read(std::uint64_t offset, std::span<std::byte> dst) {
    file_->seek(offset);
    return file_->read(dst);
  }
  void sync_data() { file_->sync(io::Durability::Fdatasync); }
  void truncate(std::uint64_t size) { file_->truncate(size); }
  // Blocks for [0, size): stores through a mapping never meet a full disk.
  void allocate(std::uint64_t size) { file_->allocate(0, size); }
  std::uint64_t size() { return file_->size(); }
  MappedRegion map(std::size_t size, bool writable) {
    if (size == 0) return {};
    return MappedRegion(file_->map(0, size, writable ? io::Access::ReadWrite : io::Access::Read));
  }

  // On the real file system: a descriptor of the file (read-only, opened on
  // first use) for sendfile; -1 elsewhere.
  int native_handle();
  // Cold reads: write back, then drop the file's cached pages (fdatasync +
  // posix_fadvise DONTNEED); and the fraction still cached (mincore). On
  // another file system: nothing to drop, nothing cached.
  void drop_cache();
  double resident_fraction();

  void close() { file_->close(); }
  const std::filesystem::path& path() const noexcept { return file_->path(); }
  // System calls made through this file.
  std::uint64_t calls() const { return file_->counters().calls + fd_calls_.calls; }

 private:
  std::unique_ptr<io::EnvFile> file_;
  bool posix_;
  io::sys::Fd fd_;
  io::IoCounters fd_calls_;
};

class LogFs {
 public:
  explicit LogFs(io::Env& env) : env_(env), posix_(&env == &io::Env::posix()) {}

  // A new empty file: fails if anything is there.
  std::unique_ptr<LogFile> create(const std::filesystem::path& path) {
    return std::make_unique<LogFile>(env_.open(path, io::OpenMode::CreateNew), posix_);
  }
  // An existing file, never following a symbolic link.
  std::unique_ptr<LogFile> open(const std::filesystem::path& path, bool writable) {
    return std::make_unique<LogFile>(
        env_.open(path, io::OpenMode::OpenExisting, writable ? io::Access::ReadWrite : io::Access::Read), posix_);
  }
  // Creates the directory unless it exists; true when it created it (its
  // name is durable once the parent is synced).
  bool make_dir(const std::filesystem::path& dir);
  bool exists(const std::filesystem::path& path) { return env_.exists(path); }
  // A directory itself (a symbolic link to one is not).
  bool is_directory(const std::filesystem::path& path);
  std::vector<std::string> list(const std::filesystem::path& dir) { return env_.list_dir(dir); }
  void remove(const std::filesystem::path& path) { env_.remove(path); }
  void remove_dir(const std::filesystem::path& dir) { env_.remove_dir(dir); }
  // fsync of the directory: makes created and removed names durable.
  void sync_dir(const std::filesystem::path& dir) { env_.sync_dir(dir); }

  io::Env& env() noexcept { return env_; }

 private:
  io::Env& env_;
  bool posix_;
};

// The real file system.
LogFs& posix_fs();

}  // namespace iolab::commitlog::detail
