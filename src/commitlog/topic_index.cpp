#include "topic_index.h"

#include <cstring>

#include "iolab/base/le.h"
#include "iolab/commitlog/format.h"
#include "iolab/base/error.h"

namespace iolab::commitlog::detail {
namespace {

constexpr std::string_view kSuffix = ".cq";

struct Entry {
  std::uint64_t position = 0;
  std::uint32_t size = 0;
  std::uint64_t tag = 0;
};

Entry decode(const std::byte* p) noexcept {
  Entry e;
  e.position = le::get64(p);
  e.size = le::get32(p + 8);
  e.tag = le::get64(p + 12);
  return e;
}

}  // namespace

TopicIndex::TopicIndex(LogFs& fs, std::filesystem::path dir, std::uint32_t entries_per_file)
    : fs_(fs), dir_(std::move(dir)), entries_per_file_(entries_per_file) {
  if (entries_per_file == 0) throw UsageError("index entries per file '0'", "must be at least 1");
}

void TopicIndex::start_file(std::uint64_t first_entry, bool create) {
  map_ = MappedRegion();
  if (file_) file_->close();
  auto path = dir_ / segment_name(first_entry * kEntrySize, kSuffix);
  file_ = create ? fs_.create(path) : fs_.open(path, true);
  file_->allocate(entries_per_file_ * kEntrySize);
  map_ = file_->map(entries_per_file_ * kEntrySize, true);
  file_first_ = first_entry;
  in_file_ = 0;
}

std::uint64_t TopicIndex::open(std::uint64_t log_end) {
  if (fs_.make_dir(dir_)) fs_.sync_dir(dir_.parent_path());
  std::vector<std::pair<std::uint64_t, std::filesystem::path>> files;  // (first entry, path)
  for (const std::string& name : fs_.list(dir_)) {
    std::uint64_t first_byte = 0;
    if (!parse_segment_name(name, first_byte, kSuffix) || first_byte % (kEntrySize * entries_per_file_) != 0)
      throw Error("open topic index", (dir_ / name).string(),
                  "not a topic index file of " + std::to_string(entries_per_file_) + " entries", EINVAL);
    files.emplace_back(first_byte / kEntrySize, dir_ / name);
  }
  // Keep the longest prefix of valid entries, across files in order.
  std::uint64_t kept = 0, dropped = 0, last_position = 0;
  bool ended = false;
  std::vector<std::byte> bytes;
  for (const auto& [first, path] : files) {
    if (first != kept) ended = true;  // a missing file, or one after a short one
    auto file = fs_.open(path, false);
    bytes.resize(file->size() / kEntrySize * kEntrySize);
    bytes.resize(file->read_at(0, bytes) / kEntrySize * kEntrySize);
    for (std::size_t i = 0; i < bytes.size(); i += kEntrySize) {
      Entry e = decode(bytes.data() + i);
      bool unwritten = e.size == 0 && e.position == 0 && e.tag == 0;
      bool valid = e.size >= kFrameHeaderSize && e.position + e.size <= log_end &&
                   (kept == 0 || e.position > last_position);
      if (!ended && valid) {
        ++kept;
        last_position = e.position;
        continue;
      }
      ended = true;
      if (!unwritten) ++dropped;
    }
  }
  std::uint64_t current = kept == 0 ? 0 : (kept - 1) / entries_per_file_ * entries_per_file_;
  bool removed = false;
  bool have_current = false;
  for (const auto& [first, path] : files) {
    if (first > current) {
      fs_.remove(path);
      removed = true;
    } else if (first == current) {
      have_current = true;
    }
  }
  start_file(current, !have_current);
  // Zero everything after the kept entries so no stale entry reads as valid.
  in_file_ = kept - current;
  map_ = MappedRegion();
  file_->truncate(in_file_ * kEntrySize);
  file_->allocate(entries_per_file_ * kEntrySize);
  map_ = file_->map(entries_per_file_ * kEntrySize, true);
  file_->sync_data();
  if (removed || !have_current) fs_.sync_dir(dir_);
  return dropped;
}

void TopicIndex::append(std::uint64_t position, std::uint32_t size, std::uint64_t tag) {
  // The index is rebuilt from nothing durable (see open): a full file is
  // left to the kernel's writeback, and the new one's name synced at close.
  if (in_file_ == entries_per_file_) start_file(file_first_ + entries_per_file_, true);
  std::byte* p = map_.data() + in_file_ * kEntrySize;
  le::put64(le::put32(le::put64(p, position), size), tag);
  ++in_file_;
}

std::vector<std::pair<std::uint64_t, std::uint32_t>> TopicIndex::read_all() {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
  std::vector<std::byte> bytes;
  for (const std::string& name : fs_.list(dir_)) {
    auto file = fs_.open(dir_ / name, false);
    bytes.resize(file->size() / kEntrySize * kEntrySize);
    bytes.resize(file->read_at(0, bytes) / kEntrySize * kEntrySize);
    for (std::size_t i = 0; i < bytes.size(); i += kEntrySize) {
      Entry e = decode(bytes.data() + i);
      if (e.size == 0) return out;
      out.emplace_back(e.position, e.size);
    }
  }
  return out;
}

void TopicIndex::close() {
  if (!file_) return;
  map_.sync(0, in_file_ * kEntrySize);
  map_ = MappedRegion();
  file_->close();
  file_.reset();
  fs_.sync_dir(dir_);
}

}  // namespace iolab::commitlog::detail
