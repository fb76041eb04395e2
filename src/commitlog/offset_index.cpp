// A segment's offset index (log.h, OffsetIndex): sequence -> position
// entries appended beside the segment, synced with it, read back at open.
#include "log.h"

#include <algorithm>
#include <cstring>

#include "iolab/base/le.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "segment_reader.h"

namespace iolab::commitlog::detail {

OffsetIndex::OffsetIndex(LogFs& fs, std::filesystem::path path, std::uint64_t capacity_entries, bool create)
    : path_(std::move(path)), capacity_(capacity_entries) {
  file_ = create ? fs.create(path_) : fs.open(path_, true);
  // Rebuilt from the log on open, so an old one is emptied first (Kafka
  // rebuilds the index of every segment it recovers).
  file_->truncate(0);
  file_->allocate(capacity_ * kEntrySize);
  map_ = file_->map(capacity_ * kEntrySize, true);
}

void OffsetIndex::append(std::uint32_t relative_sequence, std::uint32_t position) {
  if (entries_ >= capacity_ || map_.empty()) return;  // full: Kafka would roll; a sparse index may stop early
  std::byte* p = map_.data() + entries_ * kEntrySize;
  le::put32(le::put32(p, relative_sequence), position);
  ++entries_;
}

void OffsetIndex::sync() {
  if (!map_.empty())
    map_.sync(0, entries_ * kEntrySize);
  else if (file_)
    file_->sync_data();
}

void OffsetIndex::trim() {
  if (!file_) return;
  map_ = MappedRegion();
  file_->truncate(entries_ * kEntrySize);
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> OffsetIndex::lookup(LogFs& fs, const std::filesystem::path& path,
                                                                          std::uint32_t relative_sequence) {
  if (!fs.exists(path)) return std::nullopt;
  auto file = fs.open(path, false);
  std::vector<std::byte> bytes(file->size() / kEntrySize * kEntrySize);
  bytes.resize(file->read_at(0, bytes) / kEntrySize * kEntrySize);
  std::optional<std::pair<std::uint32_t, std::uint32_t>> best;
  std::uint32_t last_position = 0;
  for (std::size_t i = 0; i + kEntrySize <= bytes.size(); i += kEntrySize) {
    const std::uint32_t seq = le::get32(bytes.data() + i), pos = le::get32(bytes.data() + i + 4);
    // Entries grow in both fields; the first that does not ends the valid part
    // (zeroed preallocation, or a crash before the index caught up).
    if ((best && (seq <= best->first || pos <= last_position)) || (!best && pos == 0)) break;
    if (seq > relative_sequence) break;
    best = std::make_pair(seq, pos);
    last_position = pos;
  }
  return best;
}

}  // namespace iolab::commitlog::detail
