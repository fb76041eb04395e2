// An in-memory Env that records every operation and can materialize the
// state a power loss may leave at any point of the run (LevelDB's
// FaultInjectionTestEnv and RocksDB's FaultInjectionTestFS drop unsynced
// data; CrashMonkey and ALICE build crash states from a recorded trace:
// this does both).
//
// Recorded: every write (positional, vectored, sequential), truncate,
// allocate, file sync, range sync of a mapping, create, rename, remove,
// mkdir, rmdir and directory sync; and stores through a mapping, which make
// no call: they are found by comparing the mapped pages with what the trace
// knows, at the region's sync (its range), at a write or read-modifying call
// on an overlapping range, at a file sync, truncate, resize, unmap, and at
// settle(). Each dirty page becomes one recorded write.
//
// The crash model (what a state at point P may hold, P = operations done):
//  - file data and size made durable by a sync before P are kept;
//  - every write since the file's last sync is independently kept, dropped,
//    or torn: a random subset of its 512-byte sectors kept (a sector is
//    written all or nothing); a size change (truncate, allocate) kept or
//    dropped; they apply in their order, so a later write may survive an
//    earlier one that was lost;
//  - a range sync makes durable the writes (parts of writes) inside the
//    range and the file's size, nothing else;
//  - a create, rename, remove, mkdir or rmdir whose directory was not
//    synced since is kept or dropped: a file created (or renamed into
//    place) may vanish although its data was synced.
// The choices are drawn from a seed: a state is reproducible.
//
// Thread safety: every call is safe for concurrent use (one mutex). Stores
// through a mapping while another thread calls into the env are allowed as
// long as they do not touch a range that call examines (a range sync
// examines its range; a file sync, truncate, settle() every mapping of the
// file or env).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "iolab/io/env.h"

namespace iolab::io {

// The files and directories a power loss left.
struct CrashState {
  std::map<std::filesystem::path, std::vector<std::byte>> files;
  std::set<std::filesystem::path> dirs;  // directories created through the env that survived
  // What the crash did with the operations not yet durable.
  std::uint64_t kept = 0, dropped = 0, torn = 0;

  // Writes the files and directories under `root` (each path made relative)
  // to reopen the state with Env::posix(). `root` must exist.
  void write_under(const std::filesystem::path& root) const;
};

struct CrashOptions {
  // false: a disk that ignores flushes; syncs make nothing durable (to show
  // that a checker notices lost data).
  bool honour_syncs = true;
  std::size_t sector = 512;  // the unit a torn write keeps or loses
};

class FaultEnv final : public Env {
 public:
  // Largest file (bytes): each file's memory is reserved up front, so a
  // mapping's address stays put as the file grows.
  static constexpr std::uint64_t kDefaultMaxFileSize = std::uint64_t{1} << 30;

  explicit FaultEnv(std::uint64_t max_file_size = kDefaultMaxFileSize);
  // Starts from `start`: its files and directories, all durable.
  explicit FaultEnv(const CrashState& start, std::uint64_t max_file_size = kDefaultMaxFileSize);
  ~FaultEnv() override;
  FaultEnv(const FaultEnv&) = delete;
  FaultEnv& operator=(const FaultEnv&) = delete;

  std::unique_ptr<EnvFile> open(const std::filesystem::path& path, OpenMode mode,
                                Access access = Access::ReadWrite) override;
  bool exists(const std::filesystem::path& path) override;
  void rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  void remove(const std::filesystem::path& path) override;
  void create_dir(const std::filesystem::path& dir) override;
  void remove_dir(const std::filesystem::path& dir) override;
  std::vector<std::string> list_dir(const std::filesystem::path& dir) override;
  void sync_dir(const std::filesystem::path& dir) override;

  // Records the stores made through every live mapping since they were last
  // looked at: a crash point between two operations that make no call.
  void settle();
  // Operations recorded so far: crash points are 0 ..= operations().
  std::size_t operations() const;
  // The points right after each sync (file, range or directory), in order.
  std::vector<std::size_t> sync_points() const;
  // One line saying what operation `index` (0-based) was: "write
  // /d/f [4096, 8192) mapped", "fdatasync /d/f", "sync dir /d"...
  std::string describe(std::size_t index) const;
  // Every file's current content (what a process crash, not a power loss,
  // would leave): the page cache.
  CrashState current() const;
  // A state a power loss right after the first `point` operations may
  // leave, drawn from `seed` (see the crash model above).
  CrashState crash_state(std::size_t point, std::uint64_t seed, const CrashOptions& options = {}) const;

  struct Impl;  // src/io/fault_env.cpp

 private:
  friend class CrashReplay;
  std::shared_ptr<Impl> impl_;  // shared with the files and regions it opened
};

// Crash states of one recorded run walked in increasing point order: the
// durable state is replayed once, not from the start for every state.
// The env must outlive it and record nothing more while it is used.
class CrashReplay {
 public:
  explicit CrashReplay(const FaultEnv& env, const CrashOptions& options = {});
  ~CrashReplay();
  // Applies the operations up to `point` (never backwards).
  void advance_to(std::size_t point);
  std::size_t point() const noexcept;
  // Operations done but not yet durable at the current point.
  std::size_t pending() const;
  CrashState state(std::uint64_t seed) const;

 private:
  struct Model;
  std::unique_ptr<Model> model_;
};

}  // namespace iolab::io
