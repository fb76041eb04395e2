// RecordStore's open: the journal read back, its index rebuilt and torn or
// unfinished tails recovered (docs/store-format.md), and the checkpoint
// that closes a clean session.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "iolab/base/error.h"
#include "journal_file.h"
#include "key_index.h"
#include "record_store_parts.h"
#include "iolab/base/le.h"

namespace iolab::store {

void RecordStore::open_journal() {
  report_ = OpenReport{};
  index_->clear();
  free_->by_size.clear();
  free_->bytes = 0;
  holes_unsynced_.clear();
  free_after_sync_.clear();
  stale_unsynced_.clear();
  const io::Durability call = options_.sync.call;

  // A temporary journal left by a compact() a crash interrupted: the
  // journal itself is whole (the rename is the switch), so it goes.
  if (env_.exists(options_.compact_path) && looks_like_leftover(env_, options_.compact_path)) {
    env_.remove(options_.compact_path);
    env_.sync_dir(dir_of(options_.compact_path));
    report_.leftover_removed = true;
  }

  auto file = env_.open(path_, env_.exists(path_) ? io::OpenMode::OpenExisting : io::OpenMode::CreateNew);
  std::uint64_t size = file->size();
  if (size == 0) {
    // A new journal: header and checkpoint in one write (one sector: all or nothing).
    version_ = kJournalVersion;
    std::byte start[kRecordsStart];
    write_file_header(start);
    encode_checkpoint(start + kCheckpointOffset, Checkpoint{!ordered(), 0, kRecordsStart});
    file->write_at(0, start);
    // Durable before any record: a crash must not keep records and lose
    // the header that says what they are.
    file->sync(call);
    if (options_.sync.schedule != io::FlushSchedule::None) {
      // The name too: a new file is durable once its directory is synced.
      env_.sync_dir(dir_of(path_));
      durable_ = true;
    }
    marked_unordered_ = !ordered();
    report_.created = true;
    end_ = kRecordsStart;
    sequence_ = 0;
    journal_ = make_journal(options_, std::move(file), end_);
  } else {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> holes;    // offset, slot: free on disk
    std::vector<std::pair<std::uint64_t, std::uint64_t>> to_free;  // offset, slot: to mark free below
    bool checkpoint_corrupt = false;
    {
      auto view = file->map(0, static_cast<std::size_t>(size), io::Access::Read);
      std::span<const std::byte> bytes(view->data(), static_cast<std::size_t>(size));
      ScanResult scan = scan_journal(bytes, path_.string());
      if (scan.checkpoint_corrupt && !options_.salvage)
        throw Error("open journal", path_.string(),
                    "checkpoint at offset " + std::to_string(kCheckpointOffset) +
                        " is corrupt (CRC mismatch); open with salvage to ignore it");
      std::vector<Damage> durable_damage;
      for (const Damage& d : scan.damage) (d.crash_debris ? report_.repaired : durable_damage).push_back(d);
      if (!durable_damage.empty() && !options_.salvage) {
        const Damage& d = durable_damage.front();
        std::string more = durable_damage.size() > 1
                               ? " (and " + std::to_string(durable_damage.size() - 1) + " more damaged ranges)"
                               : "";
        throw Error("open journal", path_.string(),
                    "corrupt data at offset " + std::to_string(d.offset) + " (" + std::to_string(d.length) +
                        " bytes, followed by valid records)" + more + "; open with salvage to skip it");
      }
      report_.salvaged = durable_damage;
      Index& index = *index_;
      index.reserve(scan.records.size());
      for (const ScannedRecord& r : scan.records) {
        std::uint64_t slot = slot_size(r.data_length);
        if (!r.active) {
          holes.emplace_back(r.offset, slot);
          continue;
        }
        // The key is the first field; scan_journal checked its length.
        const std::byte* d = bytes.data() + r.offset + kRecordHeaderSize;
        std::string_view key(reinterpret_cast<const char*>(d + 4), le::get32(d));
        auto key_in_scan = [&](IndexLocation l) {
          return Journal::key_in(bytes.subspan(l.offset + kRecordHeaderSize, l.data_length));
        };
        auto [found, inserted] = index.try_emplace(key, IndexLocation{r.offset, r.data_length}, key_in_scan);
        if (inserted) continue;
        // A crash between writing a new version and freeing the old one: keep the newer.
        IndexLocation cur = found.get();
        auto seq_of = [&](std::uint64_t off) {
          auto at = std::lower_bound(scan.records.begin(), scan.records.end(), off,
                                     [](const ScannedRecord& a, std::uint64_t o) { return a.offset < o; });
          return at->sequence;
        };
        if (r.sequence > seq_of(cur.offset)) {
          to_free.emplace_back(cur.offset, slot_size(cur.data_length));
          found.set(IndexLocation{r.offset, r.data_length});
        } else {
          to_free.emplace_back(r.offset, slot);
        }
        ++report_.stale_versions_freed;
      }
      for (const Damage& dmg : scan.damage) to_free.emplace_back(dmg.offset, dmg.length);
      report_.torn_tail_bytes = scan.torn_tail_bytes;
      report_.torn_tail_records = scan.torn_tail_records;
      report_.zero_tail_bytes = scan.zero_tail_bytes;
      end_ = scan.end;
      version_ = scan.version;
      sequence_ = std::max(scan.max_sequence, scan.has_checkpoint ? scan.checkpoint.sequence : 0);
      marked_unordered_ = scan.has_checkpoint && scan.checkpoint.unordered;
      checkpoint_corrupt = scan.checkpoint_corrupt;
      view->unmap();
    }
    // Repairs, durable before anything new is written: stale versions,
    // crash debris and salvaged damage become free records; the torn tail
    // goes; a checkpoint a cut left incomplete is rewritten.
    bool repaired = !to_free.empty();
    for (auto [offset, slot] : to_free) {
      // A free record's length is 32 bits: a huge damaged range becomes several.
      constexpr std::uint64_t kMaxFreeSlot = 0xFFFFFFF0u;
      while (slot > 0) {
        std::uint64_t part = std::min(slot, kMaxFreeSlot);
        if (slot - part != 0 && slot - part < kRecordHeaderSize) part -= kRecordAlign;
        std::byte h[kRecordHeaderSize];
        encode_record_header(h, kKindFree, 0, static_cast<std::uint32_t>(part - kRecordHeaderSize));
        file->write_at(offset, h);
        holes.emplace_back(offset, part);
        offset += part;
        slot -= part;
      }
    }
    if (end_ < size) {
      file->truncate(end_);
      repaired = true;
    }
    if (version_ >= 2 && (end_ < kRecordsStart || checkpoint_corrupt)) {
      // Cut inside its checkpoint, or a corrupt one salvaged: a checkpoint
      // that claims nothing (an ordered store claims more after the sync).
      end_ = std::max<std::uint64_t>(end_, kRecordsStart);
      std::byte c[kCheckpointSize];
      encode_checkpoint(c, Checkpoint{true, sequence_, end_});
      file->write_at(kCheckpointOffset, c);
      marked_unordered_ = true;
      repaired = true;
    }
    report_.free_records = holes.size();
    if (repaired) {
      file->sync(call);
      durable_mutations_ = mutations_;
      durable_ = true;
    }
    // A free mark found on disk may still be only in the page cache (a
    // process crash): an ordered store reuses its hole after the next sync.
    for (auto [offset, slot] : holes) {
      if (ordered() && !repaired)
        holes_unsynced_.emplace_back(offset, slot);
      else
        add_hole(offset, slot);
    }
    report_.free_bytes = free_->bytes;
    for (auto [offset, slot] : holes_unsynced_) report_.free_bytes += slot;
    journal_ = make_journal(options_, std::move(file), end_);
    // Everything is durable now (synced above): say so, for the next open.
    if (repaired && version_ >= 2 && ordered()) {
      write_checkpoint(false);
      marked_unordered_ = false;
    }
  }
  report_.records = index_->size();
  closed_ = false;
  unsynced_ = 0;
}

void RecordStore::write_checkpoint(bool unordered) {
  std::byte c[kCheckpointSize];
  encode_checkpoint(c, Checkpoint{unordered, sequence_, end_});
  journal_->write_checkpoint(c);
}

}  // namespace iolab::store
