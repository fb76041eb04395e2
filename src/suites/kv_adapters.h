// Inside the suites: the store suite's KvStore adapters, one a file as fio
// keeps an engine a file; kv_stores.cpp picks one by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "iolab/suites/kv_store.h"

namespace iolab::suites::kv {

// The record store with one of its backends (kv_store_record_store.cpp).
std::unique_ptr<KvStore> open_record_store(std::string name, const std::filesystem::path& path,
                                           store::StoreOptions options, std::uint32_t batch);
CommitSemantics record_store_semantics(store::Backend backend, bool sync);

// What the LMDB and SQLite adapters share: their file, the operations a
// transaction holds before it commits, the commits counted, and a close that
// frees the library's handle even when the last commit fails.
class LibraryKvStore : public KvStore {
 public:
  KvStoreCounters counters() const override {
    KvStoreCounters c;
    c.commits = commits_;
    return c;
  }
  void close() final {
    if (!is_open()) return;
    try {
      commit();
    } catch (...) {
      release();
      throw;
    }
    release();
  }

 protected:
  LibraryKvStore(const std::filesystem::path& path, const KvStoreOptions& o)
      : path_(path), batch_(o.batch), sync_(o.sync) {}
  // For the adapter's destructor, which must not throw where close() may.
  void close_quietly() noexcept {
    try {
      close();
    } catch (...) {
    }
  }
  // One more operation in the open transaction: a full batch commits.
  void counted() {
    if (++in_batch_ >= batch_ && batch_ != 0) commit();
  }
  virtual bool is_open() const = 0;
  virtual void release() = 0;  // frees the handle (is_open() false after it), without a commit

  std::filesystem::path path_;
  std::uint32_t batch_;  // 0: commit only at commit()
  bool sync_;
  std::uint64_t commits_ = 0;
  std::uint32_t in_batch_ = 0;    // operations since the last commit; the adapter's commit() zeroes it
  std::vector<std::byte> value_;  // a record's encoding, reused
};

// LMDB (kv_store_lmdb.cpp).
std::unique_ptr<KvStore> open_lmdb(const std::filesystem::path& path, const KvStoreOptions& options);
CommitSemantics lmdb_semantics(bool sync);

// SQLite (kv_store_sqlite.cpp).
std::unique_ptr<KvStore> open_sqlite(const std::filesystem::path& path, const KvStoreOptions& options);
CommitSemantics sqlite_semantics(bool sync);

}  // namespace iolab::suites::kv
