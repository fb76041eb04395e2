// The engines of the store suite by name: RecordStore backends, LMDB,
// SQLite (one adapter a file: kv_store_*.cpp).
#include "iolab/suites/kv_store.h"

#include "kv_adapters.h"

namespace iolab::suites {
namespace {

// The library engine named `method`, if it is one (else a RecordStore backend).
const kv::LibraryEngine* library_engine(std::string_view method) {
  for (const kv::LibraryEngine* e : {&kv::lmdb_engine, &kv::sqlite_engine})
    if (e->name == method) return e;
  return nullptr;
}

}  // namespace

std::unique_ptr<KvStore> open_kv_store(std::string_view method, const std::filesystem::path& path,
                                    const KvStoreOptions& options) {
  if (const kv::LibraryEngine* e = library_engine(method)) return e->open(path, options);
  store::StoreOptions o = options.store;
  o.backend = store::parse_backend(method);
  // With sync, the store owes a sync after every mutation and pays it at
  // each commit: every `batch` mutations (its own count) and at commit().
  constexpr std::uint32_t kNoCount = 0xFFFFFFFFu;  // batch 0: only commit() syncs
  o.sync = options.sync ? io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, options.batch != 0 ? options.batch : kNoCount} : io::FlushPolicy{};
  return kv::open_record_store(std::string(method), path, std::move(o), options.batch);
}

std::vector<std::string> kv_store_names() { return {"fields", "gather", "mmap", "buffered", "lmdb", "sqlite"}; }

CommitSemantics commit_semantics(std::string_view method, bool sync) {
  if (const kv::LibraryEngine* e = library_engine(method)) return e->semantics(sync);
  return kv::record_store_semantics(store::parse_backend(method), sync);
}

}  // namespace iolab::suites
