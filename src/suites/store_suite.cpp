// seed 000: the employee record store. The same workload on every backend
// of iolab::store (fields, gather, mmap, buffered) and on LMDB and SQLite:
// insert all records; get all in a random order (fixed seed), checking every
// field; remove 10%; insert 10% new ones (into the freed space); reopen
// (our store rebuilds its index from the journal). Once with no durability,
// once with a sync every 1000 mutations. Each phase is one result: suite
// "store", method = engine, op = phase.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include "iolab/io/copy.h"
#include "iolab/store/engine.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using store::Employee;
using store::Engine;


// The records: keys are unique (an odd multiplier is a bijection on 32 bits),
// not in sorted order, and the sizes vary like names and comments do.
struct Workload {
  std::uint64_t n = 0;
  std::vector<Employee> records;         // inserted first
  std::vector<Employee> fresh;           // inserted after the removal (n / 10)
  std::vector<std::uint32_t> get_order;  // a permutation of records
  std::vector<std::uint32_t> removed;    // n / 10 of records
  std::uint64_t data_bytes = 0;          // encoded bytes of `records`
  // What the timed loops read, laid out in the order they read it, so the
  // workload's own data costs no cache misses (the same for every engine):
  // keys in one arena, and a digest of every field of each expected record.
  std::string key_arena;
  std::vector<std::string_view> get_keys, remove_keys;
  std::vector<std::uint64_t> get_digests;
};

// XXH3 over every field: a get is checked by comparing the digest of what
// came back with the digest of what was written (64 bits: a wrong field
// goes unnoticed with probability 2^-64).
std::uint64_t digest(const Employee& e) {
  std::uint64_t h = XXH3_64bits_withSeed(e.last.data(), e.last.size(), 0);
  h = XXH3_64bits_withSeed(e.first.data(), e.first.size(), h);
  h = XXH3_64bits_withSeed(e.comments.data(), e.comments.size(), h);
  return h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.id)) << 32 |
              static_cast<std::uint32_t>(e.zip)) * 0x9E3779B97F4A7C15ull ^ (e.employed ? 0x5555u : 0xAAAAu);
}

Employee make_record(std::uint64_t i) {
  static const char* const kLast[] = {"Smith", "Zhang", "Garcia", "Muller", "Rossi", "Kowalski", "Nguyen", "Silva",
                                      "Okafor", "Tanaka", "Dubois", "Novak", "Haddad", "Larsen", "Moreau", "Ivanova"};
  static const char* const kFirst[] = {"Ana", "Wei", "Maria", "Jonas", "Luca", "Ewa", "Minh", "Joao",
                                       "Chidi", "Yuki", "Claire", "Petr", "Rania", "Sofie", "Hugo", "Olga"};
  static const std::string kText =
      "joined the team in spring; prefers written notes; on call every third week; speaks three languages; "
      "mentor for new hires; ";
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  Employee e;
  std::uint32_t tag = static_cast<std::uint32_t>(i) * 2654435761u;  // unique per i
  char buf[16];
  std::snprintf(buf, sizeof buf, "-%08x", tag);
  e.last = std::string(kLast[h % 16]) + buf;
  e.first = kFirst[(h >> 8) % 16];
  e.id = static_cast<std::int32_t>(i);
  e.zip = static_cast<std::int32_t>(10000 + (h >> 16) % 90000);
  e.employed = ((h >> 40) & 1) != 0;
  std::size_t len = 20 + (h >> 44) % 61;  // 20..80 bytes
  std::size_t from = (h >> 24) % 40;
  e.comments = kText.substr(from, len);
  return e;
}

Workload make_workload(std::uint64_t n, std::uint64_t seed) {
  Workload w;
  w.n = n;
  w.records.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    w.records.push_back(make_record(i));
    w.data_bytes += store::encoded_size(w.records.back());
  }
  for (std::uint64_t i = 0; i < n / 10; ++i) w.fresh.push_back(make_record(n + i));
  std::mt19937_64 rng(seed);
  w.get_order.resize(n);
  std::iota(w.get_order.begin(), w.get_order.end(), 0u);
  std::shuffle(w.get_order.begin(), w.get_order.end(), rng);
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), rng);
  w.removed.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(n / 10));
  std::size_t arena = 0;
  for (std::uint32_t i : w.get_order) arena += w.records[i].last.size();
  for (std::uint32_t i : w.removed) arena += w.records[i].last.size();
  w.key_arena.reserve(arena);  // never reallocated below: the views stay valid
  auto add_key = [&w](const std::string& k) {
    std::size_t at = w.key_arena.size();
    w.key_arena += k;
    return std::string_view(w.key_arena.data() + at, k.size());
  };
  for (std::uint32_t i : w.get_order) {
    w.get_keys.push_back(add_key(w.records[i].last));
    w.get_digests.push_back(digest(w.records[i]));
  }
  for (std::uint32_t i : w.removed) w.remove_keys.push_back(add_key(w.records[i].last));
  return w;
}

// rchar / wchar of this process (/proc/self/io): bytes through read- and
// write-like calls, for the engines that do not count their own.
struct ProcIo {
  std::uint64_t rchar = 0, wchar = 0;
};
ProcIo proc_io() {
  ProcIo p;
  std::ifstream in("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") p.rchar = value;
    if (key == "wchar:") p.wchar = value;
  }
  return p;
}

bool is_ours(const std::string& method) { return method != "lmdb" && method != "sqlite"; }

// The seed's figures (Java, their machine, 100,000 records), for the
// analogues of its three versions; scaled linearly when n differs.
std::optional<harness::Reference> seed_reference(const std::string& method, const std::string& phase,
                                                 std::uint64_t n) {
  double ms = 0;
  if (phase == "insert") ms = method == "fields" ? 10000 : method == "gather" ? 2000 : method == "mmap" ? 970 : 0;
  if (phase == "get") ms = method == "fields" ? 6900 : method == "gather" ? 1400 : method == "mmap" ? 355 : 0;
  if (ms == 0) return std::nullopt;
  const char* java = method == "fields" ? "java.io RandomAccessFile" : method == "gather" ? "java.nio FileChannel"
                                                                                          : "MappedByteBuffer";
  std::string source = std::string("seed 000: Java, their machine; ") + java;
  if (n == 100000) return harness::Reference{source, ms, "ms"};
  return harness::Reference{source + ", " + std::to_string(static_cast<long long>(ms)) +
                                " ms for 100,000 scaled linearly to " + std::to_string(n),
                            ms * static_cast<double>(n) / 100000.0, "ms"};
}

// One engine through the five phases, for one durability.
class EngineRun {
 public:
  EngineRun(harness::Runner& runner, const Workload& w, std::string method, bool sync, std::uint64_t map_bytes)
      : runner_(runner), w_(w), method_(std::move(method)), sync_(sync) {
    options_.sync = sync;
    options_.batch = 1000;
    options_.map_bytes = map_bytes;
  }
  ~EngineRun() {
    try {
      close_engine();
    } catch (...) {
    }
    for (const auto& p : files_) remove_file(p);
  }

  std::vector<harness::Result> run() {
    std::vector<harness::Result> out;
    out.push_back(insert());
    out.push_back(get());
    out.push_back(remove());
    out.push_back(reinsert());
    out.push_back(reopen());
    return out;
  }

 private:
  harness::SyncPolicy sync_policy() const {
    return sync_ ? harness::SyncPolicy{harness::FlushSchedule::EveryOps, io::Durability::Fdatasync, 1000}
                 : harness::SyncPolicy{};
  }
  std::string sync_label() const { return harness::to_string(sync_policy()); }

  harness::Result labels(const std::string& phase) const {
    harness::Result r;
    r.suite = "store";
    r.experiment = count_label(w_.n) + " records: " + phase + ", sync " + sync_label();
    r.method = method_;
    r.op = harness::parse_op_name(phase);
    r.pattern = phase == "get" || phase == "remove" ? harness::AccessPattern::Rand : harness::AccessPattern::Seq;
    r.block_size = 0;
    r.buffer.reset();
    if (phase == "insert") r.cache.reset();
    else r.cache = harness::CacheState::Warm;
    r.cache_method = phase == "insert" ? "fresh file" : "just written";
    r.sync = sync_policy();
    r.reference = sync_ ? std::nullopt : seed_reference(method_, phase, w_.n);
    r.extra = {{"records", w_.n}, {"record_data_bytes", w_.data_bytes}};
    if (method_ == "lmdb")
      r.extra["engine"] = store::lmdb_version() + ", MDB_NOSUBDIR|MDB_NOLOCK" +
                          (sync_ ? ", synced commit every 1000 mutations" : ", MDB_NOSYNC|MDB_NOMETASYNC, commit every 1000");
    else if (method_ == "sqlite")
      r.extra["engine"] = store::sqlite_version() + ", WAL, locking_mode=EXCLUSIVE, WITHOUT ROWID table keyed by last, " +
                          (sync_ ? "synchronous=FULL" : "synchronous=OFF") + ", one transaction per 1000 operations";
    else
      r.extra["engine"] = "iolab::store backend " + method_ + (method_ == "mmap" ? ", 1 MiB growth step" : "") +
                          (method_ == "buffered" ? ", 1 MiB staging buffer" : "");
    return r;
  }

  std::filesystem::path new_file(const std::string& phase) {
    auto p = runner_.scratch().create_unique_file("store-" + method_ + (sync_ ? "-sync-" : "-") + phase);
    files_.push_back(p);
    return p;
  }
  void remove_file(const std::filesystem::path& p) {
    // SQLite removes its -wal at close; should a failure leave one, it is ours to remove.
    std::error_code ec;
    std::filesystem::remove(p.string() + "-wal", ec);
    try {
      runner_.scratch().remove_file(p);
    } catch (...) {
    }
    files_.erase(std::remove(files_.begin(), files_.end(), p), files_.end());
  }
  // Through iolab's read/write loop: its errors name the file and the cause,
  // where std::filesystem::copy_file reports a full disk as EIO.
  static void copy_store(const std::filesystem::path& from, const std::filesystem::path& to) {
    io::find_copy_method("readwrite").copy(from, to);
  }
  void open_engine(const std::filesystem::path& p) { engine_ = store::open_engine(method_, p, options_); }
  void close_engine() {
    if (engine_) {
      auto e = std::move(engine_);
      e->close();
    }
  }

  // Counters around the timed region, read outside it (untimed prepare and
  // cleanup): the engine's own (ours), else the kernel's /proc/self/io.
  struct Mark {
    store::EngineCounters c;
    ProcIo io;
  };
  Mark mark() const { return {engine_ ? engine_->counters() : store::EngineCounters{}, proc_io()}; }
  void begin_rep() { before_ = mark(); }
  // The end of the timed region: our engines' call count (no system call to get it).
  harness::Repetition timed_rep(std::uint64_t ops) const {
    harness::Repetition rep;
    rep.ops = ops;
    // 0 (mmap gets make no call) reads as "unknown": the runner then takes the kernel's count, also 0.
    if (is_ours(method_) && engine_) rep.io_calls = engine_->counters().syscalls - before_.c.syscalls;
    return rep;
  }
  void end_rep() {
    Mark after = mark();
    if (is_ours(method_)) {
      last_written_ = after.c.bytes_written - before_.c.bytes_written;
      last_read_ = after.c.bytes_read - before_.c.bytes_read;
    } else {
      last_written_ = after.io.wchar - before_.io.wchar;
      last_read_ = after.io.rchar - before_.io.rchar;
    }
  }
  void add_extra(harness::Result& r, const std::filesystem::path& file) {
    r.extra["bytes_written"] = last_written_;
    r.extra["bytes_read"] = last_read_;
    r.extra["bytes_source"] = is_ours(method_) ? "the store's own counters (mmap: bytes stored into the mapping)"
                                               : "/proc/self/io rchar/wchar deltas";
    // In extra, not file_size: sizes differ per engine and would split the table's rows.
    std::error_code ec;
    auto size = std::filesystem::file_size(file, ec);
    if (!ec) r.extra["file_bytes"] = size;
  }

  harness::Result insert() {
    auto ok = std::make_shared<bool>(true);
    harness::CustomExperiment c;
    c.labels = labels("insert");
    c.prepare = [this] {
      if (!work_.empty()) remove_file(work_);
      work_ = new_file("insert");
      open_engine(work_);
      begin_rep();
    };
    c.timed = [this] {
      for (const Employee& e : w_.records) engine_->put(e);
      engine_->commit();
      return timed_rep(w_.n);
    };
    c.cleanup = [this, ok] {
      end_rep();
      if (engine_ && engine_->size() != w_.n) *ok = false;
      close_engine();
    };
    c.verify = [ok] { return *ok; };
    harness::Result r = runner_.run(c);
    full_ = work_;  // the last repetition's journal feeds the next phases
    work_.clear();
    add_extra(r, full_);
    return r;
  }

  harness::Result get() {
    auto bad = std::make_shared<std::uint64_t>(0);
    harness::CustomExperiment c;
    c.labels = labels("get");
    c.prepare = [this] {
      if (!engine_) open_engine(full_);  // once: gets change nothing
      begin_rep();
    };
    c.timed = [this, bad] {
      Employee got;
      for (std::size_t j = 0; j < w_.get_keys.size(); ++j)
        if (!engine_->get(w_.get_keys[j], got) || digest(got) != w_.get_digests[j]) ++*bad;  // every field
      return timed_rep(w_.n);
    };
    c.cleanup = [this] { end_rep(); };
    c.verify = [bad] { return *bad == 0; };
    harness::Result r = runner_.run(c);
    close_engine();
    add_extra(r, full_);
    r.extra["verified_by"] = "XXH3 digest of every field of each record got, against the record written";
    return r;
  }

  harness::Result remove() {
    auto ok = std::make_shared<bool>(true);
    harness::CustomExperiment c;
    c.labels = labels("remove");
    c.prepare = [this] {
      if (!work_.empty()) remove_file(work_);
      work_ = new_file("remove");
      copy_store(full_, work_);
      open_engine(work_);
      begin_rep();
    };
    c.timed = [this, ok] {
      for (std::string_view key : w_.remove_keys)
        if (!engine_->remove(key)) *ok = false;
      engine_->commit();
      return timed_rep(w_.removed.size());
    };
    c.cleanup = [this, ok] {
      end_rep();
      if (engine_ && engine_->size() != w_.n - w_.removed.size()) *ok = false;
      close_engine();
    };
    c.verify = [ok] { return *ok; };
    harness::Result r = runner_.run(c);
    after_remove_ = work_;
    work_.clear();
    add_extra(r, after_remove_);
    return r;
  }

  harness::Result reinsert() {
    auto ok = std::make_shared<bool>(true);
    auto holes = std::make_shared<std::uint64_t>(0);
    harness::CustomExperiment c;
    c.labels = labels("reinsert");
    c.prepare = [this] {
      if (!work_.empty()) remove_file(work_);
      work_ = new_file("reinsert");
      copy_store(after_remove_, work_);
      open_engine(work_);
      begin_rep();
    };
    c.timed = [this] {
      for (const Employee& e : w_.fresh) engine_->put(e);
      engine_->commit();
      return timed_rep(w_.fresh.size());
    };
    c.cleanup = [this, ok, holes] {
      end_rep();
      if (engine_ && engine_->size() != w_.n - w_.removed.size() + w_.fresh.size()) *ok = false;
      if (engine_) *holes = engine_->counters().holes_reused;
      close_engine();
    };
    c.verify = [ok] { return *ok; };
    harness::Result r = runner_.run(c);
    final_ = work_;
    work_.clear();
    add_extra(r, final_);
    if (is_ours(method_)) r.extra["holes_reused"] = *holes;
    return r;
  }

  harness::Result reopen() {
    auto ok = std::make_shared<bool>(true);
    harness::CustomExperiment c;
    c.labels = labels("reopen");
    std::uint64_t expect = w_.n - w_.removed.size() + w_.fresh.size();
    c.prepare = [this] { begin_rep(); };  // no engine open: counters start at zero
    c.timed = [this, ok, expect] {
      open_engine(final_);  // ours: scan, CRC-check and index every record
      if (engine_->size() != expect) *ok = false;
      return timed_rep(expect);
    };
    c.cleanup = [this] {
      end_rep();
      close_engine();
    };
    // Untimed, once: every record that should be there is, field for field.
    c.verify = [this, ok] {
      if (!*ok) return false;
      open_engine(final_);
      std::vector<bool> gone(w_.n, false);
      for (std::uint32_t i : w_.removed) gone[i] = true;
      Employee got;
      bool good = true;
      for (std::uint64_t i = 0; i < w_.n && good; ++i) {
        bool found = engine_->get(w_.records[i].last, got);
        good = gone[i] ? !found : found && got == w_.records[i];
      }
      for (const Employee& e : w_.fresh) good = good && engine_->get(e.last, got) && got == e;
      close_engine();
      return good;
    };
    harness::Result r = runner_.run(c);
    add_extra(r, final_);
    r.extra["what_is_timed"] = is_ours(method_) ? "open: scan the journal, check every CRC, rebuild the index"
                                                : "open the database and count its rows (no index to rebuild)";
    return r;
  }

  harness::Runner& runner_;
  const Workload& w_;
  std::string method_;
  bool sync_;
  store::EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  std::filesystem::path work_, full_, after_remove_, final_;
  std::vector<std::filesystem::path> files_;
  Mark before_;
  std::uint64_t last_written_ = 0, last_read_ = 0;
};

class StoreSuite final : public Suite {
 public:
  std::string_view name() const override { return "store"; }
  std::string_view seed() const override { return "000"; }
  std::string_view description() const override {
    return "employee record store: insert, random get, remove 10%, reinsert 10%, reopen; fields / gather / mmap / "
           "buffered backends beside LMDB and SQLite";
  }

  void check(const SuiteOptions& options) const override {
    const std::uint64_t n = options.records;
    if (n != 0 && n < 10) throw UsageError("--records " + std::to_string(n), "the store suite needs at least 10 records");
    if (n > 50000000) throw UsageError("--records " + std::to_string(n), "at most 50,000,000 (all are kept in memory)");
  }

  std::vector<harness::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    check(options);
    std::uint64_t n = options.records != 0
                          ? options.records
                          : by_scale<std::uint64_t>(options.scale, 2000, 20000, 100000, 100000);
    Workload w = make_workload(n, runner.config().seed);
    // LMDB's map must hold the data with B-tree overhead; the file stays sparse.
    std::uint64_t map_bytes = std::max<std::uint64_t>(64 * MiB, w.data_bytes * 4);
    std::vector<harness::Result> out;
    for (bool sync : {false, true}) {
      for (const std::string& method : store::engine_names()) {
        EngineRun run(runner, w, method, sync, map_bytes);
        for (auto& r : run.run()) out.push_back(std::move(r));
      }
    }
    return out;
  }
};

const StoreSuite instance;
const SuiteRegistration registration{80, &instance};

}  // namespace
}  // namespace iolab::suites
