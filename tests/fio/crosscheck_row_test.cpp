// A cross-check row without running anything: its medians and ratios per
// round, each side's figures from iolab's record and fio's report, the
// differences a gap is explained by, the table, and the goal's experiments.
#include <gtest/gtest.h>

#include <cmath>

#include "fio/crosscheck_fixtures.h"
#include "iolab/base/error.h"
#include "iolab/fio/crosscheck.h"

namespace iolab::fio {
namespace {

using testing::mentions;

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
  results::Result r;
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
  EXPECT_EQ(cases[3].pattern, results::AccessPattern::Rand);
  EXPECT_EQ(cases[4].block_size, 1u << 20);
  for (const auto& e : crosscheck_cases(std::uint64_t{8} << 20)) EXPECT_EQ(e.file_size, 8u << 20);
}

}  // namespace
}  // namespace iolab::fio
