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
// Crash safety (process crash: SIGKILL, abort): after a put returns with
// sync-every-put, the record survives. A replaced record's old version is
// freed only after the new one is synced, and a freed hole is reused only
// after its free mark is synced, so a power loss cannot leave an
// acknowledged key without any valid version either (when every-put or
// every-N durability is used). Writes into a hole put the header last.
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
#include <vector>

#include "iolab/io/file.h"
#include "iolab/store/employee.h"
#include "iolab/store/journal.h"

namespace iolab::store {

enum class Backend { Fields, Gather, Mmap, Buffered };
std::string_view to_string(Backend b);
// "fields", "gather", "mmap", "buffered"; throws UsageError otherwise.
Backend parse_backend(std::string_view name);
inline constexpr Backend kAllBackends[] = {Backend::Fields, Backend::Gather, Backend::Mmap, Backend::Buffered};

// When written records are made durable.
struct SyncPolicy {
  enum class When { None, EveryN, EveryPut, AtClose } when = When::None;
  std::uint32_t every = 1000;  // EveryN: puts and removes between syncs
  // The call used: Fdatasync or Fsync (mmap uses msync(MS_SYNC) for its mapped range first).
  io::Durability call = io::Durability::Fdatasync;

  static SyncPolicy none() { return {}; }
  static SyncPolicy every_n(std::uint32_t n) { return {When::EveryN, n}; }
  static SyncPolicy every_put() { return {When::EveryPut, 1}; }
  static SyncPolicy at_close() { return {When::AtClose, 0}; }
};
// "none", "every-1000:fdatasync", "every-put:fdatasync", "close:fdatasync".
std::string to_string(const SyncPolicy& p);

struct StoreOptions {
  Backend backend = Backend::Mmap;
  SyncPolicy sync;
  std::size_t mmap_grow_step = std::size_t{1} << 20;   // mmap: file grows by this (the seed used 1 KiB)
  std::size_t stage_buffer = std::size_t{1} << 20;     // buffered: staging buffer bytes
  bool salvage = false;  // open: skip mid-file damage (made into free space) instead of failing
  // compact(): the temporary journal, renamed over the journal when done.
  // Empty: "<journal>.compact" beside it.
  std::filesystem::path compact_path;
};

// What open found and did.
struct OpenReport {
  std::uint64_t records = 0;           // live records indexed
  std::uint64_t free_records = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t torn_tail_bytes = 0;   // truncated: a crash mid-write
  std::uint64_t torn_tail_records = 0;
  std::uint64_t zero_tail_bytes = 0;   // preallocated zeros trimmed (mmap growth), not damage
  std::vector<Damage> salvaged;        // mid-file damage skipped (salvage only)
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
};

class Journal;  // the backend (src/store)

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
  // Rewrites the journal with only live records (temporary file + rename + fsync).
  void compact();
  // Hands staged data to the kernel and syncs whatever the policy still owes.
  void commit();
  StoreStats stats() const;
  const std::filesystem::path& path() const noexcept { return path_; }
  const StoreOptions& options() const noexcept { return options_; }

  // Flushes, syncs when the policy says so, trims preallocation, closes. Twice is harmless.
  void close();

 private:
  struct Location {
    std::uint64_t offset;
    std::uint32_t data_length;
  };
  void open_journal();
  void after_mutation();
  void sync_now();
  void add_hole(std::uint64_t offset, std::uint64_t slot);
  void free_record(const Location& loc);
  std::uint64_t take_hole(std::uint64_t need, std::uint64_t& slot);

  std::filesystem::path path_;
  StoreOptions options_;
  OpenReport report_;
  std::unique_ptr<Journal> journal_;
  class Index;
  std::unique_ptr<Index> index_;
  std::uint64_t end_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t unsynced_ = 0;  // mutations since the last sync
  std::uint64_t holes_reused_ = 0;
  std::uint64_t syncs_ = 0;
  // holes by slot size (smallest that fits wins), their bytes
  class FreeList;
  std::unique_ptr<FreeList> free_;
  // Sync ordering (see the top of this file): holes whose free mark is
  // written but not yet synced; old versions to free after the next sync.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> holes_unsynced_;  // offset, slot
  std::vector<Location> free_after_sync_;
  std::vector<std::byte> image_;  // scratch: one encoded record
  bool closed_ = false;
};

}  // namespace iolab::store
