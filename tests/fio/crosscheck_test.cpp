// The cross-check against fio without fio: a stand-in plays fio (it records
// what it was asked and answers with figures), so the tests see the
// interleaving, the matched work, the file fio is given, the ratios and
// medians, the differences a gap is explained by, and the output.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "iolab/base/error.h"
#include "iolab/fio/crosscheck.h"
#include "iolab/io/pattern.h"

namespace iolab::harness {
namespace {

RunConfig tiny_config(std::vector<std::string>& events) {
  RunConfig c;
  c.reps = 2;
  c.warmup = 1;
  c.min_time = 0;  // one pass per repetition
  c.on_experiment = [&events](const std::string&) { events.emplace_back("iolab"); };
  return c;
}

FileExperiment tiny(std::string method, AccessPattern pattern = AccessPattern::Seq) {
  FileExperiment e;
  e.suite = "test";
  e.method = std::move(method);
  e.op = Op::Read;
  e.pattern = pattern;
  e.block_size = 4096;
  e.file_size = 64 * 1024;
  e.cache = CacheState::Warm;
  e.eviction = Eviction::PerFile;
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

SideFigures side(double ops, double wall, double cpu) {
  SideFigures s;
  s.ops = ops;
  s.bytes = ops * 4096;
  s.wall_s = wall;
  s.cpu_s = cpu;
  return s;
}

CrosscheckRow row_with_ratios(const std::vector<double>& cpu_ratios, bool aligned = true) {
  CrosscheckRow row;
  row.labels.method = "pread";
  row.labels.block_size = 4096;
  row.labels.file_size = 1 << 20;
  row.job = FioJob{};
  row.job->engine = "psync";
  row.job->aligned_buffers = aligned;
  unsigned n = 0;
  for (double r : cpu_ratios) {
    CrosscheckRound round;
    round.number = ++n;
    round.iolab_first = n % 2 == 1;
    round.iolab = side(1000, 1.0, 1.0);
    round.fio = side(1000 / r, 1.0, 1.0);  // iolab / fio = r, per CPU and per wall second alike
    round.iolab_reps = 5;
    round.iolab_passes = 2;
    round.fio_command = "fio --loops=10";
    row.rounds.push_back(round);
  }
  return row;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST(Crosscheck, RoundsInterleaveAndAlternateWhoGoesFirst) {
  std::vector<std::string> events;
  io::ScratchDir scratch;
  Runner runner(tiny_config(events), scratch);
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
    EXPECT_GE(resident_fraction(file), 0.99);
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
  Runner runner(tiny_config(events), scratch);
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
  auto rows = crosscheck({tiny("mmap"), tiny("pread", AccessPattern::Rand)}, settings, runner, fake_fio);
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
  Runner runner(tiny_config(events), scratch);
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
  Runner runner(tiny_config(events), scratch);
  std::vector<std::string> batches;
  auto fake_fio = [&](const std::vector<std::string>& args) {
    EXPECT_EQ(value_of(args, "--ioengine"), "io_uring");
    batches.push_back(value_of(args, "--iodepth_batch_submit"));
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 1;
  settings.null_ios = 0;
  FileExperiment e = tiny("io_uring");
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
  FileExperiment direct = e;
  direct.cache = CacheState::Direct;
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
  Runner runner(tiny_config(events), scratch);
  auto fake_fio = [&](const std::vector<std::string>& args) {
    return fio_figures(16.0 * std::stoi(value_of(args, "--loops")), 4096, 0.01, 0.005);
  };
  CrosscheckSettings settings;
  settings.rounds = 1;
  settings.null_ios = 0;
  FileExperiment e = tiny("io_uring");
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
  Runner runner(tiny_config(events), scratch);
  CrosscheckSettings settings;
  settings.rounds = 0;
  EXPECT_THROW(crosscheck({tiny("pread")}, settings, runner, [](const auto&) { return FioFigures{}; }), UsageError);
}

TEST(CrosscheckRow, MediansAreOfTheRoundsAndRatiosOfEachRound) {
  CrosscheckRow row = row_with_ratios({1.30, 1.05, 0.95});
  auto m = row.medians();
  EXPECT_NEAR(m.cpu_ratio, 1.05, 1e-9);
  EXPECT_NEAR(m.wall_ratio, 1.05, 1e-9);
  EXPECT_NEAR(m.iolab_per_cpu_s, 1000, 1e-9);
  EXPECT_NEAR(m.fio_per_cpu_s, 1000 / 1.05, 1e-6);
  EXPECT_TRUE(row.within(0.10));
  EXPECT_FALSE(row.within(0.04));
  EXPECT_FALSE(row_with_ratios({1.25, 1.21, 1.14}).within(0.10));
  EXPECT_FALSE(row_with_ratios({}).within(0.10));  // nothing measured is not a pass

  // A side without CPU time has no rate, and its round no ratio.
  CrosscheckRound empty;
  empty.iolab = side(100, 1, 0);
  empty.fio = side(100, 1, 1);
  EXPECT_EQ(empty.iolab.per_cpu_s(), 0);
  EXPECT_EQ(empty.cpu_ratio(), 0);
  EXPECT_DOUBLE_EQ(empty.wall_ratio(), 1.0);
}

TEST(CrosscheckRow, SidesComeFromIolabsRecordAndFiosFigures) {
  Result r;
  r.ops = 1000;
  r.bytes = 4096000;
  r.samples_s = {0.2, 0.1, 0.3};
  r.user_s = 0.02;
  r.sys_s = 0.06;
  r.voluntary_ctx = 3;
  r.involuntary_ctx = 2;
  r.minor_faults = 7;
  r.io_calls = 1000;
  SideFigures i = side_of(r);
  EXPECT_DOUBLE_EQ(i.wall_s, 0.2);  // the median repetition
  EXPECT_DOUBLE_EQ(i.per_wall_s(), 5000);
  EXPECT_DOUBLE_EQ(i.per_cpu_s(), 1000 / 0.08);
  EXPECT_DOUBLE_EQ(i.user_s, 0.02);
  EXPECT_EQ(i.context_switches, 5);
  EXPECT_EQ(i.page_faults, 7);
  ASSERT_TRUE(i.io_calls);
  EXPECT_EQ(*i.io_calls, 1000);

  FioFigures f;
  f.ios = 500;
  f.bytes = 2048000;
  f.runtime_s = 0.25;
  f.job_runtime_s = 0.5;
  f.usr_cpu = 10;
  f.sys_cpu = 30;
  f.minor_faults = 4;
  f.major_faults = 1;
  SideFigures s = side_of(f);
  EXPECT_DOUBLE_EQ(s.cpu_s, 0.2);  // 40% of the job's 0.5 s
  EXPECT_DOUBLE_EQ(s.user_s, 0.05);
  EXPECT_DOUBLE_EQ(s.per_cpu_s(), 2500);
  EXPECT_DOUBLE_EQ(s.per_wall_s(), 2000);
  EXPECT_EQ(s.page_faults, 5);
  EXPECT_FALSE(s.io_calls);
}

TEST(CrosscheckDifferences, NameTheClockTheCacheTheBuffersAndWhatEachMeasured) {
  CrosscheckRow row = row_with_ratios({1.2, 1.2, 1.2});
  row.engine_note = "fio calls pread(2)";
  for (auto& r : row.rounds) {
    r.iolab_resident = 1.0;
    r.fio_resident = 0.98;
    r.iolab.io_calls = 1000;
    r.fio_null = side(1000, 0.1, 0.1);  // fio's own work: 100 us per I/O
  }
  auto d = differences(row);
  EXPECT_TRUE(mentions(d, "--gtod_reduce=1"));
  EXPECT_TRUE(mentions(d, "--invalidate=0"));
  EXPECT_TRUE(mentions(d, "fio 98%"));
  EXPECT_TRUE(mentions(d, "page-aligned for both"));
  EXPECT_TRUE(mentions(d, "engine: fio calls pread(2)"));
  EXPECT_TRUE(mentions(d, "CPU per I/O: iolab 1 ms"));  // 1 CPU second for 1000 I/Os
  EXPECT_TRUE(mentions(d, "10, 10, 10 per round"));    // fio's loops: 5 reps x 2 passes
  EXPECT_FALSE(mentions(d, "queue:"));                  // not a queued job
  // fio: 1 s / (1000 / 1.2) I/Os = 1.2 ms per I/O, less its own 100 us = 1.1 ms against iolab's 1 ms.
  EXPECT_TRUE(mentions(d, "fio's own work: 100 µs of CPU per I/O"));
  EXPECT_TRUE(mentions(d, "less that: 1.1 ms, against iolab's 1 ms (1.10x per CPU second)"));
  EXPECT_NEAR(row.medians().cpu_ratio_without_fio_own, 1.1, 1e-9);
  EXPECT_FALSE(mentions(d, "page faults: fio took"));  // a 4 KiB buffer

  CrosscheckRow heap = row_with_ratios({1.2}, false);
  EXPECT_TRUE(mentions(differences(heap), "neither page-aligned"));

  // A queue depth of 32 with a system call per request: iolab did not batch.
  CrosscheckRow queued = row_with_ratios({0.5, 0.5});
  queued.job->iodepth = 32;
  queued.job->direct = true;
  queued.labels.queue_depth = 32;
  queued.labels.extra["io_options"] = {"SINGLE_ISSUER+DEFER_TASKRUN", "COOP_TASKRUN"};
  for (auto& r : queued.rounds) r.iolab.io_calls = 1000;
  auto q = differences(queued);
  EXPECT_TRUE(mentions(q, "queue: iolab kept up to 32 in flight, every freed slot handed over in one call"));
  EXPECT_TRUE(mentions(q, "ring options: SINGLE_ISSUER+DEFER_TASKRUN, COOP_TASKRUN; 1.000 system calls per request"));
  EXPECT_TRUE(mentions(q, "fio kept up to 32, submitting and reaping one request per call"));
  queued.job->submit_batch = 32;
  queued.labels.extra["submit_batch"] = 8;
  EXPECT_TRUE(mentions(differences(queued), "at most 8 requests per submission"));
  EXPECT_TRUE(mentions(differences(queued), "fio kept up to 32, submitting up to 32 and reaping up to 32 per call"));
  queued.labels.extra.erase("submit_batch");
  EXPECT_TRUE(mentions(q, "at 1.00 system calls per request iolab's requests were not batched"));
  EXPECT_TRUE(mentions(q, "O_DIRECT for both"));
  for (auto& r : queued.rounds) r.iolab.io_calls = 40;  // batched: ~1 call per 25 requests
  EXPECT_FALSE(mentions(differences(queued), "not batched"));
  EXPECT_TRUE(mentions(differences(queued), "0.040 system calls per request"));
  // 32 x 1 MiB of buffers first touched inside fio's run.
  queued.job->block_size = 1 << 20;
  for (auto& r : queued.rounds) r.fio.page_faults = 8200;
  EXPECT_TRUE(mentions(differences(queued), "iodepth x block = 32 MiB, 8192 pages"));

  EXPECT_TRUE(differences(row_with_ratios({})).empty());
}

TEST(CrosscheckOutput, TheTableShowsRatiosRoundsCommandsAndGaps) {
  std::vector<CrosscheckRow> rows{row_with_ratios({1.02, 0.98, 1.00}), row_with_ratios({1.21, 1.14, 1.27})};
  rows[1].labels.block_size = 1 << 20;  // shown in bytes
  CrosscheckRow skipped;
  skipped.labels.method = "iostream";
  skipped.skipped = "fio has no engine that reads as iolab's iostream method does";
  rows.push_back(skipped);
  CrosscheckSettings settings;
  std::string text = format_crosscheck(rows, settings);
  EXPECT_NE(text.find("EXPERIMENT"), std::string::npos);
  EXPECT_NE(text.find("1.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("1.02 0.98 1.00"), std::string::npos) << text;
  EXPECT_NE(text.find("1.21x"), std::string::npos) << text;
  EXPECT_NE(text.find("1000 IO"), std::string::npos) << text;  // 4 KiB rows: I/Os per second
  EXPECT_NE(text.find("1000 MiB"), std::string::npos) << text;  // 1 MiB rows: bytes
  EXPECT_NE(text.find("fio: fio --loops=10"), std::string::npos) << text;
  EXPECT_NE(text.find("within 10% per CPU second (1.00x)"), std::string::npos) << text;
  EXPECT_NE(text.find("gap: per CPU second 1.21x (outside)"), std::string::npos) << text;
  EXPECT_NE(text.find("    - clock reads:"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped: fio has no engine"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 measured experiments within 10%"), std::string::npos) << text;
  EXPECT_NE(format_round(rows[0], rows[0].rounds[1]).find("round 2 (fio first)"), std::string::npos);

  nlohmann::json j = to_json(rows[1], settings.tolerance);
  EXPECT_EQ(j["fio_engine"], "psync");
  EXPECT_EQ(j["rounds"].size(), 3u);
  EXPECT_EQ(j["rounds"][1]["first"], "fio");
  EXPECT_EQ(j["rounds"][0]["fio_command"], "fio --loops=10");
  EXPECT_NEAR(j["median"]["cpu_ratio"].get<double>(), 1.21, 1e-9);
  EXPECT_FALSE(j["within_tolerance"].get<bool>());
  EXPECT_TRUE(j["skipped"].is_null());
  EXPECT_FALSE(j["differences"].empty());
  nlohmann::json s = to_json(skipped, settings.tolerance);
  EXPECT_TRUE(s["fio_engine"].is_null());
  EXPECT_TRUE(s["median"]["cpu_ratio"].is_null());
  EXPECT_EQ(s["skipped"], *skipped.skipped);
}

TEST(CrosscheckCases, TheGoalsFiveExperimentsAllMapToFio) {
  auto cases = crosscheck_cases();
  ASSERT_EQ(cases.size(), 5u);
  const std::vector<std::string> engines{"psync", "psync", "mmap", "io_uring", "io_uring"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    FioMapping m = fio_job_for(cases[i]);
    ASSERT_TRUE(m.job) << cases[i].method << ": " << m.why_not;
    EXPECT_EQ(m.job->engine, engines[i]);
    EXPECT_TRUE(m.job->aligned_buffers);
  }
  EXPECT_FALSE(fio_job_for(cases[0]).job->direct);
  EXPECT_EQ(fio_job_for(cases[3]).job->iodepth, 32u);
  EXPECT_TRUE(fio_job_for(cases[3]).job->direct);
  EXPECT_EQ(cases[3].pattern, AccessPattern::Rand);
  EXPECT_EQ(cases[4].block_size, 1u << 20);
  for (const auto& e : crosscheck_cases(std::uint64_t{8} << 20)) EXPECT_EQ(e.file_size, 8u << 20);
}

}  // namespace
}  // namespace iolab::harness
