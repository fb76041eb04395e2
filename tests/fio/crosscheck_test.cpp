// The cross-check against fio without fio: a stand-in plays fio (it records
// what it was asked and answers with figures), so the tests see the
// interleaving, the matched work, the file fio is given, fio's failures and
// the ring flags each side sets. A row's figures, differences and output:
// crosscheck_row_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "iolab/base/error.h"
#include "iolab/fio/crosscheck.h"
#include "iolab/io/pattern.h"
#include "fio/crosscheck_fixtures.h"

namespace iolab::fio {
namespace {

using testing::mentions;

harness::RunConfig tiny_config(std::vector<std::string>& events) {
  harness::RunConfig c;
  c.reps = 2;
  c.warmup = 1;
  c.min_time = 0;  // one pass per repetition
  c.on_experiment = [&events](const std::string&) { events.emplace_back("iolab"); };
  return c;
}

harness::FileExperiment tiny(std::string method, results::AccessPattern pattern = results::AccessPattern::Seq) {
  harness::FileExperiment e;
  e.suite = "test";
  e.method = std::move(method);
  e.op = results::Op::Read;
  e.pattern = pattern;
  e.block_size = 4096;
  e.file_size = 64 * 1024;
  e.cache = results::CacheState::Warm;
  e.eviction = results::Eviction::PerFile;
  return e;
}

std::string value_of(const std::vector<std::string>& args, const std::string& key) {
  for (const auto& a : args)
    if (a.rfind(key + "=", 0) == 0) return a.substr(key.size() + 1);
  return "";
}

// fio's figures for `ios` reads of `block` bytes in `wall` seconds using `cpu` CPU seconds.
FioFigures fio_figures(double ios, double block, double wall, double cpu) {
  FioFigures f;
  f.version = "fio-test";
  f.ios = static_cast<std::uint64_t>(ios);
  f.bytes = static_cast<std::uint64_t>(ios * block);
  f.runtime_s = f.job_runtime_s = wall;
  f.sys_cpu = cpu / wall * 100;
  return f;
}

TEST(Crosscheck, RoundsInterleaveAndAlternateWhoGoesFirst) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  std::vector<std::vector<std::string>> fio_calls;
  std::vector<std::vector<std::string>> null_calls;
  auto fake_fio = [&](const std::vector<std::string>& args) {
    if (value_of(args, "--ioengine") == "null") {  // fio's own work: no file
      events.emplace_back("null");
      null_calls.push_back(args);
      EXPECT_EQ(value_of(args, "--filename"), "");
      return fio_figures(1000, 4096, 0.001, 0.0002);  // 200 ns per I/O
    }
    events.emplace_back("fio");
    fio_calls.push_back(args);
    const std::filesystem::path file = value_of(args, "--filename");
    // fio is given a warm file of iolab's pattern, in iolab's scratch directory.
    EXPECT_EQ(file.parent_path(), scratch.path());
    EXPECT_EQ(std::filesystem::file_size(file), 64u * 1024);
    EXPECT_EQ(io::digest_file(file), io::pattern_digest(runner.config().seed, 0, 64 * 1024));
    EXPECT_GE(harness::resident_fraction(file), 0.99);
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 3;
  settings.fio = "/usr/bin/fio";
  std::vector<std::string> announced;
  auto rows = crosscheck({tiny("pread"), tiny("iostream"), tiny("mmap")}, settings, runner, fake_fio,
                         [&](const CrosscheckRow& row, const CrosscheckRound& r) {
                           announced.push_back(row.labels.method + " " + std::to_string(r.number));
                         });

  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[1].skipped);  // iostream: no fio engine, never run
  EXPECT_TRUE(rows[1].rounds.empty());
  for (std::size_t i : {0u, 2u}) {
    ASSERT_FALSE(rows[i].skipped) << *rows[i].skipped;
    ASSERT_EQ(rows[i].rounds.size(), 3u);
    for (const auto& r : rows[i].rounds) {
      EXPECT_EQ(r.iolab_first, r.number % 2 == 1);
      EXPECT_EQ(r.iolab_reps, 2u);
      EXPECT_EQ(r.iolab_passes, 1u);
      EXPECT_EQ(r.iolab.ops, 16);  // one pass of 64 KiB in 4 KiB calls per repetition
      EXPECT_EQ(r.fio.ops, 32);    // fio: the same bytes as iolab's 2 timed passes
      EXPECT_EQ(r.fio_command.rfind("/usr/bin/fio ", 0), 0u) << r.fio_command;
      EXPECT_NE(r.fio_command.find("--loops=2"), std::string::npos) << r.fio_command;
      ASSERT_TRUE(r.fio_resident);
      EXPECT_GE(*r.fio_resident, 0.99);
      ASSERT_TRUE(r.fio_null);
      EXPECT_EQ(r.fio_null->ops, 1000);
      EXPECT_NE(r.fio_null_command.find("--ioengine=null"), std::string::npos);
    }
    EXPECT_NEAR(rows[i].medians().fio_own_cpu_per_op, 200e-9, 1e-12);
  }
  ASSERT_EQ(null_calls.size(), 6u);
  EXPECT_EQ(value_of(null_calls[0], "--size"), "2g");  // 2^19 I/Os of 4 KiB (the default)
  EXPECT_EQ(value_of(null_calls[0], "--bs"), "4k");
  // Each experiment's pair runs back to back; odd rounds iolab first, even rounds fio first.
  const std::vector<std::string> expected{"iolab", "fio", "null", "iolab", "fio", "null",   // round 1
                                          "fio", "null", "iolab", "fio", "null", "iolab",   // round 2
                                          "iolab", "fio", "null", "iolab", "fio", "null"};  // round 3
  EXPECT_EQ(events, expected);
  EXPECT_EQ(announced, (std::vector<std::string>{"pread 1", "mmap 1", "pread 2", "mmap 2", "pread 3", "mmap 3"}));
  for (const auto& args : fio_calls) {
    EXPECT_EQ(value_of(args, "--loops"), "2");
    EXPECT_EQ(value_of(args, "--invalidate"), "0");
    EXPECT_EQ(value_of(args, "--gtod_reduce"), "1");
  }
  EXPECT_EQ(value_of(fio_calls[0], "--ioengine"), "psync");
  EXPECT_EQ(value_of(fio_calls[1], "--ioengine"), "mmap");
  EXPECT_EQ(value_of(fio_calls[0], "--filename"), value_of(fio_calls[1], "--filename"));  // one file per size
  EXPECT_TRUE(scratch.created().empty()) << "fio's file and iolab's were removed";
}

TEST(Crosscheck, AFioFailureSkipsThatRowOnlyAndFioClockIsPassedOn) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  auto fake_fio = [&](const std::vector<std::string>& args) {
    EXPECT_NE(value_of(args, "--ioengine"), "null") << "null_ios = 0: no null-engine runs";
    EXPECT_EQ(value_of(args, "--gtod_reduce"), "");  // fio times every I/O, as asked
    if (value_of(args, "--ioengine") == "mmap") throw Error("run", "fio", "exit code 1: fio: engine mmap not loadable");
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 2;
  settings.fio_times_every_io = true;
  settings.null_ios = 0;
  auto rows = crosscheck({tiny("mmap"), tiny("pread", results::AccessPattern::Rand)}, settings, runner, fake_fio);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[0].skipped);
  EXPECT_NE(rows[0].skipped->find("fio failed"), std::string::npos) << *rows[0].skipped;
  EXPECT_NE(rows[0].skipped->find("not loadable"), std::string::npos) << *rows[0].skipped;
  EXPECT_TRUE(rows[0].rounds.empty());
  ASSERT_FALSE(rows[1].skipped);
  EXPECT_EQ(rows[1].rounds.size(), 2u);
  EXPECT_TRUE(mentions(differences(rows[1]), "timed every I/O"));
  EXPECT_TRUE(scratch.created().empty());
}

// A fio that reports 0 I/Os and 0 bytes read (a broken or fake fio, a job
// that read nothing) measured nothing: the row fails, saying so, instead of
// a comparison with ratios "-".
TEST(Crosscheck, AFioThatReadNothingFailsTheRow) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  auto nothing = [&](const std::vector<std::string>&) { return fio_figures(0, 4096, 0.01, 0.005); };
  CrosscheckSettings settings;
  settings.rounds = 1;
  settings.null_ios = 0;
  auto rows = crosscheck({tiny("pread")}, settings, runner, nothing);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].skipped);
  EXPECT_NE(rows[0].skipped->find("fio reported 0 I/Os and 0 bytes read: it measured nothing"), std::string::npos)
      << *rows[0].skipped;
  EXPECT_TRUE(rows[0].rounds.empty());
}

// The iolab side runs the ring the suites run (issue 25 item 9): no setup
// flags, though fio 3.33 sets SINGLE_ISSUER, DEFER_TASKRUN and COOP_TASKRUN
// on its own (the row's engine note says so). fio's submission batch is
// iolab's (every free slot for page-cache reads; one per call for O_DIRECT,
// fio's default loop) unless --fio-unbatched asks for fio's default.
TEST(Crosscheck, IolabRunsTheSuitesDefaultRingAndFioIolabsBatch) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  std::vector<std::string> batches;
  auto fake_fio = [&](const std::vector<std::string>& args) {
    EXPECT_EQ(value_of(args, "--ioengine"), "io_uring");
    batches.push_back(value_of(args, "--iodepth_batch_submit"));
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 1;
  settings.null_ios = 0;
  harness::FileExperiment e = tiny("io_uring");
  e.options.queue_depth = 4;
  auto rows = crosscheck({e}, settings, runner, fake_fio);
  ASSERT_EQ(rows.size(), 1u);
  if (rows[0].skipped) GTEST_SKIP() << "io_uring here: " << *rows[0].skipped;
  ASSERT_EQ(rows[0].rounds.size(), 1u);
  EXPECT_FALSE(rows[0].labels.extra.contains("io_options")) << rows[0].labels.extra.dump();
  EXPECT_EQ(rows[0].labels.extra.value("submit_batch", 99u), 0u);
  EXPECT_TRUE(mentions(differences(rows[0]), "ring options: none"));
  EXPECT_TRUE(mentions(differences(rows[0]), "fio 3.33 sets COOP_TASKRUN, SINGLE_ISSUER and DEFER_TASKRUN"));

  settings.fio_unbatched = true;
  auto unbatched = crosscheck({e}, settings, runner, fake_fio);
  ASSERT_EQ(unbatched[0].rounds.size(), 1u);
  EXPECT_TRUE(mentions(differences(unbatched[0]), "submitting and reaping one request per call"));

  settings.fio_unbatched = false;
  harness::FileExperiment direct = e;
  direct.cache = results::CacheState::Direct;
  auto d = crosscheck({direct}, settings, runner, fake_fio);
  ASSERT_EQ(d[0].rounds.size(), 1u) << d[0].skipped.value_or("");
  EXPECT_EQ(d[0].labels.extra.value("submit_batch", 99u), 1u);
  EXPECT_TRUE(mentions(differences(d[0]), "each freed slot handed over as its completion is taken"));
  EXPECT_FALSE(mentions(differences(d[0]), "not batched"));
  EXPECT_EQ(batches, (std::vector<std::string>{"4", "", ""}));
}

// Issue 40 item 5: fio's io_uring engine sets SINGLE_ISSUER, DEFER_TASKRUN
// and COOP_TASKRUN on its own; --ring-flags fio gives iolab's ring the same,
// and every io_uring row names both sides' flags and whether they differ.
TEST(Crosscheck, RingFlagsFioGivesIolabsRingFiosFlagsAndTheRowNamesThem) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  auto fake_fio = [&](const std::vector<std::string>& args) {
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 1;
  settings.null_ios = 0;
  harness::FileExperiment e = tiny("io_uring");
  e.options.queue_depth = 4;
  auto ours = crosscheck({e}, settings, runner, fake_fio);
  if (ours[0].skipped) GTEST_SKIP() << "io_uring here: " << *ours[0].skipped;
  EXPECT_TRUE(mentions(differences(ours[0]),
                       "ring flags (--ring-flags iolab): iolab none; fio's engine SINGLE_ISSUER+DEFER_TASKRUN, "
                       "COOP_TASKRUN: they differ"));
  settings.ring_flags = RingFlags::Fio;
  auto theirs = crosscheck({e}, settings, runner, fake_fio);
  if (theirs[0].skipped) GTEST_SKIP() << "io_uring's setup flags here: " << *theirs[0].skipped;
  ASSERT_EQ(theirs[0].rounds.size(), 1u);
  ASSERT_TRUE(theirs[0].labels.extra.contains("io_options")) << theirs[0].labels.extra.dump();
  EXPECT_EQ(theirs[0].labels.extra["io_options"], nlohmann::json({"SINGLE_ISSUER+DEFER_TASKRUN", "COOP_TASKRUN"}));
  EXPECT_TRUE(mentions(differences(theirs[0]),
                       "ring flags (--ring-flags fio): iolab SINGLE_ISSUER+DEFER_TASKRUN, COOP_TASKRUN; fio's engine "
                       "SINGLE_ISSUER+DEFER_TASKRUN, COOP_TASKRUN: the same ring setup"));
  // Methods without a ring are left as they are, and say nothing of flags.
  auto plain = crosscheck({tiny("pread")}, settings, runner, fake_fio);
  ASSERT_FALSE(plain[0].skipped) << *plain[0].skipped;
  EXPECT_FALSE(plain[0].labels.extra.contains("io_options"));
  EXPECT_FALSE(mentions(differences(plain[0]), "ring flags"));
  EXPECT_EQ(parse_ring_flags("fio"), RingFlags::Fio);
  EXPECT_THROW(parse_ring_flags("both"), UsageError);
}

TEST(Crosscheck, ZeroRoundsIsBadInput) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  harness::Runner runner(tiny_config(events), scratch);
  CrosscheckSettings settings;
  settings.rounds = 0;
  EXPECT_THROW(crosscheck({tiny("pread")}, settings, runner, [](const auto&) { return FioFigures{}; }), UsageError);
}

}  // namespace
}  // namespace iolab::fio
