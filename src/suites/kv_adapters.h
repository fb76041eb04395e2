// Inside the suites: the store suite's KvStore adapters, one a file as fio
// keeps an engine a file; kv_stores.cpp picks one by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/suites/kv_store.h"

namespace iolab::suites::kv {

// The record store with one of its backends (kv_store_record_store.cpp).
std::unique_ptr<KvStore> open_record_store(std::string name, const std::filesystem::path& path,
                                           store::StoreOptions options, std::uint32_t batch);
CommitSemantics record_store_semantics(store::Backend backend, bool sync);

// A library's engine as the store suite picks it by name: how it opens, and
// what its commits give at each durability (commit_semantics()).
struct LibraryEngine {
  std::string_view name;
  std::unique_ptr<KvStore> (*open)(const std::filesystem::path& path, const KvStoreOptions& options);
  CommitSemantics (*semantics)(bool sync);
};
// LMDB (kv_store_lmdb.cpp) and SQLite (kv_store_sqlite.cpp).
extern const LibraryEngine lmdb_engine;
extern const LibraryEngine sqlite_engine;

// LibraryEngine::open for the adapter class `Store`.
template <typename Store>
std::unique_ptr<KvStore> open_library_store(const std::filesystem::path& path, const KvStoreOptions& options) {
  return std::make_unique<Store>(path, options);
}

// What the LMDB and SQLite adapters share: their engine's name, their file,
// the operations a transaction holds before it commits, the commits counted,
// and an open and a close that free the library's handle when they fail.
class LibraryKvStore : public KvStore {
 public:
  KvStoreCounters counters() const override {
    KvStoreCounters c;
    c.commits = commits_;
    return c;
  }
  std::string_view name() const final { return engine_.name; }
  void close() final {
    if (!is_open()) return;
    releasing_on_failure([this] { commit(); });
    release();
  }

 protected:
  LibraryKvStore(const LibraryEngine& engine, const std::filesystem::path& path, const KvStoreOptions& o)
      : path_(path), batch_(o.batch), sync_(o.sync), engine_(engine) {}
  // Runs `step` (the adapter's opening, the last commit), freeing the
  // library's handle if it throws.
  template <typename Step>
  void releasing_on_failure(Step step) {
    try {
      step();
    } catch (...) {
      release();
      throw;
    }
  }
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

 private:
  const LibraryEngine& engine_;
};

}  // namespace iolab::suites::kv
