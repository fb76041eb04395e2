// One engine of the store suite through its phases at one commit cadence
// (store_data_set.h, run_kv_store): each phase timed as the engine's records,
// verified untimed, with the seed's figure beside it where it published one.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/core.h>

#include "iolab/base/proc.h"
#include "iolab/io/copy.h"
#include "iolab/suites/kv_store.h"
#include "seed_common.h"
#include "store_data_set.h"

namespace iolab::suites {

namespace {

using namespace seeds;
using namespace store_suite;
using store::Employee;

// Seed 000's figures (Java, their machine, 100,000 records) for the
// analogues of its three versions, as data. Its MappedByteBuffer insert
// calls force() at each growth step (1 KiB): a flushing figure, set only
// beside a flushing row; the others never flush.
struct SeedFigure {
  std::string_view method;
  std::string_view java;
  double insert_ms, get_ms;
  bool insert_flushes;
};
constexpr SeedFigure kSeedFigures[] = {
    {"fields", "java.io RandomAccessFile", 10000, 6900, false},
    {"gather", "java.nio FileChannel", 2000, 1400, false},
    {"mmap", "MappedByteBuffer", 970, 355, true},
};

// The seed's figure for this row, or none: inserts that flushed only beside
// the table that flushes most (fdatasync every 1,000 ops), the rest beside
// the page-cache table with one commit per phase (the seed's Java committed nothing).
std::optional<results::Reference> seed_reference(const std::string& method, results::Op op, const Cadence& cadence,
                                                 std::uint64_t n) {
  auto it = std::find_if(std::begin(kSeedFigures), std::end(kSeedFigures),
                         [&](const SeedFigure& f) { return f.method == method; });
  if (it == std::end(kSeedFigures)) return std::nullopt;
  bool flushed = op == results::Op::Insert && it->insert_flushes;
  bool row_flushes = cadence.fdatasync && cadence.every != 0;
  bool row_quiet = !cadence.fdatasync && cadence.every == 0;
  if (flushed ? !row_flushes : !row_quiet) return std::nullopt;
  double ms = op == results::Op::Insert ? it->insert_ms : op == results::Op::Get ? it->get_ms : 0;
  if (ms == 0) return std::nullopt;
  std::string source = "seed 000: Java, their machine; " + std::string(it->java);
  if (flushed)
    source += " with force() at each growth step (1 KiB: about every 10 records; ours here: fdatasync every 1,000)";
  if (n == 100000) return results::Reference{source, ms, "ms"};
  return results::Reference{source + ", " + std::to_string(static_cast<long long>(ms)) +
                                " ms for 100,000 scaled linearly to " + std::to_string(n),
                            ms * static_cast<double>(n) / 100000.0, "ms"};
}

// What each engine's commits give at this durability, in every table's
// heading: the engines of a table commit at the same points, but not the
// same work ("commits: not atomic across records (fields, ...), atomic
// transaction (lmdb, sqlite)").
std::string commits_heading(bool sync) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // atomicity, its engines
  for (const std::string& m : kv_store_names()) {
    std::string a = commit_semantics(m, sync).atomicity;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == a; });
    if (it == groups.end()) groups.push_back({a, {m}});
    else it->second.push_back(m);
  }
  std::string out = "commits: ";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    out += (i == 0 ? "" : ", ") + groups[i].first + " (";
    for (std::size_t j = 0; j < groups[i].second.size(); ++j) out += (j == 0 ? "" : ", ") + groups[i].second[j];
    out += ")";
  }
  return out;
}

// One engine through the phases, at one commit cadence.
class KvStorePhases {
 public:
  // `published_only`: the phases the seed published figures for (insert and
  // get), for the quick scale. `open`: open_kv_store() when empty.
  KvStorePhases(harness::Runner& runner, const StoreDataSet& w, std::string method, const Cadence& cadence,
            std::uint64_t map_bytes, bool published_only, KvStoreOpener open)
      : runner_(runner), w_(w), method_(std::move(method)), cadence_(cadence), published_only_(published_only),
        open_(std::move(open)), semantics_(commit_semantics(method_, cadence.fdatasync)) {
    options_.sync = cadence.fdatasync;
    options_.batch = cadence.every;
    options_.map_bytes = map_bytes;
  }
  ~KvStorePhases() {
    try {
      close_engine();
    } catch (...) {
    }
    while (!files_.empty()) remove_file(files_.back());  // remove_file erases from files_
  }

  // Gets and reopen write nothing: they run in the page-cache tables only.
  std::vector<results::Result> run() {
    const bool reads = !cadence_.fdatasync;
    std::vector<results::Result> out;
    out.push_back(insert());
    if (reads) out.push_back(get());
    if (published_only_) return out;
    out.push_back(remove());
    out.push_back(reinsert());
    if (reads) out.push_back(reopen());
    return out;
  }

 private:
  io::FlushPolicy sync_policy() const {
    if (!cadence_.fdatasync) return {};
    if (cadence_.every == 0) return {io::FlushSchedule::End, io::Durability::Fdatasync, 0};
    return {io::FlushSchedule::EveryOps, io::Durability::Fdatasync, cadence_.every};
  }

  results::Result labels(results::Op op) const {
    results::Result r;
    r.suite = "store";
    // Key order and value bytes are the same in every table and engine: stated in its heading.
    r.experiment = fmt::format("{} records (random key order; value: the encoded employee record, {}-{} B): {}, {}; {}",
                               count_label(w_.n), w_.min_value, w_.max_value, results::to_string(op), cadence_.label,
                               commits_heading(cadence_.fdatasync));
    r.method = method_;
    r.op = op;
    if (op != results::Op::Reopen) r.pattern = results::AccessPattern::Rand;  // key order; reopen reads the file
    r.block_size = 0;
    r.buffer.reset();
    if (op == results::Op::Insert) r.cache.reset();
    else r.cache = results::CacheState::Warm;
    r.cache_method = op == results::Op::Insert ? "fresh file" : "just written";
    r.sync = sync_policy();
    r.reference = seed_reference(method_, op, cadence_, w_.n);
    r.extra = {{"records", w_.n},
               {"record_data_bytes", w_.data_bytes},
               {"key_order", "random: keys (last names, ~17 B) inserted in an order unrelated to key order; gets in a "
                             "shuffled order, removes of a shuffled tenth"},
               {"value_encoding", fmt::format("the employee record's binary encoding (docs/store-format.md), {}-{} B, "
                                              "mean {:.0f} B; the same bytes in every engine",
                                              w_.min_value, w_.max_value,
                                              static_cast<double>(w_.data_bytes) / static_cast<double>(w_.n))},
               {"commit_every_ops", cadence_.every},
               {"commit_durability", cadence_.fdatasync ? "flushed (fdatasync; msync(MS_SYNC) of the dirty range for mmap)"
                                                        : "page cache only (nothing flushed)"},
               {"commit_atomicity", semantics_.atomicity},
               {"commit_does", semantics_.commit},
               {"close_does", semantics_.close}};
    return r;
  }

  std::filesystem::path new_file(const std::string& phase) {
    auto p = runner_.scratch().create_unique_file("store-" + method_ + "-" + phase);
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
  void open_store(const std::filesystem::path& p, results::Op phase) {
    engine_ = open_ ? open_(method_, p, options_, phase) : open_kv_store(method_, p, options_);
    traits_ = engine_->traits();
    description_ = engine_->describe();
  }
  void close_engine() {
    if (engine_) {
      auto e = std::move(engine_);
      e->close();
    }
  }
  // Untimed, after the last pass of `phase`: every record read back from the store that pass left.
  bool holds(const std::filesystem::path& p, Stage stage, results::Op phase) {
    open_store(p, phase);
    std::string why = check_contents(*engine_, w_, stage);
    close_engine();
    return reported(p, why);
  }
  bool reported(const std::filesystem::path& p, const std::string& why) const {
    if (!why.empty()) std::fprintf(stderr, "iolab: store %s, %s: %s\n", method_.c_str(), p.c_str(), why.c_str());
    return why.empty();
  }

  // Counters around the timed region, read outside it (untimed prepare and
  // cleanup): the engine's own, and the kernel's /proc/self/io for engines
  // that do not count their calls and bytes.
  struct Mark {
    KvStoreCounters c;
    proc::IoAccounting io;  // rchar / wchar: bytes through read- and write-like calls, for engines that do not count their own
  };
  Mark mark() const { return {engine_ ? engine_->counters() : KvStoreCounters{}, proc::read_io().value_or(proc::IoAccounting{})}; }
  void begin_rep() { before_ = mark(); }
  // The end of the timed region: our engines' call count (no system call to get it).
  harness::Repetition timed_rep(std::uint64_t ops) const {
    harness::Repetition rep;
    rep.ops = ops;
    // 0 (mmap gets make no call) reads as "unknown": the runner then takes the kernel's count, also 0.
    if (traits_.counts_own_io && engine_) rep.io_calls = engine_->counters().syscalls - before_.c.syscalls;
    return rep;
  }
  void end_rep() {
    Mark after = mark();
    if (traits_.counts_own_io) {
      last_written_ = after.c.bytes_written - before_.c.bytes_written;
      last_read_ = after.c.bytes_read - before_.c.bytes_read;
    } else {
      last_written_ = after.io.wchar - before_.io.wchar;
      last_read_ = after.io.rchar - before_.io.rchar;
    }
    last_commits_ = after.c.commits - before_.c.commits;
    last_syncs_ = after.c.syncs - before_.c.syncs;
    last_holes_reused_ = after.c.holes_reused - before_.c.holes_reused;
  }
  void add_extra(results::Result& r, const std::filesystem::path& file) {
    r.extra["engine"] = description_;
    r.extra["commits"] = last_commits_;
    if (traits_.counts_own_io) r.extra["syncs"] = last_syncs_;
    r.extra["bytes_written"] = last_written_;
    r.extra["bytes_read"] = last_read_;
    r.extra["bytes_source"] = traits_.counts_own_io ? "the store's own counters (mmap: bytes stored into the mapping)"
                                                    : "/proc/self/io rchar/wchar deltas";
    // In extra, not file_size: sizes differ per engine and would split the table's rows.
    std::error_code ec;
    auto size = std::filesystem::file_size(file, ec);
    if (!ec) r.extra["file_bytes"] = size;
  }
  // One writing phase on a fresh file (a copy of `from`, or empty): timed,
  // the mutations, the commit that ends the phase and close() (the work an
  // engine defers to it, such as SQLite's checkpoint, is the phase's);
  // verified by reading back.
  results::Result mutate(results::Op op, const std::filesystem::path& from, Stage stage,
                         const std::function<std::uint64_t()>& mutations) {
    harness::CustomExperiment c;
    c.labels = labels(op);
    c.prepare = [this, op, &from] {
      if (!work_.empty()) remove_file(work_);
      work_ = new_file(std::string(results::to_string(op)));
      if (!from.empty()) copy_store(from, work_);
      open_store(work_, op);
      begin_rep();
    };
    c.timed = [this, &mutations] {
      std::uint64_t ops = mutations();
      engine_->commit();
      engine_->close();  // its counters stay readable
      return timed_rep(ops);
    };
    c.cleanup = [this](harness::DataCheck) {
      end_rep();
      close_engine();
    };
    c.verify = [this, stage, op] { return holds(work_, stage, op); };
    results::Result r = runner_.run(c);
    std::filesystem::path done = work_;  // the last pass's store feeds the next phases
    work_.clear();
    add_extra(r, done);
    r.extra["verified_by"] = "every record read back after the last pass, its value compared field by field";
    r.extra["what_is_timed"] = "the phase's operations, the commit that ends it, and close(), which " + semantics_.close;
    phase_file_ = done;
    return r;
  }

  results::Result insert() {
    results::Result r = mutate(results::Op::Insert, {}, Stage::Inserted, [this] {
      for (const Employee& e : w_.records) engine_->put(e);
      return w_.n;
    });
    full_ = phase_file_;
    return r;
  }

  // Gets: the timed passes fold what they got (GetFold), the verification
  // pass, untimed, makes the same calls and checks every field.
  results::Result get() {
    auto bad_folds = std::make_shared<std::uint64_t>(0);
    harness::CustomExperiment c;
    c.labels = labels(results::Op::Get);
    c.prepare = [this] {
      if (!engine_) open_store(full_, results::Op::Get);  // once: gets change nothing
      begin_rep();
    };
    c.verification = [this] { return reported(full_, check_gets(*engine_, w_)); };
    c.timed = [this, bad_folds] {
      if (fold_gets(*engine_, w_) != w_.get_fold) ++*bad_folds;
      return timed_rep(w_.n);
    };
    c.cleanup = [this](harness::DataCheck) { end_rep(); };
    c.verify = [this, bad_folds] {
      return reported(full_, *bad_folds == 0 ? "" : "a timed pass got other records than were written (count or lengths)");
    };
    results::Result r = runner_.run(c);
    close_engine();
    add_extra(r, full_);
    r.extra["verified_by"] =
        "a verification pass (untimed, before the warm-up) made the timed pass's calls and compared the XXH3 digest of "
        "every field of each record got with the record written; every timed pass compares the count of records "
        "found, the sum of their fields' lengths and an XOR of their numbers with the workload's";
    r.extra["what_is_timed"] =
        "the gets (every key once, in a shuffled order) and the commit that ends the read transaction; the engine is "
        "opened before the first pass and closed after the last (gets leave close() nothing to do)";
    return r;
  }

  results::Result remove() {
    results::Result r = mutate(results::Op::Remove, full_, Stage::Removed, [this] {
      for (std::string_view key : w_.remove_keys) engine_->remove(key);  // the read-back finds any that failed
      return static_cast<std::uint64_t>(w_.removed.size());
    });
    after_remove_ = phase_file_;
    return r;
  }

  results::Result reinsert() {
    results::Result r = mutate(results::Op::Reinsert, after_remove_, Stage::Reinserted, [this] {
      for (const Employee& e : w_.fresh) engine_->put(e);
      return static_cast<std::uint64_t>(w_.fresh.size());
    });
    final_ = phase_file_;
    if (traits_.counts_own_io) r.extra["holes_reused"] = last_holes_reused_;
    return r;
  }

  results::Result reopen() {
    auto ok = std::make_shared<bool>(true);
    harness::CustomExperiment c;
    c.labels = labels(results::Op::Reopen);
    std::uint64_t expect = w_.n - w_.removed.size() + w_.fresh.size();
    c.prepare = [this] { begin_rep(); };  // no engine open: counters start at zero
    c.timed = [this, ok, expect] {
      open_store(final_, results::Op::Reopen);  // ours: scan, CRC-check and index every record
      if (engine_->size() != expect) *ok = false;
      return timed_rep(1);  // one reopen: tables print its time
    };
    c.cleanup = [this](harness::DataCheck) {
      end_rep();
      close_engine();
    };
    c.verify = [this, ok] { return *ok && holds(final_, Stage::Reinserted, results::Op::Reopen); };
    results::Result r = runner_.run(c);
    add_extra(r, final_);
    r.extra["reopened_records"] = expect;
    r.extra["what_is_timed"] = traits_.rebuilds_index_on_open
                                   ? "one open: scan the journal, check every CRC, rebuild the index"
                                   : "one open of the database and a count of its rows (no index to rebuild)";
    return r;
  }

  harness::Runner& runner_;
  const StoreDataSet& w_;
  std::string method_;
  const Cadence& cadence_;
  bool published_only_ = false;
  KvStoreOpener open_;
  CommitSemantics semantics_;
  KvStoreOptions options_;
  std::unique_ptr<KvStore> engine_;
  KvStoreTraits traits_;
  std::string description_;
  std::filesystem::path work_, phase_file_, full_, after_remove_, final_;
  std::vector<std::filesystem::path> files_;
  Mark before_;
  std::uint64_t last_written_ = 0, last_read_ = 0, last_commits_ = 0, last_syncs_ = 0,
                last_holes_reused_ = 0;
};

}  // namespace

std::vector<results::Result> store_suite::run_kv_store(harness::Runner& runner, const StoreDataSet& w,
                                                     const std::string& method, const Cadence& cadence,
                                                     std::uint64_t map_bytes, bool published_only,
                                                     const KvStoreOpener& open) {
  KvStorePhases run(runner, w, method, cadence, map_bytes, published_only, open);
  return run.run();
}

}  // namespace iolab::suites
