// The file-system layer the store and the commit log run on.
//
// An Env creates, opens, renames and removes files and syncs directories; an
// EnvFile reads, writes (positional, vectored, or at the file position),
// grows, truncates, syncs and maps one file; a MappedRegion is a shared
// mapping of part of a file with a range sync. Modelled on LevelDB's Env and
// RocksDB's FileSystem, so that one program can run on
//  - Env::posix(): the real file system, through io/syscall.h (the one
//    EINTR loop, full transfers, errors naming the call and the path, the
//    test-only call injector);
//  - FaultEnv (iolab/testing/fault_env.h): an in-memory file system that records every
//    operation and can materialize the state a power loss may leave at any
//    point (what was synced kept; unsynced writes kept, dropped or torn).
//
// Durability, as each call promises it (what a power loss cannot undo):
//  - EnvFile::sync(Fdatasync): the file's data written so far and its size;
//    sync(Fsync): its metadata too. Neither makes the file's *name* durable.
//  - MappedRegion::sync(offset, length): stores through the mapping in that
//    range (and the file's size), like msync(MS_SYNC). Nothing else.
//  - Env::sync_dir(dir): the creates, renames and removes in `dir` so far.
//    A new file needs its data synced AND its directory synced to survive.
//  Write calls and stores into a mapping promise nothing until synced; a
//  write that returned survives a process crash (the page cache), not a
//  power loss.
//
// Thread safety:
//  - Env: every call is safe for concurrent use.
//  - EnvFile: read_at, write_at, size, allocate, sync and map may be called
//    from several threads at once (e.g. a flusher thread syncing while a
//    writer appends at other offsets, as RocketMQ does). seek/read/write
//    share the file position: REQUIRES external synchronization. truncate
//    and close: no other call on the file at the same time.
//  - MappedRegion: stores through data() by one thread while another syncs
//    a range that does not overlap them are allowed. resize and unmap: no
//    other use of the region at the same time (the base may move).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iolab/io/buffer.h"  // kPageSize
#include "iolab/io/file.h"

namespace iolab::io {

class EnvFile;
class MappedRegion;

// How Env::open treats an existing or missing file. No mode truncates:
// a file is emptied only by an explicit truncate.
enum class OpenMode {
  CreateNew,     // O_CREAT | O_EXCL: fails (EEXIST) when the path exists
  OpenExisting,  // fails (ENOENT) when it does not
  OpenOrCreate,  // created when missing
};

class Env {
 public:
  virtual ~Env() = default;

  // The real file system. One object for the process; thread-safe.
  static Env& posix();

  // Opens a regular file, never following a symlink (refused with a message).
  virtual std::unique_ptr<EnvFile> open(const std::filesystem::path& path, OpenMode mode,
                                        Access access = Access::ReadWrite) = 0;
  virtual bool exists(const std::filesystem::path& path) = 0;
  // rename(2): replaces `to` atomically. Durable once the directory (or
  // both directories) is synced.
  virtual void rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  // Removes a file (ENOENT when missing). Durable once the directory is synced.
  virtual void remove(const std::filesystem::path& path) = 0;
  virtual void create_dir(const std::filesystem::path& dir) = 0;  // EEXIST when present
  virtual void remove_dir(const std::filesystem::path& dir) = 0;  // must be empty
  // Names of the entries in `dir` (not "." or ".."), sorted.
  virtual std::vector<std::string> list_dir(const std::filesystem::path& dir) = 0;
  // Makes the creates, renames and removes in `dir` durable (fsync of the directory).
  virtual void sync_dir(const std::filesystem::path& dir) = 0;
};

class EnvFile {
 public:
  virtual ~EnvFile() = default;  // closes quietly; call close() to see errors
  EnvFile(const EnvFile&) = delete;
  EnvFile& operator=(const EnvFile&) = delete;

  // Reads up to dst.size() bytes at `offset`; fewer only at end of file.
  virtual std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) = 0;
  // Writes all of `src` at `offset` (pwrite), growing the file if needed.
  virtual void write_at(std::uint64_t offset, std::span<const std::byte> src) = 0;
  // Writes `parts` one after the other from `offset` with one gathering
  // call (pwritev) when the kernel takes them all.
  virtual void write_at(std::uint64_t offset, std::span<const std::span<const std::byte>> parts) = 0;

  // At the file position (lseek + read(2)/write(2): RandomAccessFile's way).
  virtual void seek(std::uint64_t offset) = 0;
  virtual std::size_t read(std::span<std::byte> dst) = 0;  // fewer only at end of file
  virtual void write(std::span<const std::byte> src) = 0;

  virtual std::uint64_t size() = 0;
  virtual void truncate(std::uint64_t size) = 0;
  // Allocates blocks for [offset, offset + length), growing the size to
  // cover it: a full disk is an Error here, never a SIGBUS in a mapping.
  virtual void allocate(std::uint64_t offset, std::uint64_t length) = 0;
  // Fdatasync or Fsync (see the top of this file); None and Flush do
  // nothing (no user-space buffer here); others throw EOPNOTSUPP.
  virtual void sync(Durability d) = 0;

  // A shared mapping of [offset, offset + length); offset a multiple of
  // kPageSize. Writable when `access` is ReadWrite (the file must have been
  // opened so). Bytes past the end of file must not be touched (SIGBUS):
  // allocate first.
  virtual std::unique_ptr<MappedRegion> map(std::uint64_t offset, std::size_t length, Access access) = 0;

  // Releases the file; errors surface here. Twice is harmless. Regions
  // mapped from it stay valid until unmapped.
  virtual void close() = 0;

  const std::filesystem::path& path() const noexcept { return path_; }
  // Calls made and bytes moved through this file (not stores into a mapping).
  virtual IoCounters counters() const = 0;

 protected:
  explicit EnvFile(std::filesystem::path path) : path_(std::move(path)) {}

 private:
  std::filesystem::path path_;
};

class MappedRegion {
 public:
  virtual ~MappedRegion() = default;  // unmaps quietly
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::uint64_t file_offset() const noexcept { return offset_; }

  // Grows or shrinks the mapping (mremap, MAYMOVE): data() may change.
  virtual void resize(std::size_t length) = 0;
  // Makes stores into [offset, offset + length) of the region durable
  // (msync MS_SYNC over the pages covering it).
  virtual void sync(std::size_t offset, std::size_t length) = 0;
  // A hint that [offset, offset + length) is about to be written: fault the
  // pages in now (MADV_POPULATE_WRITE where the kernel has it). Never throws.
  virtual void prefault(std::size_t offset, std::size_t length) noexcept = 0;
  // Unmaps; errors surface here. Twice is harmless.
  virtual void unmap() = 0;

 protected:
  MappedRegion(std::byte* data, std::size_t size, std::uint64_t offset) : data_(data), size_(size), offset_(offset) {}
  std::byte* data_;
  std::size_t size_;
  std::uint64_t offset_;
};

}  // namespace iolab::io
