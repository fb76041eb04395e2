// The store suite at a tiny size: every table compares engines that commit
// at the same points and says what a commit gives in each, reopen is a
// time, a writing phase times close(), and what a pass wrote or got is
// checked value by value (a store holding or a get returning a wrong value
// fails) outside the timed region.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/results/console.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/kv_store.h"
#include "iolab/suites/suite.h"
#include "internal/suites/store_data_set.h"
#include "iolab/testing/files.h"

namespace iolab::suites {
namespace {

using store_suite::Stage;

harness::RunConfig one_pass() {
  harness::RunConfig config;
  config.reps = 1;
  config.warmup = 0;
  config.min_time = 0;
  config.latency = false;
  return config;
}

// 2,500 records: 3 commits every 1,000 inserts (1,000, 2,000, the end), 1 per phase.
constexpr std::uint64_t kRecords = 2500;

class StoreSuiteRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new io::ScratchDir("/tmp");
    harness::Runner runner(one_pass(), *scratch_);
    SuiteOptions options;
    options.records = kRecords;
    options.scale = Scale::Full;  // every table (the default scale leaves one out), at kRecords
    results_ = new std::vector<results::Result>(find_suite("store").run(runner, options));
  }
  static void TearDownTestSuite() {
    delete results_;
    delete scratch_;
  }
  static io::ScratchDir* scratch_;
  static std::vector<results::Result>* results_;
};
io::ScratchDir* StoreSuiteRun::scratch_ = nullptr;
std::vector<results::Result>* StoreSuiteRun::results_ = nullptr;

TEST_F(StoreSuiteRun, EveryRowOfATableCommitsAtTheSamePoints) {
  std::map<std::string, std::vector<const results::Result*>> tables;
  for (const results::Result& r : *results_) tables[r.experiment].push_back(&r);
  // insert, get, remove, reinsert, reopen at two page-cache cadences; the three writes at two flushed ones.
  EXPECT_EQ(tables.size(), 16u);
  for (const auto& [experiment, rows] : tables) {
    SCOPED_TRACE(experiment);
    EXPECT_EQ(rows.size(), kv_store_names().size()) << "every engine in every table";
    const results::Result& first = *rows.front();
    ASSERT_TRUE(first.extra.contains("commit_every_ops"));
    const std::uint64_t every = first.extra["commit_every_ops"].get<std::uint64_t>();
    // What each phase must commit: its mutations in groups of `every`, or once.
    std::uint64_t mutations = first.op == results::Op::Insert                              ? kRecords
                              : first.op == results::Op::Remove || first.op == results::Op::Reinsert ? kRecords / 10
                                                                                                    : 0;
    std::uint64_t expect = mutations == 0 ? 0 : every == 0 ? 1 : (mutations + every - 1) / every;
    for (const results::Result* r : rows) {
      SCOPED_TRACE(r->method);
      ASSERT_FALSE(r->skipped) << *r->skipped;
      EXPECT_TRUE(r->verified);
      ASSERT_TRUE(r->extra.contains("commits"));
      EXPECT_EQ(r->extra["commits"].get<std::uint64_t>(), expect);
      EXPECT_EQ(r->sync, first.sync) << "one durability per table";
      EXPECT_EQ(r->extra["commit_every_ops"], first.extra["commit_every_ops"]);
      EXPECT_EQ(r->extra["value_encoding"], first.extra["value_encoding"]);
      EXPECT_EQ(r->extra["key_order"], first.extra["key_order"]);
    }
    EXPECT_NE(experiment.find("random key order"), std::string::npos);
    EXPECT_NE(experiment.find("value: the encoded employee record"), std::string::npos);
    EXPECT_TRUE(experiment.find("page cache only") != std::string::npos ||
                experiment.find("fdatasync") != std::string::npos)
        << "every table says whether its commits were flushed";
  }
  for (const auto& p : scratch_->created()) ADD_FAILURE() << "left behind: " << p;
}

// A table's engines commit at the same points but not the same work: every
// record says what its commits gave (atomic or not), and every heading says
// it for each engine of the table.
TEST_F(StoreSuiteRun, EveryRecordAndHeadingStatesWhatACommitGives) {
  for (const results::Result& r : *results_) {
    SCOPED_TRACE(r.experiment + " / " + r.method);
    CommitSemantics says = commit_semantics(r.method, r.sync.flushes());
    ASSERT_TRUE(r.extra.contains("commit_atomicity"));
    EXPECT_EQ(r.extra["commit_atomicity"], says.atomicity);
    EXPECT_EQ(r.extra["commit_does"], says.commit);
    EXPECT_EQ(r.extra["close_does"], says.close);
    const std::size_t commits = r.experiment.find("commits: ");
    ASSERT_NE(commits, std::string::npos);
    for (const std::string& engine : kv_store_names()) {
      std::string atomicity = commit_semantics(engine, r.sync.flushes()).atomicity;
      std::size_t group = r.experiment.find(atomicity + " (", commits);
      ASSERT_NE(group, std::string::npos) << engine << ": " << atomicity;
      std::size_t end = r.experiment.find(')', group);
      EXPECT_NE(r.experiment.substr(group, end - group).find(engine), std::string::npos) << engine;
    }
  }
  EXPECT_NE(commit_semantics("lmdb", false).atomicity, commit_semantics("fields", false).atomicity);
}

TEST_F(StoreSuiteRun, ReopenIsATimePerReopen) {
  std::vector<results::Result> reopens;
  for (const results::Result& r : *results_)
    if (r.op == results::Op::Reopen) reopens.push_back(r);
  ASSERT_EQ(reopens.size(), 2 * kv_store_names().size());
  for (const results::Result& r : reopens) EXPECT_EQ(r.ops, 1u) << r.method << ": one reopen per pass";
  std::string table = results::format_tables(reopens, false);
  EXPECT_EQ(table.find("ops/s"), std::string::npos) << table;
  EXPECT_NE(table.find(" each"), std::string::npos) << table;
}

TEST_F(StoreSuiteRun, SeedMappedByteBufferInsertOnlyBesideAFlushingRow) {
  bool seen = false;
  for (const results::Result& r : *results_) {
    if (!r.reference || r.reference->source.find("force()") == std::string::npos) continue;
    seen = true;
    EXPECT_EQ(r.op, results::Op::Insert);
    EXPECT_TRUE(r.sync.flushes()) << r.experiment;
  }
  EXPECT_TRUE(seen);
}

// The read-back check, against stores that hold what the workload wrote,
// and ones that do not: a wrong value, a missing record.
class ContentCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(ContentCheck, FindsAWrongValueAndAMissingRecord) {
  io::ScratchDir scratch("/tmp");
  store_suite::StoreDataSet w = store_suite::make_data_set(200, 7);
  KvStoreOptions options;
  options.map_bytes = 64ull << 20;
  auto write = [&](const std::string& name, std::uint64_t changed, bool drop) {
    auto path = scratch.create_unique_file(name);
    auto engine = open_kv_store(GetParam(), path, options);
    for (std::uint64_t i = 0; i < w.n; ++i) {
      store::Employee e = w.records[i];
      if (i == changed) e.comments.back() ^= 1;  // one byte of one value differs
      if (!(drop && i == changed)) engine->put(e);
    }
    engine->close();
    return path;
  };
  auto check = [&](const std::filesystem::path& p, Stage stage) {
    auto engine = open_kv_store(GetParam(), p, options);
    std::string why = store_suite::check_contents(*engine, w, stage);
    engine->close();
    return why;
  };
  EXPECT_EQ(check(write("good", w.n, false), Stage::Inserted), "");
  std::string wrong = check(write("wrong", 17, false), Stage::Inserted);
  EXPECT_NE(wrong.find("different value"), std::string::npos) << wrong;
  std::string missing = check(write("missing", 17, true), Stage::Inserted);
  EXPECT_NE(missing.find("missing"), std::string::npos) << missing;
  // All records, where the removed ones should be gone.
  std::string kept = check(write("kept", w.n, false), Stage::Removed);
  EXPECT_NE(kept.find("is present"), std::string::npos) << kept;
}

INSTANTIATE_TEST_SUITE_P(Engines, ContentCheck, ::testing::ValuesIn(kv_store_names()));

// A byte of a record flipped on disk (its CRC no longer matches): the read-back refuses the store.
TEST(ContentCheckOnDisk, ACorruptedJournalFailsVerification) {
  io::ScratchDir scratch("/tmp");
  store_suite::StoreDataSet w = store_suite::make_data_set(50, 7);
  KvStoreOptions options;
  auto path = scratch.create_unique_file("journal");
  {
    auto engine = open_kv_store("gather", path, options);
    for (const store::Employee& e : w.records) engine->put(e);
    engine->close();
  }
  // Flip a byte of the last record's comment text, which appears once in the file.
  std::string bytes = testing::read_file(path);
  const std::string& text = w.records.back().comments;
  std::size_t at = bytes.rfind(text);
  ASSERT_NE(at, std::string::npos);
  bytes[at + text.size() / 2] ^= 0x20;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  bool failed = false;
  try {
    options.store.salvage = true;  // open past the damage; the read-back must still not accept it
    auto engine = open_kv_store("gather", path, options);
    failed = !store_suite::check_contents(*engine, w, Stage::Inserted).empty();
    engine->close();
  } catch (const Error&) {
    failed = true;  // refused at open or at the get (CRC): not verified either way
  }
  EXPECT_TRUE(failed);
}

// An engine around a real one, for one phase: in the get phase it can
// change what gets return from some get on, and any close() can make marked
// write(2) calls. It counts no calls of its own, so a record's io_calls are
// the kernel's count over the timed region.
class Misbehaving final : public KvStore {
 public:
  struct Faults {
    std::uint64_t change_from_get = UINT64_MAX;  // the first get (0-based) whose record is changed
    bool change_length = false;                  // drop the comment's last byte, else flip a bit of it
    unsigned close_writes = 0;                   // write(2) calls to /dev/null at close()
  };
  Misbehaving(std::unique_ptr<KvStore> inner, Faults faults, std::uint64_t* gets)
      : inner_(std::move(inner)), faults_(faults), gets_(gets) {}
  std::string_view name() const override { return inner_->name(); }
  void put(const store::Employee& e) override { inner_->put(e); }
  bool get(std::string_view last, store::Employee& out) override {
    bool found = inner_->get(last, out);
    if (found && (*gets_)++ >= faults_.change_from_get && !out.comments.empty()) {
      if (faults_.change_length) out.comments.pop_back();
      else out.comments.back() ^= 1;
    }
    return found;
  }
  bool remove(std::string_view last) override { return inner_->remove(last); }
  std::uint64_t size() override { return inner_->size(); }
  void commit() override { inner_->commit(); }
  void close() override {
    if (closed_) return;
    closed_ = true;
    inner_->close();
    int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    for (unsigned i = 0; i < faults_.close_writes && fd >= 0; ++i) (void)!::write(fd, "x", 1);
    if (fd >= 0) ::close(fd);
  }
  KvStoreCounters counters() const override {
    KvStoreCounters c;
    c.commits = inner_->counters().commits;
    return c;
  }
  KvStoreTraits traits() const override { return {false, inner_->traits().rebuilds_index_on_open}; }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<KvStore> inner_;
  Faults faults_;
  std::uint64_t* gets_;
  bool closed_ = false;
};

// Misbehaving engines for the phases `in` (the others are the real engine).
store_suite::KvStoreOpener misbehaving_in(std::set<results::Op> in, Misbehaving::Faults faults, std::uint64_t* gets) {
  return [in, faults, gets](const std::string& method, const std::filesystem::path& p,
                            const KvStoreOptions& o, results::Op phase) -> std::unique_ptr<KvStore> {
    auto real = open_kv_store(method, p, o);
    if (in.count(phase) == 0) return real;
    return std::make_unique<Misbehaving>(std::move(real), faults, gets);
  };
}

constexpr std::uint64_t kFew = 200;

harness::RunConfig two_reps() {
  harness::RunConfig config = one_pass();
  config.reps = 2;
  return config;
}

// Insert and get of one engine at the first table's cadence; "" when it gave
// figures, else the error that stopped it.
std::string gets_error(const std::string& method, Misbehaving::Faults faults, std::uint64_t* gets,
                       std::vector<results::Result>* out = nullptr) {
  io::ScratchDir scratch("/tmp");
  harness::Runner runner(two_reps(), scratch);
  store_suite::StoreDataSet w = store_suite::make_data_set(kFew, 7);
  try {
    auto results = store_suite::run_kv_store(runner, w, method, store_suite::cadences()[0], 64ull << 20, true,
                                           misbehaving_in({results::Op::Get}, faults, gets));
    if (out != nullptr) *out = results;
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A get that returns a wrong value (one bit of one record, its length kept)
// is found by the get phase's verification pass: no figure.
class GetVerification : public ::testing::TestWithParam<std::string> {};

TEST_P(GetVerification, AWrongRecordFromAGetGivesNoFigure) {
  std::uint64_t gets = 0;
  Misbehaving::Faults wrong;
  wrong.change_from_get = kFew / 2;  // one record of the verification pass, and every get after it
  std::string err = gets_error(GetParam(), wrong, &gets);
  EXPECT_NE(err.find("did not verify"), std::string::npos) << (err.empty() ? "a wrong record gave a figure" : err);
}

INSTANTIATE_TEST_SUITE_P(Engines, GetVerification, ::testing::ValuesIn(kv_store_names()));

// The timed get passes hold no digest: a record that changes after the
// verification pass, its length kept, goes unseen by them (what they fold is
// the count and the lengths), and the get phase gives its figure; with its
// length changed the fold differs: no figure. Every get of the timed passes
// went through the engine.
TEST(GetPhase, TimedPassesFoldTheCountAndLengthsOnly) {
  std::uint64_t gets = 0;
  Misbehaving::Faults after_verification;
  after_verification.change_from_get = kFew;  // the verification pass makes the first kFew gets
  std::vector<results::Result> results;
  EXPECT_EQ(gets_error("gather", after_verification, &gets, &results), "");
  ASSERT_EQ(results.size(), 2u);
  const results::Result& get = results[1];
  EXPECT_EQ(get.op, results::Op::Get);
  EXPECT_TRUE(get.verified);
  EXPECT_EQ(gets, kFew * (1 + 2)) << "verification, 2 timed passes (--warmup 0 with no min-time: no warm-up)";
  EXPECT_NE(get.extra["verified_by"].get<std::string>().find("verification pass"), std::string::npos);

  gets = 0;
  after_verification.change_length = true;
  std::string err = gets_error("gather", after_verification, &gets);
  EXPECT_NE(err.find("did not verify"), std::string::npos) << (err.empty() ? "a shorter record gave a figure" : err);
}

// A writing phase's timed region holds close() (SQLite checkpoints its WAL
// there, mmap unmaps and trims): 1,000 marked calls in close() are in each
// record's count of calls; the mmap store's own calls in 200 puts are few.
// Closing after the gets is not timed, nor is the verification's close.
TEST(WritingPhase, CloseIsTimed) {
  constexpr unsigned kCloseWrites = 1000;
  io::ScratchDir scratch("/tmp");
  harness::Runner runner(two_reps(), scratch);
  store_suite::StoreDataSet w = store_suite::make_data_set(kFew, 7);
  std::uint64_t gets = 0;
  Misbehaving::Faults marked;
  marked.close_writes = kCloseWrites;
  auto results = store_suite::run_kv_store(
      runner, w, "mmap", store_suite::cadences()[0], 64ull << 20, false,
      misbehaving_in({results::Op::Insert, results::Op::Get, results::Op::Remove, results::Op::Reinsert}, marked, &gets));
  ASSERT_EQ(results.size(), 5u);
  for (const results::Result& r : results) {
    SCOPED_TRACE(results::to_string(r.op));
    if (r.op == results::Op::Reopen) continue;  // the real engine: reopen's close is not timed
    if (r.op == results::Op::Get) {
      EXPECT_LT(r.io_calls, kCloseWrites) << "the close after the gets ran inside their timed region";
      continue;
    }
    EXPECT_GE(r.io_calls, kCloseWrites) << "close() ran outside the phase's timed region";
    EXPECT_LT(r.io_calls, 2 * kCloseWrites) << "the verification's close ran inside the timed region";
    EXPECT_NE(r.extra["what_is_timed"].get<std::string>().find("close()"), std::string::npos);
  }
}

}  // namespace
}  // namespace iolab::suites
