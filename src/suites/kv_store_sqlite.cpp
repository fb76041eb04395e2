// SQLite as a KvStore (WAL, exclusive locking: no -shm file).
#include "kv_adapters.h"

#include <sqlite3.h>

#include <algorithm>

#include "iolab/base/error.h"

namespace iolab::suites::kv {
namespace {

using store::Employee;

class SqliteKvStore final : public LibraryKvStore {
 public:
  SqliteKvStore(const std::filesystem::path& path, const KvStoreOptions& o) : LibraryKvStore(sqlite_engine, path, o) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error("sqlite open", path_.string(), msg);
    }
    releasing_on_failure([&] {
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
    });
  }
  ~SqliteKvStore() override { close_quietly(); }

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
    in_batch_ = 0;
    exec("COMMIT");
    if (wrote_) ++commits_;  // a read-only transaction's end commits nothing
    wrote_ = false;
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

 private:
  bool is_open() const override { return db_ != nullptr; }
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
  void release() override {
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

  bool wrote_ = false;  // the open transaction changed something
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* select_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
  sqlite3_stmt* count_ = nullptr;
  bool in_txn_ = false;
};

}  // namespace

const LibraryEngine sqlite_engine{"sqlite", open_library_store<SqliteKvStore>, SqliteKvStore::semantics};

}  // namespace iolab::suites::kv

namespace iolab::suites {

std::string sqlite_version() { return std::string("SQLite ") + sqlite3_libversion(); }

}  // namespace iolab::suites
