// Internal: RocketMQ's ConsumeQueue for one topic of a shared log: 20-byte
// entries (log position 8, frame size 4, tag hash 8) in preallocated,
// mapped files of a fixed number of entries, named by their first byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "files.h"

namespace iolab::commitlog::detail {

class TopicIndex {
 public:
  static constexpr std::size_t kEntrySize = 20;

  TopicIndex(LogFs& fs, std::filesystem::path dir, std::uint32_t entries_per_file);

  // Opens (or creates) the index. Entries must grow in position and end at
  // or before `log_end`; the first that does not, and all after it, are
  // dropped (RocketMQ truncates its consume queues to the commit log the
  // same way). Returns how many were dropped.
  std::uint64_t open(std::uint64_t log_end);
  // REQUIRES: the log's append lock.
  void append(std::uint64_t position, std::uint32_t size, std::uint64_t tag);
  // Every entry, read from the files: (position, size).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> read_all();
  // Syncs what was written and releases the files. Twice is harmless.
  void close();

 private:
  void start_file(std::uint64_t first_entry, bool create);

  LogFs& fs_;
  std::filesystem::path dir_;
  std::uint64_t entries_per_file_;
  std::unique_ptr<LogFile> file_;
  MappedRegion map_;
  std::uint64_t file_first_ = 0;  // index of the current file's first entry
  std::uint64_t in_file_ = 0;     // entries in the current file
};

}  // namespace iolab::commitlog::detail
