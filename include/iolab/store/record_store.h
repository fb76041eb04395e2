// iolab::store — the employee record store of seed 000, done carefully.
//
// One journal file (docs/store-format.md): a file header, then records, each
// a CRC-checked header and length-prefixed fields. An in-memory hash index
// maps last name -> (offset, length). Removed records become holes that later
// puts reuse (smallest hole that fits, split, the remainder left as a smaller
// free record) — the seed's getStorageLocation. Open scans the journal,
// checks every CRC, rebuilds the index and the free list, truncates a torn
// tail, and refuses mid-file damage unless asked to salvage.
//
// Four backends write the same format:
//  - fields:   lseek + one write(2) per field, one read(2) per field (RandomAccessFile)
//  - gather:   header + data in one pwritev(2), one pread(2) per get (FileChannel)
//  - mmap:     stores through a shared mapping grown by fallocate + mremap;
//              gets decode in place (MappedByteBuffer)
//  - buffered: appends staged in an aligned buffer and written by large
//              pwrite(2)s; gets decode in place from a read-only mapping
//              (LMDB's split), or from the buffer while staged
//
// Durability (docs/store-format.md states the contract the crash-state
// explorer, bench/crash_states, checks over power-loss states):
//  - every-put / every-N: a mutation is durable once a sync follows it
//    (StoreStats::durable_mutations counts them); after a power loss every
//    key holds its value as of the last sync, or a value a later mutation
//    gave it; a removed key never comes back once its remove is durable.
//  - none / at close: durable only after close (at close) or compact();
//    after a power loss before that, a key changed since may hold any value
//    it had, or be absent; keys not changed since are intact.
//  - open always succeeds on what a power loss or a crash left (a crash's
//    half-done writes are repaired and reported); damage to what was
//    durable is refused with its offset unless StoreOptions::salvage.
// Every file operation goes through an io::Env (StoreOptions::env), so the
// store runs on the real file system or on the fault env (iolab/testing/fault_env.h).
// After a failed write or sync the store refuses further changes (what
// reached the disk is unknown): close it and open the journal again.
//
// Not safe for concurrent use: one thread at a time. One process per journal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "iolab/io/env.h"
#include "iolab/io/file.h"
#include "iolab/store/employee.h"
#include "iolab/store/journal.h"

namespace iolab::store {

enum class Backend { Fields, Gather, Mmap, Buffered };
std::string_view to_string(Backend b);
// "fields", "gather", "mmap", "buffered"; throws UsageError otherwise.
Backend parse_backend(std::string_view name);
inline constexpr Backend kAllBackends[] = {Backend::Fields, Backend::Gather, Backend::Mmap, Backend::Buffered};

struct StoreOptions {
  Backend backend = Backend::Mmap;
  // When written records are made durable (io/file.h): None; EveryOps, every
  // `interval` puts and removes; EveryWrite, after each put or remove; End,
  // at close. Other schedules are refused. The call: fdatasync (None means
  // fdatasync, the store's own data sync) or fsync; mmap msyncs its mapped
  // range (MS_SYNC) first.
  io::FlushPolicy sync;
  std::size_t mmap_grow_step = std::size_t{1} << 20;   // mmap: file grows by this (the seed grows by a PAGE_SIZE it never defines)
  std::size_t stage_buffer = std::size_t{1} << 20;     // buffered: staging buffer bytes
  bool salvage = false;  // open: skip mid-file damage (made into free space) instead of failing
  // compact(): the temporary journal, renamed over the journal when done.
  // Empty: "<journal>.compact" beside it.
  std::filesystem::path compact_path;
  // The file system to run on; nullptr: io::Env::posix(). Must outlive the store.
  io::Env* env = nullptr;
};

// What open found and did.
struct OpenReport {
  std::uint64_t records = 0;           // live records indexed
  std::uint64_t free_records = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t torn_tail_bytes = 0;   // truncated: a crash mid-write
  std::uint64_t torn_tail_records = 0;
  std::uint64_t zero_tail_bytes = 0;   // preallocated zeros trimmed (mmap growth), not damage
  std::vector<Damage> salvaged;        // damage to durable data skipped (salvage only)
  std::vector<Damage> repaired;        // writes a crash left half-done, made free space
  bool leftover_removed = false;       // a temporary journal a crashed compact() left was removed
  std::uint64_t stale_versions_freed = 0;  // older versions of a key left by a crash mid-replace
  bool created = false;                // the file was empty: a new journal was started
};

struct StoreStats {
  std::uint64_t records = 0;
  std::uint64_t file_bytes = 0;   // logical end of the journal
  std::uint64_t free_bytes = 0;   // in holes (reusable or waiting for a sync)
  std::uint64_t free_holes = 0;
  std::uint64_t syscalls = 0;     // every system call the store made on the journal
  std::uint64_t bytes_written = 0;  // through calls or stored into the mapping
  std::uint64_t bytes_read = 0;
  std::uint64_t syncs = 0;
  std::uint64_t holes_reused = 0;
  std::uint64_t mutations = 0;          // puts and removes since the store was opened
  std::uint64_t durable_mutations = 0;  // ... of which a sync (or compact) made durable: the first N
};

class Journal;          // the backend (src/store)
struct IndexLocation;   // an index entry (src/store)

class RecordStore {
 public:
  // Opens (or starts, when the file is empty) the journal at `path`, which
  // is created if missing (never through a symlink). Throws Error for a
  // file that is not a journal, a newer format version, or mid-file damage
  // (with its offset) unless options.salvage.
  RecordStore(const std::filesystem::path& path, StoreOptions options);
  ~RecordStore();  // closes quietly; call close() to see errors
  RecordStore(const RecordStore&) = delete;
  RecordStore& operator=(const RecordStore&) = delete;

  const OpenReport& open_report() const noexcept { return report_; }

  // Inserts or replaces by e.last. Throws Error for an empty key or a field over 64 KiB.
  void put(const Employee& e);
  // False when absent. Verifies the record's CRC (throws Error when it fails).
  bool get(std::string_view last, Employee& out);
  std::optional<Employee> get(std::string_view last);
  bool contains(std::string_view last) const;
  // False when absent.
  bool remove(std::string_view last);
  std::uint64_t size() const noexcept;
  // Every live record in file order.
  void for_each(const std::function<void(const Employee&)>& fn);
  // Rewrites the journal with only live records (temporary file, synced,
  // renamed over the journal, directory synced): every mutation is durable
  // once it returns, whatever the policy. A failure before the rename
  // leaves the store as it was and removes the temporary file.
  void compact();
  // Hands staged data to the kernel and syncs whatever the policy still owes.
  void commit();
  StoreStats stats() const;
  const std::filesystem::path& path() const noexcept { return path_; }
  const StoreOptions& options() const noexcept { return options_; }

  // Flushes, syncs when the policy says so, trims preallocation, closes. Twice is harmless.
  void close();
  // Whether a sync (or compact, or open's repairs) since the last mutation
  // made every mutation so far durable, those of earlier stores on this
  // journal included: the store's acknowledgement, which the crash-state
  // explorer checks. StoreStats::durable_mutations says how many of this
  // store's mutations the latest such sync covered.
  bool durable() const noexcept { return durable_; }

 private:
  struct Location {
    std::uint64_t offset;
    std::uint32_t data_length;
  };
  struct Stale {  // an old version of a key, freed after the next sync
    Location location;
    std::uint64_t key_hash;
  };
  void open_journal();
  void after_mutation();
  void sync_now();
  void add_hole(std::uint64_t offset, std::uint64_t slot);
  void free_record(const Location& loc);
  std::uint64_t take_hole(std::uint64_t need, std::uint64_t& slot);
  void write_checkpoint(bool unordered);
  std::uint64_t next_sequence();
  void before_mutation(const char* what);
  void put_unguarded(const Employee& e);
  void remove_found(std::string_view last, const Location& found);
  bool ordered() const noexcept;
  // The key stored in the record at `l` (the index keeps no copy of keys).
  std::string_view key_at(const IndexLocation& l) const;

  std::filesystem::path path_;
  StoreOptions options_;
  io::Env& env_;
  OpenReport report_;
  std::unique_ptr<Journal> journal_;
  class Index;
  std::unique_ptr<Index> index_;
  std::uint64_t end_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t unsynced_ = 0;  // mutations since the last sync
  std::uint64_t holes_reused_ = 0;
  std::uint64_t syncs_ = 0;
  std::uint64_t mutations_ = 0;
  std::uint64_t durable_mutations_ = 0;
  bool durable_ = false;
  std::uint32_t version_ = 0;        // of the open journal's format
  bool marked_unordered_ = false;    // its durable checkpoint says "unordered"
  std::string failed_;               // why a write or sync failed: changes are refused
  // holes by slot size (smallest that fits wins), their bytes
  class FreeList;
  std::unique_ptr<FreeList> free_;
  // Sync ordering (see the top of this file): holes whose free mark is
  // written but not yet synced; old versions to free after the next sync.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> holes_unsynced_;  // offset, slot
  std::vector<Stale> free_after_sync_;
  // Keys (hashed) with an old version whose free mark is written but not
  // yet synced: removing such a key syncs first, or a power loss could
  // keep the remove and lose the older free mark, bringing the old version back.
  std::unordered_set<std::uint64_t> stale_unsynced_;
  std::vector<std::byte> image_;  // scratch: one encoded record
  mutable std::string key_scratch_;  // scratch: a key read back by a pread backend
  bool closed_ = false;
};

}  // namespace iolab::store
