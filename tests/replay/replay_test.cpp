// The replay workload (replay.h) on traces built in memory: the ranges a
// pass writes, reads verified, O_DIRECT skipped at the first unaligned op,
// flush points reaching File::sync with their durability, bad traces refused.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/replay/replay.h"
#include "iolab/testing/forwarding_file.h"

namespace iolab::replay {
namespace {

using trace::Op;
using trace::OpKind;

harness::RunConfig one_pass() {
  harness::RunConfig c;
  c.reps = 1;
  c.warmup = 1;
  c.min_time = 0;
  return c;
}

Op op(OpKind kind, std::uint64_t offset, std::uint64_t length, std::uint32_t file = 1, std::uint32_t flags = 0,
      std::uint32_t thread = 0) {
  Op o;
  o.thread = thread;
  o.kind = kind;
  o.offset = offset;
  o.length = length;
  o.file = file;
  o.flags = flags;
  return o;
}

// One file of 10000 bytes; a write far past its end (a hole between), one
// inside it, reads over all three kinds of bytes, a truncate and an fsync.
Trace sample() {
  Trace t;
  t.name = "sample";
  t.header.files = {{1, 10000, 0}};
  t.ops = {op(OpKind::Open, 0, 0),        op(OpKind::Write, 20000, 5000), op(OpKind::Write, 100, 50),
           op(OpKind::Read, 9000, 12000), op(OpKind::Fdatasync, 0, 0),    op(OpKind::Truncate, 24000, 0),
           op(OpKind::Read, 23000, 4096, 1, trace::kShort), op(OpKind::Fsync, 0, 0), op(OpKind::Close, 0, 0)};
  return t;
}

// A method forwarding to pread that notes every sync's durability and, at
// each close, what the file then holds (the last close of a pass: its end).
struct Notes {
  std::vector<io::Durability> syncs;
  std::vector<std::string> closed;  // the file's bytes at each close
  std::uint64_t corrupt_after_write = UINT64_MAX;  // a write at this offset is followed by a bad byte
};

class NotingMethod final : public io::Method {
 public:
  explicit NotingMethod(Notes& n, std::string inner = "pread") : notes_(n), inner_(io::find_file_method(inner)) {}
  std::string_view name() const override { return inner_.name(); }
  std::string_view description() const override { return "noting"; }
  io::MethodTraits traits(const io::FileOptions& o) const override { return inner_.traits(o); }
  io::Availability probe(const std::filesystem::path& dir) const override { return inner_.probe(dir); }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    return std::make_unique<Noting>(inner_.open(p, a, o), notes_);
  }

 private:
  class Noting final : public testing::ForwardingFile {
   public:
    Noting(std::unique_ptr<io::File> f, Notes& n) : ForwardingFile(std::move(f)), notes_(n) {}
    void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
      ForwardingFile::write_at(offset, src);
      if (offset == notes_.corrupt_after_write) {
        const std::byte bad[1] = {~src[0]};
        ForwardingFile::write_at(offset, bad);
      }
    }
    void sync(io::Durability d) override {
      notes_.syncs.push_back(d);
      ForwardingFile::sync(d);
    }
    void close() override {
      if (closed_) return;
      closed_ = true;
      ForwardingFile::close();
      std::ifstream in(path(), std::ios::binary);
      notes_.closed.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }

   private:
    Notes& notes_;
    bool closed_ = false;
  };
  Notes& notes_;
  const io::Method& inner_;
};

results::Result replay_once(const Trace& t, const io::Method& m, io::ScratchDir& scratch, bool latency = false) {
  harness::RunConfig c = one_pass();
  c.latency = latency;
  harness::Runner runner(c, scratch);
  results::Result record = labels(t, m.name());
  auto w = make_workload(t, m, Settings{}, scratch, record);
  return runner.run(*w, record);
}

TEST(Replay, WritesExactlyTheRangesTheTraceWrote) {
  io::ScratchDir scratch("/tmp");
  Notes notes;
  NotingMethod m(notes);
  const Trace t = sample();
  results::Result r = replay_once(t, m, scratch);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.ops, t.ops.size());
  // The pass's end: 24000 bytes (truncated), the pattern over [0, 10000) and
  // [20000, 24000), zero between, the write at 100 the pattern too.
  ASSERT_FALSE(notes.closed.empty());
  const std::string& last = notes.closed.back();
  ASSERT_EQ(last.size(), 24000u);
  std::vector<std::byte> expected(24000);
  io::fill_pattern(Settings{}.seed, 0, std::span(expected).first(10000));
  io::fill_pattern(Settings{}.seed, 20000, std::span(expected).subspan(20000, 4000));
  EXPECT_EQ(std::memcmp(last.data(), expected.data(), expected.size()), 0);
  EXPECT_TRUE(std::all_of(last.begin() + 10000, last.begin() + 20000, [](char c) { return c == 0; }));
  EXPECT_TRUE(scratch.created().empty()) << "the replay's files are removed";
}

TEST(Replay, FlushPointsReachSyncWithTheirDurability) {
  io::ScratchDir scratch("/tmp");
  Notes notes;
  NotingMethod m(notes);
  results::Result r = replay_once(sample(), m, scratch);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  // Verify, warm-up, one timed pass, the verification after timing: fdatasync then fsync in each.
  ASSERT_EQ(notes.syncs.size(), 8u);
  for (std::size_t i = 0; i < notes.syncs.size(); i += 2) {
    EXPECT_EQ(notes.syncs[i], io::Durability::Fdatasync);
    EXPECT_EQ(notes.syncs[i + 1], io::Durability::Fsync);
  }
}

TEST(Replay, ACorruptedFileFailsVerification) {
  io::ScratchDir scratch("/tmp");
  Notes notes;
  notes.corrupt_after_write = 100;
  NotingMethod m(notes);
  try {
    replay_once(sample(), m, scratch);
    FAIL() << "a file holding a byte the replay did not write verified";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at offset 100"), std::string::npos) << e.what();
  }
}

TEST(Replay, LatencyPassGivesPercentilesPerKind) {
  io::ScratchDir scratch("/tmp");
  results::Result r = replay_once(sample(), io::find_file_method("pread"), scratch, true);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  ASSERT_TRUE(r.latency_ns);
  EXPECT_EQ(r.latency_ns->samples, sample().ops.size());
  EXPECT_EQ(r.extra.at("latency_by_kind").at("read").at("samples").get<unsigned>(), 2u);
  // pread keeps each file open through the pass: the traced close is said not replayed, and why.
  ASSERT_EQ(r.extra.at("not_replayed").size(), 1u) << r.extra.dump();
  EXPECT_EQ(r.extra.at("not_replayed").at("close").at("ops").get<unsigned>(), 1u);
}

TEST(Replay, DirectIsSkippedNamingTheFirstUnalignedOp) {
  io::ScratchDir scratch("/tmp");
  const io::Method& direct = io::find_file_method("direct");
  if (!direct.probe(scratch.path()).available) GTEST_SKIP() << "no O_DIRECT on /tmp";
  Trace t;
  t.name = "unaligned";
  t.header.files = {{1, 8192, 0}};
  t.ops = {op(OpKind::Read, 0, 4096), op(OpKind::Write, 4096, 4096), op(OpKind::Write, 4097, 100)};
  results::Result r = replay_once(t, direct, scratch);
  ASSERT_TRUE(r.skipped);
  EXPECT_NE(r.skipped->find("op 3 (write at 4097, 100 bytes) is not"), std::string::npos) << *r.skipped;
  EXPECT_NE(r.skipped->find("-aligned"), std::string::npos) << *r.skipped;
}

// Several methods in interleaved rounds: one record each, O_DIRECT skipped
// (the sample's ops are unaligned) with its reason, the others measured.
TEST(Replay, MethodsTakeTurnsInRounds) {
  io::ScratchDir scratch("/tmp");
  harness::Runner runner(one_pass(), scratch);
  const Trace t = sample();
  std::vector<const io::Method*> methods = {&io::find_file_method("pread"), &io::find_file_method("stdio"),
                                            &io::find_file_method("direct")};
  auto records = replay_methods(runner, t, methods, Settings{}, 3);
  ASSERT_EQ(records.size(), 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_FALSE(records[i].skipped) << *records[i].skipped;
    EXPECT_EQ(records[i].method, methods[i]->name());
    EXPECT_EQ(records[i].samples_s.size(), 3u);
    EXPECT_EQ(records[i].extra.at("rounds").get<unsigned>(), 3u);
    EXPECT_GT(records[i].median_ops_per_s(), 0.0);
  }
  ASSERT_TRUE(records[2].skipped);
  EXPECT_TRUE(records[2].skipped->find("op 2 (write at 20000, 5000 bytes) is not") != std::string::npos ||
              records[2].skipped->find("O_DIRECT") != std::string::npos)
      << *records[2].skipped;
  EXPECT_TRUE(scratch.created().empty());
}

TEST(Replay, AnUndeclaredFileIsOneError) {
  io::ScratchDir scratch("/tmp");
  Trace t = sample();
  t.ops[3].file = 7;
  results::Result record;
  try {
    make_workload(t, io::find_file_method("pread"), Settings{}, scratch, record);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "invalid trace sample: op 4: file 7 was never declared");
  }
}

TEST(Replay, AnOpPastTheLimitIsOneError) {
  Trace t = sample();
  t.ops[1].offset = trace::kMaxEnd - 10;
  try {
    check(t);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("op 2: offset"), std::string::npos) << e.what();
  }
}

// A queued method over pread: the same bytes, and a log of what each
// submit held (the ops, by their offset) and where the syncs fell.
struct QueueLog {
  std::vector<std::vector<std::uint64_t>> events;  // a submit's offsets; a sync: empty
};

class QueuedNotingMethod final : public io::Method {
 public:
  explicit QueuedNotingMethod(QueueLog& log) : log_(log), inner_(io::find_file_method("pread")) {}
  std::string_view name() const override { return "queued-pread"; }
  std::string_view description() const override { return "pread, traits queued, logging submits"; }
  io::MethodTraits traits(const io::FileOptions& o) const override {
    io::MethodTraits t = inner_.traits(o);
    t.queued = true;
    return t;
  }
  io::Availability probe(const std::filesystem::path& dir) const override { return inner_.probe(dir); }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    depth = o.queue_depth;
    return std::make_unique<Logging>(inner_.open(p, a, o), log_);
  }
  mutable unsigned depth = 0;  // the queue depth the replay opened its files with

 private:
  class Logging final : public testing::ForwardingFile {
   public:
    Logging(std::unique_ptr<io::File> f, QueueLog& log) : ForwardingFile(std::move(f)), log_(log) {}
    void submit(std::span<io::IoRequest> requests) override {
      std::vector<std::uint64_t> offsets;
      for (const auto& r : requests) offsets.push_back(r.offset);
      log_.events.push_back(offsets);
      io::File::submit(requests);
    }
    void sync(io::Durability d) override {
      log_.events.emplace_back();
      ForwardingFile::sync(d);
    }

   private:
    QueueLog& log_;
  };
  QueueLog& log_;
  const io::Method& inner_;
};

// Three threads on one file of 64 KiB, each writing and reading its own
// 4 KiB blocks, an fdatasync between two halves, and one thread reading
// what another wrote (which must wait for the write).
Trace three_threads() {
  Trace t;
  t.name = "three";
  t.header.files = {{1, 65536, 0}};
  auto w = [](std::uint64_t block, std::uint32_t th) { return op(OpKind::Write, block * 4096, 4096, 1, 0, th); };
  auto r = [](std::uint64_t block, std::uint32_t th) { return op(OpKind::Read, block * 4096, 4096, 1, 0, th); };
  t.ops = {w(0, 0), w(1, 1), w(2, 2),                                        // one wave of three
           r(3, 0), r(4, 1), op(OpKind::Open, 0, 0, 1, 0, 2), r(5, 2),        // another: an open between
           w(6, 0), w(7, 0),                                                 // the same thread: two waves
           op(OpKind::Fdatasync, 0, 0, 1, 0, 1),                             // a barrier
           w(8, 1),                                                          // alone: the read of 8 waits for it
           r(8, 2), r(9, 0), w(20, 1)};  // a wave with a write past the end (a hole between)
  return t;
}

TEST(ReplayQueued, TheTraceDepthIsTheThreadsThatMadeIO) {
  Trace t = three_threads();
  EXPECT_EQ(trace_depth(t), 3u);
  for (auto& o : t.ops) o.thread = 0;
  EXPECT_EQ(trace_depth(t), 1u);
  t.ops.push_back(op(OpKind::Fsync, 0, 0, 1, 0, 5));  // a thread that only syncs adds no depth
  EXPECT_EQ(trace_depth(t), 1u);
  for (std::uint32_t i = 0; i < 100; ++i) t.ops.push_back(op(OpKind::Read, 0, 10, 1, 0, i));
  EXPECT_EQ(trace_depth(t), kMaxDepth);
}

TEST(ReplayQueued, WavesKeepThreadsInOrderAndSyncsAsBarriers) {
  io::ScratchDir scratch("/tmp");
  QueueLog log;
  QueuedNotingMethod m(log);
  results::Result r = replay_once(three_threads(), m, scratch);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(m.depth, 3u);
  ASSERT_TRUE(r.queue_depth);
  EXPECT_EQ(*r.queue_depth, 3u);
  EXPECT_EQ(r.extra.at("trace_depth").get<unsigned>(), 3u);
  EXPECT_EQ(r.extra.at("depth_reached").get<unsigned>(), 3u);
  // Each pass (verify, warm-up, timed, verify after timing) submits the same waves, the sync between.
  const std::vector<std::vector<std::uint64_t>> pass = {{0, 4096, 8192},
                                                        {12288, 16384, 20480},
                                                        {24576},
                                                        {28672},
                                                        {},
                                                        {32768},
                                                        {32768, 36864, 81920}};
  ASSERT_EQ(log.events.size(), 4 * pass.size());
  for (std::size_t p = 0; p < 4; ++p)
    for (std::size_t k = 0; k < pass.size(); ++k)
      EXPECT_EQ(log.events[p * pass.size() + k], pass[k]) << "pass " << p << " event " << k;
  EXPECT_TRUE(scratch.created().empty());
}

// The latency pass times each op alone: one request per submit.
TEST(ReplayQueued, TheLatencyPassGoesOneAtATime) {
  io::ScratchDir scratch("/tmp");
  QueueLog log;
  QueuedNotingMethod m(log);
  results::Result r = replay_once(three_threads(), m, scratch, true);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  ASSERT_TRUE(r.latency_ns);
  EXPECT_EQ(r.latency_ns->samples, three_threads().ops.size());
  EXPECT_TRUE(r.verified);
  // Four passes of 6 submits and a sync each; the latency pass: its sync alone (its reads and writes are read_at, write_at).
  EXPECT_EQ(log.events.size(), 4 * 7 + 1u);
  EXPECT_EQ(std::count_if(log.events.begin(), log.events.end(), [](const auto& e) { return e.empty(); }), 5);
}

TEST(ReplayQueued, SynchronousMethodsSayDepthOne) {
  io::ScratchDir scratch("/tmp");
  results::Result r = replay_once(three_threads(), io::find_file_method("pread"), scratch);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  ASSERT_TRUE(r.queue_depth);
  EXPECT_EQ(*r.queue_depth, 1u);
  EXPECT_EQ(r.extra.at("trace_depth").get<unsigned>(), 3u);
  EXPECT_FALSE(r.extra.contains("depth_reached"));
}

// The real queued methods, where this machine has them: the data verified, the depth said.
TEST(ReplayQueued, IoUringAndLibaioReplayAtTheTracesDepth) {
  io::ScratchDir scratch("/tmp");
  unsigned ran = 0;
  for (const char* name : {"io_uring", "libaio"}) {
    const io::Method* m = nullptr;
    for (const io::Method* x : io::file_methods())
      if (x->name() == name) m = x;
    if (!m || !m->probe(scratch.path()).available) continue;
    results::Result r = replay_once(three_threads(), *m, scratch);
    if (r.skipped) continue;  // libaio is O_DIRECT only: the trace's 4 KiB blocks may not be aligned enough here
    ++ran;
    EXPECT_TRUE(r.verified) << name;
    ASSERT_TRUE(r.queue_depth) << name;
    EXPECT_EQ(*r.queue_depth, 3u) << name;
    EXPECT_EQ(r.extra.at("depth_reached").get<unsigned>(), 3u) << name;
  }
  if (ran == 0) GTEST_SKIP() << "neither io_uring nor libaio can replay here";
  EXPECT_TRUE(scratch.created().empty());
}

}  // namespace
}  // namespace iolab::replay
