// LMDB as a KvStore (MDB_NOSUBDIR|MDB_NOLOCK: one file, no lock file).
#include "kv_adapters.h"

#include <lmdb.h>

#include <algorithm>

#include "iolab/base/error.h"

namespace iolab::suites::kv {
namespace {

using store::Employee;

class LmdbKvStore final : public LibraryKvStore {
 public:
  LmdbKvStore(const std::filesystem::path& path, const KvStoreOptions& o) : LibraryKvStore(lmdb_engine, path, o) {
    check(mdb_env_create(&env_), "mdb_env_create");
    releasing_on_failure([&] {
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
    });
  }
  ~LmdbKvStore() override { close_quietly(); }

  void put(const Employee& e) override {
    validate(e);
    check_key(e.last);
    value_.clear();
    encode(e, value_);
    MDB_val k{e.last.size(), const_cast<char*>(e.last.data())};
    MDB_val v{value_.size(), value_.data()};
    check(mdb_put(write_txn(), dbi_, &k, &v, 0), "mdb_put");
    counted();
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
    counted();
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
      in_batch_ = 0;
      check(mdb_txn_commit(t), "mdb_txn_commit");
      ++commits_;
    }
    end_read();
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

 private:
  bool is_open() const override { return env_ != nullptr; }
  void release() override {
    mdb_env_close(env_);
    env_ = nullptr;
  }
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

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_txn* txn_ = nullptr;   // the open write transaction
  MDB_txn* rtxn_ = nullptr;  // the read transaction (reset between batches)
  bool reset_ = false;
  std::uint32_t reads_ = 0;
  std::size_t max_key_ = 511;
};

}  // namespace

const LibraryEngine lmdb_engine{"lmdb", open_library_store<LmdbKvStore>, LmdbKvStore::semantics};

}  // namespace iolab::suites::kv

namespace iolab::suites {

std::string lmdb_version() {
  int major = 0, minor = 0, patch = 0;
  mdb_version(&major, &minor, &patch);
  return "LMDB " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace iolab::suites
