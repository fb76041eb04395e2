// Key-value stores the `store` suite drives with one workload: our
// RecordStore (each backend) and, for comparison, LMDB and SQLite, all
// storing the same Employee records keyed by last name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/store/employee.h"
#include "iolab/store/record_store.h"

namespace iolab::suites {

// What an engine did, as far as it can tell (0 when it cannot).
struct KvStoreCounters {
  std::uint64_t syscalls = 0;       // 0: unknown (take the kernel's count)
  std::uint64_t bytes_written = 0;  // through calls, or stored into a mapping
  std::uint64_t bytes_read = 0;
  std::uint64_t holes_reused = 0;  // RecordStore: puts that went into freed space
  std::uint64_t free_bytes = 0;    // RecordStore: bytes in holes
  // Commit points that had writes to commit: LMDB write transactions
  // committed, SQLite transactions that wrote, RecordStore commits after
  // mutations. What a table compares must have the same count on every row.
  std::uint64_t commits = 0;
  std::uint64_t syncs = 0;  // RecordStore: fdatasync/msync calls (0 for LMDB, SQLite: not counted)
};

// What an engine is, for the suite (never decided by comparing its name).
struct KvStoreTraits {
  bool counts_own_io = false;        // KvStoreCounters' calls and bytes are its own (else take the kernel's)
  bool rebuilds_index_on_open = false;  // open scans the file (RecordStore); else the index is on disk
};

// Every engine commits at the same points: after each `batch` mutations
// (0: only when commit() is called, once per phase), and at commit().
// What a commit does and gives differs per engine (commit_semantics() says
// it in words for results):
//  - LMDB: a write transaction committed (atomic); SQLite: COMMIT of the
//    open transaction (atomic); RecordStore: staged bytes handed to the
//    kernel (the buffered backend's user-space buffer is written; the other
//    backends' puts are there already), no atomicity across records.
// Durability of a commit:
//  - sync false: page cache only (RecordStore: no sync; LMDB:
//    MDB_NOSYNC|MDB_NOMETASYNC; SQLite: synchronous=OFF)
//  - sync true: flushed (RecordStore: fdatasync, for mmap msync(MS_SYNC)
//    of the dirty range instead; LMDB: a synced commit; SQLite WAL:
//    synchronous=FULL)
// close() does work the commits left: SQLite checkpoints its WAL into the
// database file there; the mmap backend unmaps and trims its preallocation.
// LMDB and SQLite read in one read transaction per `batch` gets (per phase for 0).
// Values are the same bytes everywhere: the record's encoding
// (employee.h, docs/store-format.md), keyed by last name.
struct KvStoreOptions {
  bool sync = false;
  std::uint32_t batch = 1000;  // mutations per commit; 0: one commit per commit() call
  store::StoreOptions store;                   // for the RecordStore engines
  std::uint64_t map_bytes = 1ull << 30; // LMDB's map size
};

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual std::string_view name() const = 0;
  virtual void put(const store::Employee& e) = 0;
  virtual bool get(std::string_view last, store::Employee& out) = 0;
  virtual bool remove(std::string_view last) = 0;
  virtual std::uint64_t size() = 0;
  // End of a phase: commits the open transaction, makes what was written as
  // durable as the options promise.
  virtual void commit() = 0;
  virtual void close() = 0;
  virtual KvStoreCounters counters() const { return {}; }
  virtual KvStoreTraits traits() const { return {}; }
  // What it is and how it is configured, for results ("LMDB 0.9.24, MDB_NOSUBDIR|...").
  virtual std::string describe() const = 0;
};

// "fields", "gather", "mmap", "buffered" (RecordStore backends), "lmdb", "sqlite".
// Opens (or creates, when the file is empty) the database at `path`, which
// must exist. LMDB runs with MDB_NOSUBDIR|MDB_NOLOCK: no other file is made.
// SQLite (WAL, exclusive locking: no -shm file) keeps "<path>-wal" while
// open and removes it at close.
std::unique_ptr<KvStore> open_kv_store(std::string_view method, const std::filesystem::path& path,
                                    const KvStoreOptions& options);
std::vector<std::string> kv_store_names();

// What a commit of engine `method` gives at durability `sync`, in words, and
// what its close() does: a table of engines that commit at the same points
// still compares different work, and every store record says which. Throws
// UsageError for an unknown engine.
struct CommitSemantics {
  std::string atomicity;  // short, for table headings: "atomic transaction", "not atomic across records"
  std::string commit;     // what a commit does, and what survives a process crash or a power loss
  std::string close;      // what close() does beyond the last commit
};
CommitSemantics commit_semantics(std::string_view method, bool sync);

// The library versions, for results: "LMDB 0.9.24", "SQLite 3.40.1".
std::string lmdb_version();
std::string sqlite_version();

}  // namespace iolab::suites
