// The only place iolab writes: a directory it created itself.
//
// ScratchDir makes a fresh directory (mkdtemp) under a parent the user named
// (or $TMPDIR, or /tmp), creates files in it with O_EXCL|O_NOFOLLOW, and
// removes what it created when destroyed. It never writes, truncates or
// removes anything it did not create.
#pragma once

#include <cstdint>
#include <filesystem>
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

  // Creates a new empty file "<dir>/<name>" (O_EXCL: fails if it exists).
  std::filesystem::path create_file(std::string_view name);
  // A name not used yet in this directory: "<stem>-N".
  std::filesystem::path create_unique_file(std::string_view stem);
  // Removes a file this ScratchDir created; other paths are refused.
  void remove_file(const std::filesystem::path& file);

  // Removes every file created and the directory. Called by the destructor;
  // safe to call from a signal-handling path after the run stops.
  void remove_all() noexcept;

  // Files created and not yet removed.
  const std::vector<std::filesystem::path>& created() const noexcept { return created_; }

 private:
  std::filesystem::path path_;
  std::vector<std::filesystem::path> created_;
  std::uint64_t next_unique_ = 0;
};

// Removes every live ScratchDir's files; for SIGINT/SIGTERM handlers set up by the CLI.
void remove_all_scratch_dirs() noexcept;

// Makes SIGINT and SIGTERM remove every live ScratchDir's files, then end
// the process by the same signal (the programs call this once at start).
void remove_scratch_dirs_on_signals();

// Allocates `size` bytes of blocks for an existing file (fallocate, or
// posix_fallocate where the filesystem lacks it), untimed, so that writes
// into it never run out of space midway and writers through a shared map
// never race to grow it. Throws Error (ENOSPC names the size).
void preallocate(const std::filesystem::path& file, std::uint64_t size);

}  // namespace iolab::io
