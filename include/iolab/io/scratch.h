// The only place iolab writes: a directory it created itself.
//
// ScratchDir makes a fresh directory (mkdtemp) under a parent the user named
// (or $TMPDIR, or /tmp), creates files in it with O_EXCL|O_NOFOLLOW, and
// removes what it created when destroyed. It never writes, truncates or
// removes anything it did not create.
//
// A process killed outright (SIGKILL, the OOM killer) runs no cleanup. So
// each directory keeps a list of what it created, ".iolab-scratch", locked
// (flock) while its process lives; the next ScratchDir made under the same
// parent removes a directory whose list no process holds (see
// reclaim_abandoned_scratch_dirs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iolab::io {

class ScratchDir {
 public:
  // Creates "<parent>/iolab-XXXXXX". An empty parent means $TMPDIR or /tmp.
  // Throws Error when parent is missing, not a directory, or not writable.
  explicit ScratchDir(const std::filesystem::path& parent = {});
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  // The directory ScratchDir(parent) is made in: parent, or $TMPDIR, or /tmp.
  static std::filesystem::path parent_for(const std::filesystem::path& parent);

  // Creates a new empty file "<dir>/<name>" (O_EXCL: fails if it exists).
  std::filesystem::path create_file(std::string_view name);
  // Creates a new empty directory "<dir>/<name>" (EEXIST if it exists): its
  // contents are the caller's to remove; a directory abandoned by a killed
  // process loses it whole.
  std::filesystem::path create_dir(std::string_view name);
  // A name not used yet in this directory: "<stem>-N".
  std::filesystem::path create_unique_file(std::string_view stem);
  // Removes a file this ScratchDir created; other paths are refused.
  void remove_file(const std::filesystem::path& file);

  // Removes every file created, their companions (files a library made
  // beside one of ours by extending its name: SQLite's "<db>-wal" and
  // "<db>-journal", LMDB's "<db>-lock"), and the directory. Called by the
  // destructor and by the signal cleanup (remove_scratch_dirs_on_signals).
  // A file something else put here under another name is left, and so is
  // the directory then.
  void remove_all() noexcept;

  // Files created and not yet removed.
  const std::vector<std::filesystem::path>& created() const noexcept { return created_; }

 private:
  std::filesystem::path checked_name(std::string_view name) const;
  void list(std::string_view entry);  // appends to .iolab-scratch before the entry is made

  std::filesystem::path path_;
  std::vector<std::filesystem::path> created_;
  std::uint64_t next_unique_ = 0;
  int list_fd_ = -1;  // .iolab-scratch, flock'ed for the directory's life
};

// The list a scratch directory keeps of what it created.
inline constexpr std::string_view kScratchListName = ".iolab-scratch";

// Removes the scratch directories under `parent` left by iolab processes
// that ended without their cleanup: an "iolab-XXXXXX" directory of this
// user holding a .iolab-scratch that no process has locked and that has not
// changed for `quiet_seconds` (a directory being made is not yet locked).
// What the list names goes (a listed directory with all it holds, symlinks
// removed, never followed), with the companions remove_all takes, nested
// scratch directories by the same rule, then the list and the directory; a
// file the list does not name keeps the directory. Returns the directories
// removed. ScratchDir's constructor calls it for its parent.
std::vector<std::filesystem::path> reclaim_abandoned_scratch_dirs(const std::filesystem::path& parent,
                                                                  unsigned quiet_seconds = 2);

// The same for one directory: true when it was an abandoned scratch
// directory and is gone. For a process that knows the directory (an MPI
// rank, rank 0's) and waited for its owner to end: quiet_seconds 0.
bool reclaim_abandoned_scratch_dir(const std::filesystem::path& dir, unsigned quiet_seconds = 2);
// Bytes an unprivileged writer may still put on the filesystem of `dir`;
// nullopt when that is not known: statvfs fails, or the filesystem keeps no
// count (ramfs: no blocks at all, and no limit but memory).
std::optional<std::uint64_t> free_space(const std::filesystem::path& dir);

// Removes every live ScratchDir (as remove_all does); for paths that end the
// process without running destructors (MPI_Abort).
void remove_all_scratch_dirs() noexcept;

// Makes the signals that end a process by default and come from outside it
// (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
// SIGVTALRM, SIGXCPU, SIGXFSZ) end it cleanly: a cleanup thread runs the
// InterruptHooks (newest first), removes every live ScratchDir, then ends
// the process by the same signal (so the parent sees it). The handler only
// hands the signal over (a pipe); the rest runs on that thread, where it may
// allocate and lock, while the interrupted code stands still or goes on
// until the process ends. A signal the process inherited as ignored (nohup,
// a background job's SIGINT) stays ignored. Call once at start (again: no-op).
void remove_scratch_dirs_on_signals();

// Work for the cleanup thread when a signal ends the process, before the
// scratch directories go: saving the results so far. Registered while the
// object lives (once the cleanup has begun, its destructor blocks until
// the process ends). A hook
// runs while the rest of the program may still run: it must lock what it
// shares, must not create scratch files, and must not wait for the
// interrupted thread. It may remove them all (remove_all_scratch_dirs: the
// cleanup thread holds the lock every ScratchDir takes, so none is made
// again) when no process it must stop first (a newer hook's) writes there.
class InterruptHook {
 public:
  explicit InterruptHook(std::function<void(int signal)> hook);
  ~InterruptHook();
  InterruptHook(const InterruptHook&) = delete;
  InterruptHook& operator=(const InterruptHook&) = delete;

 private:
  std::uint64_t id_;
};

// The signal being handled by the cleanup thread, or 0. Code that fails
// because of it (a write to a closed pipe after SIGPIPE) calls
// wait_for_signal_cleanup() rather than report its own error and exit.
int interrupting_signal() noexcept;
// Blocks until the cleanup thread ends the process. Only after interrupting_signal() != 0.
[[noreturn]] void wait_for_signal_cleanup();
// "SIGINT", "SIGPIPE", ...
std::string signal_name(int signal);

// Allocates `size` bytes of blocks for an existing file (fallocate, or
// posix_fallocate where the filesystem lacks it), untimed, so that writes
// into it never run out of space midway and writers through a shared map
// never race to grow it. Throws Error (ENOSPC names the size).
void preallocate(const std::filesystem::path& file, std::uint64_t size);

}  // namespace iolab::io
