// Inside the suites: the store suite's KvStore adapters, one a file as fio
// keeps an engine a file; kv_stores.cpp picks one by name.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "iolab/suites/kv_store.h"

namespace iolab::suites::kv {

// The record store with one of its backends (kv_store_record_store.cpp).
std::unique_ptr<KvStore> open_record_store(std::string name, const std::filesystem::path& path,
                                           store::StoreOptions options, std::uint32_t batch);
CommitSemantics record_store_semantics(store::Backend backend, bool sync);

// LMDB (kv_store_lmdb.cpp).
std::unique_ptr<KvStore> open_lmdb(const std::filesystem::path& path, const KvStoreOptions& options);
CommitSemantics lmdb_semantics(bool sync);

// SQLite (kv_store_sqlite.cpp).
std::unique_ptr<KvStore> open_sqlite(const std::filesystem::path& path, const KvStoreOptions& options);
CommitSemantics sqlite_semantics(bool sync);

}  // namespace iolab::suites::kv
