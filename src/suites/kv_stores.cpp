// The engines of the store suite: RecordStore backends, LMDB, SQLite.
#include "iolab/suites/kv_store.h"

#include <lmdb.h>
#include <sqlite3.h>

#include <algorithm>

#include "iolab/base/error.h"

namespace iolab::suites {
namespace {

using store::Backend;
using store::Employee;
using store::RecordStore;
using store::StoreOptions;
using store::SyncSchedule;

class RecordStoreKvStore final : public KvStore {
 public:
  RecordStoreKvStore(std::string name, const std::filesystem::path& path, StoreOptions o, std::uint32_t batch)
      : name_(std::move(name)), store_(path, std::move(o)), batch_(batch) {}
  std::string_view name() const override { return name_; }
  void put(const Employee& e) override {
    store_.put(e);
    mutated();
  }
  bool get(std::string_view last, Employee& out) override { return store_.get(last, out); }
  bool remove(std::string_view last) override {
    bool removed = store_.remove(last);
    if (removed) mutated();
    return removed;
  }
  std::uint64_t size() override { return store_.size(); }
  // Hands staged bytes to the kernel; with sync, the store's policy syncs what it owes.
  void commit() override {
    store_.commit();
    if (pending_ > 0) ++commits_;
    pending_ = 0;
  }
  void close() override {
    commit();
    store_.close();
  }
  KvStoreCounters counters() const override {
    store::StoreStats s = store_.stats();
    return {s.syscalls, s.bytes_written, s.bytes_read, s.holes_reused, s.free_bytes, commits_, s.syncs};
  }
  KvStoreTraits traits() const override { return {true, true}; }
  static CommitSemantics semantics(Backend b, bool sync) {
    CommitSemantics s;
    s.atomicity = "not atomic across records";
    std::string hands;
    switch (b) {
      case Backend::Fields:
      case Backend::Gather: hands = "nothing to hand over (each put's calls left it in the page cache)"; break;
      case Backend::Mmap: hands = "nothing to hand over (each put is stored into the shared mapping: the page cache)"; break;
      case Backend::Buffered: hands = "the staged bytes written to the kernel (pwrite)"; break;
    }
    if (!sync) {
      s.commit = "not atomic across records: each record is all or nothing (CRC-checked at open), a crash can keep "
                 "any part of a batch; a commit: " + hands +
                 ", nothing flushed: a process crash keeps every record " +
                 (b == Backend::Buffered ? "committed" : "put") + ", a power loss can lose any";
    } else {
      s.commit = "not atomic across records: each record is all or nothing (CRC-checked at open), a power loss can "
                 "keep any part of a batch; a commit: " + hands + ", then " +
                 (b == Backend::Mmap ? "msync(MS_SYNC) of the dirty range" : "fdatasync") +
                 ": every mutation before it is durable";
    }
    switch (b) {
      case Backend::Fields:
      case Backend::Gather: s.close = "closes the journal file"; break;
      case Backend::Mmap: s.close = "unmaps the journal and trims its preallocated growth step (ftruncate)"; break;
      case Backend::Buffered: s.close = "unmaps the read-only map and closes the journal file"; break;
    }
    if (sync) s.close += "; a sync only when the last commit left a mutation unsynced";
    return s;
  }
  std::string describe() const override {
    const StoreOptions& o = store_.options();
    std::string s = "iolab::store backend " + name_;
    if (o.backend == Backend::Mmap) s += ", " + std::to_string(o.mmap_grow_step >> 10) + " KiB growth step";
    if (o.backend == Backend::Buffered) s += ", " + std::to_string(o.stage_buffer >> 10) + " KiB staging buffer";
    return s + (o.sync.when == SyncSchedule::When::None ? ", no sync" : ", fdatasync at each commit");
  }

 private:
  void mutated() {
    ++pending_;
    if (batch_ != 0 && pending_ >= batch_) commit();
  }

  std::string name_;
  RecordStore store_;
  std::uint32_t batch_;
  std::uint32_t pending_ = 0;  // mutations since the last commit
  std::uint64_t commits_ = 0;
};

// ---- LMDB ----

class LmdbKvStore final : public KvStore {
 public:
  LmdbKvStore(const std::filesystem::path& path, const KvStoreOptions& o) : path_(path), batch_(o.batch), sync_(o.sync) {
    check(mdb_env_create(&env_), "mdb_env_create");
    try {
      check(mdb_env_set_mapsize(env_, o.map_bytes), "mdb_env_set_mapsize");
      // One file (NOSUBDIR), no lock file (NOLOCK: one thread of one process uses it).
      unsigned flags = MDB_NOSUBDIR | MDB_NOLOCK | (o.sync ? 0u : MDB_NOSYNC | MDB_NOMETASYNC);
      check(mdb_env_open(env_, path.c_str(), flags, 0644), "mdb_env_open");
      MDB_txn* t = nullptr;
      check(mdb_txn_begin(env_, nullptr, 0, &t), "mdb_txn_begin");
      int rc = mdb_dbi_open(t, nullptr, 0, &dbi_);
      if (rc != 0) {
        mdb_txn_abort(t);
        check(rc, "mdb_dbi_open");
      }
      check(mdb_txn_commit(t), "mdb_txn_commit");
      max_key_ = static_cast<std::size_t>(mdb_env_get_maxkeysize(env_));
    } catch (...) {
      mdb_env_close(env_);
      env_ = nullptr;
      throw;
    }
  }
  ~LmdbKvStore() override {
    try {
      close();
    } catch (...) {
    }
  }

  std::string_view name() const override { return "lmdb"; }

  void put(const Employee& e) override {
    validate(e);
    check_key(e.last);
    value_.clear();
    encode(e, value_);
    MDB_val k{e.last.size(), const_cast<char*>(e.last.data())};
    MDB_val v{value_.size(), value_.data()};
    check(mdb_put(write_txn(), dbi_, &k, &v, 0), "mdb_put");
    wrote();
  }

  bool get(std::string_view last, Employee& out) override {
    if (last.empty() || last.size() > max_key_) return false;
    MDB_txn* t = txn_ != nullptr ? txn_ : read_txn();
    MDB_val k{last.size(), const_cast<char*>(last.data())};
    MDB_val v{};
    int rc = mdb_get(t, dbi_, &k, &v);
    bool found = rc == 0;
    if (rc != 0 && rc != MDB_NOTFOUND) check(rc, "mdb_get");
    // Decoded in place from LMDB's read-only map.
    if (found && !decode({static_cast<const std::byte*>(v.mv_data), v.mv_size}, out))
      throw Error("lmdb get", path_.string(), "a stored value does not decode");
    if (t == rtxn_ && batch_ != 0 && ++reads_ >= batch_) {
      mdb_txn_reset(rtxn_);
      reset_ = true;
      reads_ = 0;
    }
    return found;
  }

  bool remove(std::string_view last) override {
    if (last.empty() || last.size() > max_key_) return false;
    MDB_val k{last.size(), const_cast<char*>(last.data())};
    int rc = mdb_del(write_txn(), dbi_, &k, nullptr);
    if (rc == MDB_NOTFOUND) return false;
    check(rc, "mdb_del");
    wrote();
    return true;
  }

  std::uint64_t size() override {
    MDB_stat st{};
    MDB_txn* t = txn_ != nullptr ? txn_ : read_txn();
    check(mdb_stat(t, dbi_, &st), "mdb_stat");
    return st.ms_entries;
  }

  void commit() override {
    if (txn_ != nullptr) {
      MDB_txn* t = txn_;
      txn_ = nullptr;
      pending_ = 0;
      check(mdb_txn_commit(t), "mdb_txn_commit");
      ++commits_;
    }
    end_read();
  }
  KvStoreCounters counters() const override {
    KvStoreCounters c;
    c.commits = commits_;
    return c;
  }
  static CommitSemantics semantics(bool sync) {
    return {"atomic transaction",
            sync ? "atomic, durable transaction: the copy-on-write B-tree pages written (writev) and fdatasynced, "
                   "then the meta page that switches to them written through an O_DSYNC descriptor"
                 : "atomic transaction: the copy-on-write B-tree pages written (writev), then the meta page that "
                   "switches to them (pwrite); MDB_NOSYNC|MDB_NOMETASYNC, nothing flushed: a process crash keeps "
                   "every committed transaction, a system crash may undo the last ones (or, where the file system "
                   "does not keep write order, corrupt the database)",
            "mdb_env_close: unmaps the map and closes the file; nothing deferred, no sync"};
  }
  std::string describe() const override {
    return lmdb_version() + ", MDB_NOSUBDIR|MDB_NOLOCK, " +
           (sync_ ? "synced commits" : "MDB_NOSYNC|MDB_NOMETASYNC (commits reach the page cache only)");
  }

  void close() override {
    if (env_ == nullptr) return;
    try {
      commit();
    } catch (...) {
      mdb_env_close(env_);
      env_ = nullptr;
      throw;
    }
    mdb_env_close(env_);
    env_ = nullptr;
  }

 private:
  void check(int rc, const char* what) const {
    if (rc != 0) throw Error(std::string("lmdb ") + what, path_.string(), mdb_strerror(rc), rc > 0 ? rc : 0);
  }
  void check_key(const std::string& key) const {
    if (key.size() > max_key_)
      throw Error("lmdb put", path_.string(),
                  "key is " + std::to_string(key.size()) + " bytes; LMDB allows " + std::to_string(max_key_));
  }
  MDB_txn* write_txn() {
    if (txn_ == nullptr) {
      end_read();  // one transaction at a time in this thread
      check(mdb_txn_begin(env_, nullptr, 0, &txn_), "mdb_txn_begin");
    }
    return txn_;
  }
  MDB_txn* read_txn() {
    if (rtxn_ == nullptr) {
      check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &rtxn_), "mdb_txn_begin(read)");
      reset_ = false;
    } else if (reset_) {
      check(mdb_txn_renew(rtxn_), "mdb_txn_renew");
      reset_ = false;
    }
    return rtxn_;
  }
  void end_read() {
    if (rtxn_ != nullptr) mdb_txn_abort(rtxn_);
    rtxn_ = nullptr;
    reads_ = 0;
  }
  void wrote() {
    if (++pending_ >= batch_ && batch_ != 0) commit();
  }

  std::filesystem::path path_;
  std::uint32_t batch_;  // 0: commit only at commit()
  bool sync_;
  std::uint64_t commits_ = 0;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_txn* txn_ = nullptr;   // the open write transaction
  MDB_txn* rtxn_ = nullptr;  // the read transaction (reset between batches)
  bool reset_ = false;
  std::uint32_t pending_ = 0, reads_ = 0;
  std::size_t max_key_ = 511;
  std::vector<std::byte> value_;
};

// ---- SQLite ----

class SqliteKvStore final : public KvStore {
 public:
  SqliteKvStore(const std::filesystem::path& path, const KvStoreOptions& o) : path_(path), batch_(o.batch), sync_(o.sync) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error("sqlite open", path_.string(), msg);
    }
    try {
      // Exclusive locking before WAL: the WAL index lives in heap memory, no -shm file.
      exec("PRAGMA locking_mode=EXCLUSIVE");
      exec("PRAGMA journal_mode=WAL");
      // WAL + FULL syncs the WAL at every commit (NORMAL would not sync commits at all).
      exec(o.sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF");
      // The value is the record's encoding, the same bytes LMDB and our store keep.
      exec("CREATE TABLE IF NOT EXISTS employee(last TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID");
      insert_ = prepare("INSERT OR REPLACE INTO employee VALUES(?1,?2)");
      select_ = prepare("SELECT value FROM employee WHERE last=?1");
      delete_ = prepare("DELETE FROM employee WHERE last=?1");
      count_ = prepare("SELECT count(*) FROM employee");
    } catch (...) {
      finalize();
      throw;
    }
  }
  ~SqliteKvStore() override {
    try {
      close();
    } catch (...) {
    }
  }

  std::string_view name() const override { return "sqlite"; }

  void put(const Employee& e) override {
    validate(e);
    begin();
    value_.clear();
    encode(e, value_);
    bind_text(insert_, 1, e.last);
    sqlite3_bind_blob(insert_, 2, value_.data(), static_cast<int>(value_.size()), SQLITE_STATIC);
    step_done(insert_, "insert");
    wrote_ = true;
    counted();
  }

  bool get(std::string_view last, Employee& out) override {
    begin();
    bind_text(select_, 1, last);
    int rc = sqlite3_step(select_);
    bool found = rc == SQLITE_ROW;
    if (found) {
      const auto* p = static_cast<const std::byte*>(sqlite3_column_blob(select_, 0));
      auto n = static_cast<std::size_t>(sqlite3_column_bytes(select_, 0));
      if (!decode({p, n}, out)) {
        sqlite3_reset(select_);
        throw Error("sqlite get", path_.string(), "a stored value does not decode");
      }
    } else if (rc != SQLITE_DONE) {
      sqlite3_reset(select_);
      fail("select");
    }
    sqlite3_reset(select_);
    counted();
    return found;
  }

  bool remove(std::string_view last) override {
    begin();
    bind_text(delete_, 1, last);
    step_done(delete_, "delete");
    bool removed = sqlite3_changes(db_) > 0;
    wrote_ = wrote_ || removed;
    counted();
    return removed;
  }

  std::uint64_t size() override {
    if (sqlite3_step(count_) != SQLITE_ROW) {
      sqlite3_reset(count_);
      fail("count");
    }
    auto n = static_cast<std::uint64_t>(sqlite3_column_int64(count_, 0));
    sqlite3_reset(count_);
    return n;
  }

  void commit() override {
    if (!in_txn_) return;
    in_txn_ = false;
    ops_ = 0;
    exec("COMMIT");
    if (wrote_) ++commits_;  // a read-only transaction's end commits nothing
    wrote_ = false;
  }
  KvStoreCounters counters() const override {
    KvStoreCounters c;
    c.commits = commits_;
    return c;
  }
  static CommitSemantics semantics(bool sync) {
    return {"atomic transaction",
            sync ? "atomic, durable transaction: its pages appended to the WAL, the last frame marking the commit, "
                   "and the WAL fdatasynced (synchronous=FULL). A commit that leaves 1,000 or more pages in the WAL "
                   "also checkpoints them: the WAL fdatasynced, its pages written into the database file, that "
                   "fdatasynced"
                 : "atomic transaction: its pages appended to the WAL, the last frame marking the commit; "
                   "synchronous=OFF, nothing flushed: a process crash keeps every committed transaction, an OS crash "
                   "or power loss may lose them or corrupt the database. A commit that leaves 1,000 or more pages in "
                   "the WAL also checkpoints them into the database file (PASSIVE)",
            std::string("checkpoints the whole WAL into the database file") +
                (sync ? " (the WAL fdatasynced first, the database after)" : " (no sync)") + " and deletes the WAL"};
  }
  std::string describe() const override {
    return sqlite_version() + ", WAL, locking_mode=EXCLUSIVE, WITHOUT ROWID table (last TEXT key, value BLOB), " +
           (sync_ ? "synchronous=FULL" : "synchronous=OFF (commits reach the page cache only)");
  }

  void close() override {
    if (db_ == nullptr) return;
    try {
      commit();
    } catch (...) {
      finalize();
      throw;
    }
    finalize();
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw Error(std::string("sqlite ") + what, path_.string(), sqlite3_errmsg(db_));
  }
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : "failed";
      sqlite3_free(err);
      throw Error("sqlite", path_.string(), std::string(sql) + ": " + msg);
    }
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) fail("prepare");
    return s;
  }
  static void bind_text(sqlite3_stmt* s, int i, std::string_view t) {
    sqlite3_bind_text(s, i, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
  }
  void step_done(sqlite3_stmt* s, const char* what) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) fail(what);
  }
  void begin() {
    if (in_txn_) return;
    exec("BEGIN");
    in_txn_ = true;
  }
  void counted() {
    if (++ops_ >= batch_ && batch_ != 0) commit();
  }
  void finalize() {
    for (sqlite3_stmt** s : {&insert_, &select_, &delete_, &count_}) {
      sqlite3_finalize(*s);
      *s = nullptr;
    }
    if (db_ != nullptr) {
      int rc = sqlite3_close(db_);
      db_ = nullptr;
      if (rc != SQLITE_OK) throw Error("sqlite close", path_.string(), sqlite3_errstr(rc));
    }
  }

  std::filesystem::path path_;
  std::uint32_t batch_;  // 0: commit only at commit()
  bool sync_;
  std::uint64_t commits_ = 0;
  bool wrote_ = false;  // the open transaction changed something
  std::vector<std::byte> value_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* count_ = nullptr;
  bool in_txn_ = false;
  std::uint32_t ops_ = 0;
};

}  // namespace

std::unique_ptr<KvStore> open_kv_store(std::string_view method, const std::filesystem::path& path,
                                    const KvStoreOptions& options) {
  if (method == "lmdb") return std::make_unique<LmdbKvStore>(path, options);
  if (method == "sqlite") return std::make_unique<SqliteKvStore>(path, options);
  StoreOptions o = options.store;
  o.backend = store::parse_backend(method);
  // With sync, the store owes a sync after every mutation and pays it at
  // each commit: every `batch` mutations (its own count) and at commit().
  constexpr std::uint32_t kNoCount = 0xFFFFFFFFu;  // batch 0: only commit() syncs
  o.sync = options.sync ? SyncSchedule::every_n(options.batch != 0 ? options.batch : kNoCount) : SyncSchedule::none();
  return std::make_unique<RecordStoreKvStore>(std::string(method), path, std::move(o), options.batch);
}

std::vector<std::string> kv_store_names() { return {"fields", "gather", "mmap", "buffered", "lmdb", "sqlite"}; }

CommitSemantics commit_semantics(std::string_view method, bool sync) {
  if (method == "lmdb") return LmdbKvStore::semantics(sync);
  if (method == "sqlite") return SqliteKvStore::semantics(sync);
  return RecordStoreKvStore::semantics(store::parse_backend(method), sync);
}

std::string lmdb_version() {
  int major = 0, minor = 0, patch = 0;
  mdb_version(&major, &minor, &patch);
  return "LMDB " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string sqlite_version() { return std::string("SQLite ") + sqlite3_libversion(); }

}  // namespace iolab::suites
