// Which points share a chart, what x is, what the lines are called, and the
// sentences beneath: checked on synthetic records shaped like the suites'.
#include <gtest/gtest.h>

#include <algorithm>

#include "iolab/results/console.h"
#include "iolab/report/html.h"
#include "internal/report/common.h"
#include "internal/report/explain.h"
#include "internal/report/family_charts.h"
#include "internal/report/families.h"
#include "internal/report/model.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;
using testing::Spec;

std::vector<SuiteView> grouped_one(const results::Results& rs) { return group_results({{&rs, "run"}}); }

// Issue 10: write-buffering's 128 B calls (four writers) and its 1-4 KiB
// calls through a 4 KiB buffer (another set of writers) are two experiment
// families: no line may join a 128 B point to a 1 KiB one.
TEST(Families, DifferentContendersAreDifferentCharts) {
  results::Results rs;
  for (const char* m : {"stdio", "iostream", "stdio-unbuffered", "syscall"})
    rs.results.push_back(make({"write-buffering", "100k writes of 128 B", m, "write", 128, 128 * 100000, 100, 0.02, 5, ""}));
  for (std::uint64_t size : {1024u, 2048u, 3072u, 4096u})
    for (const char* m : {"stdio", "iostream", "syscall", "bufferedstream"})
      rs.results.push_back(make({"write-buffering", "8k writes of " + std::to_string(size / 1024) + " KiB via a 4k buffer", m,
                                 "write", size, size * 8000, 300, 0.02, 5, ""}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 2u);
  const Family& small = suites[0].families[0];
  EXPECT_EQ(small.axis, Axis::None);  // one size, four writers: bars
  EXPECT_EQ(small.points.size(), 4u);
  const Family& half = suites[0].families[1];
  EXPECT_EQ(half.axis, Axis::BlockSize);
  EXPECT_EQ(half.points.size(), 16u);
  EXPECT_EQ(half.experiments.size(), 4u);
  for (const auto& p : half.points) EXPECT_GE(p.result->block_size, 1024u);
}

// The same writers at two call counts are one family, on the work done per
// pass: repetitions of different passes must not move the points.
TEST(Families, SameContendersAtSeveralCountsShareAWorkPerPassAxis) {
  results::Results rs;
  for (std::uint64_t n : {100000u, 500000u})
    for (const char* m : {"stdio", "syscall"}) {
      Spec s{"write-buffering", std::to_string(n / 1000) + "k writes of 128 B", m, "write", 128, 128 * n, 100, 0.02, 5, ""};
      s.passes = n == 100000 ? 7 : 3;  // as the engine might pick them
      rs.results.push_back(make(s));
    }
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  const Family& f = suites[0].families[0];
  EXPECT_EQ(f.axis, Axis::WorkPerPass);
  EXPECT_EQ(axis_title(f), "bytes per pass");
  std::set<double> xs;
  for (const auto& p : f.points) xs.insert(p.x);
  EXPECT_EQ(xs, (std::set<double>{128.0 * 100000, 128.0 * 500000}));
}

// A method skipped at one size is still a contender there: the sweep stays one chart.
TEST(Families, ASkippedContenderDoesNotSplitASweep) {
  results::Results rs;
  for (std::uint64_t bs : {32u, 4096u, 65536u})
    for (const char* m : {"pread", "mmap", "direct"}) {
      results::Result r = make({"packet-sweep", "read " + std::to_string(bs) + " B packets, warm", m, "read", bs, 1u << 20, 500});
      if (std::string(m) == "direct" && bs == 32) r.skipped = "O_DIRECT needs 512-byte multiples";
      rs.results.push_back(r);
    }
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  EXPECT_EQ(suites[0].families[0].axis, Axis::BlockSize);
  EXPECT_EQ(suites[0].families[0].points.size(), 8u);
}

TEST(Families, OneChartPerOpCacheAndFlushWithBlockSizeOnX) {
  results::Results rs = testing::realistic();
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.size(), 4u);  // seq-read, packet-sweep, direct (the queue-depth curve), the markup job
  EXPECT_EQ(suites[0].suite, "seq-read");
  ASSERT_EQ(suites[0].families.size(), 2u);  // warm, cold
  const Family& warm = suites[0].families[0];
  EXPECT_EQ(warm.axis, Axis::BlockSize);
  // syscall ran with two buffers, so its lines name them.
  EXPECT_NE(std::find(warm.series.begin(), warm.series.end(), "syscall (aligned)"), warm.series.end());
  EXPECT_NE(std::find(warm.series.begin(), warm.series.end(), "syscall (heap)"), warm.series.end());
  EXPECT_NE(std::find(warm.series.begin(), warm.series.end(), "mmap"), warm.series.end());
  // packet-sweep: read, write (no flush), write (periodic flush, msync vs fdatasync as separate lines).
  const auto& ps = suites[1];
  ASSERT_EQ(ps.families.size(), 3u);
  const Family& periodic = ps.families[2];
  EXPECT_EQ(periodic.axis, Axis::None);
  EXPECT_NE(std::find(periodic.series.begin(), periodic.series.end(), "mmap [async-16k:msync]"), periodic.series.end());
}

TEST(Families, SplitsByExperimentWhenTwoPointsWouldShareALine) {
  results::Results rs;
  rs.results.push_back(make({"write-path", "pwrite 1k heap vs aligned", "pread", "write", 1024, 1u << 20, 500, 0.02, 3, ""}));
  rs.results.push_back(make({"write-path", "buffer size swept", "pread", "write", 1024, 8u << 20, 600, 0.02, 3, ""}));
  rs.results.push_back(make({"write-path", "buffer size swept", "pread", "write", 65536, 8u << 20, 900, 0.02, 3, ""}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.size(), 1u);
  ASSERT_EQ(suites[0].families.size(), 2u);
  EXPECT_NE(suites[0].families[0].title.find("pwrite 1k heap vs aligned"), std::string::npos);
  EXPECT_EQ(suites[0].families[1].axis, Axis::BlockSize);
}

TEST(Families, ASweepStoredAsOneExperimentPerSizeIsOneChartAgain) {
  results::Results rs;
  for (std::uint64_t bs : {4096ull, 65536ull, 1ull << 20})
    for (std::string buffer : {"heap", "aligned"})
      rs.results.push_back(make({"write-path", "pwrite 32m in " + std::to_string(bs) + " writes", "pread", "write", bs, 32u << 20,
                                 500, 0.02, 3, "", "none", buffer}));
  // Another design (one writer, 1..20 KiB at a fixed count): a chart of its own.
  for (std::uint64_t bs : {1024ull, 4096ull, 20480ull})
    rs.results.push_back(make({"write-path", "2k pwrites of 1..20k", "pread", "write", bs, 2000 * bs, 400, 0.02, 3, ""}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 2u);
  const Family& sweep = suites[0].families[0];
  EXPECT_EQ(sweep.axis, Axis::BlockSize);
  EXPECT_EQ(sweep.points.size(), 6u);
  EXPECT_EQ(sweep.series, (std::vector<std::string>{"pread (heap)", "pread (aligned)"}));
  EXPECT_EQ(suites[0].families[1].points.size(), 3u);
  EXPECT_NE(suites[0].families[1].title.find("2k pwrites of 1..20k"), std::string::npos);
}

TEST(Families, OnePointPerMethodAtDifferentSizesIsABarChart) {
  results::Results rs;
  rs.results.push_back(make({"copy", "copy 32m", "readwrite", "copy", 4096, 32u << 20, 300}));
  rs.results.push_back(make({"copy", "copy 32m", "sendfile", "copy", 32u << 20, 32u << 20, 900}));
  rs.results.push_back(make({"copy", "copy 32m", "splice", "copy", 1u << 20, 32u << 20, 600}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  const Family& f = suites[0].families[0];
  EXPECT_EQ(f.axis, Axis::None);
  EXPECT_EQ(f.series, (std::vector<std::string>{"readwrite · 4 KiB", "sendfile · 32 MiB", "splice · 1 MiB"}));
  auto text = explain(f);
  ASSERT_GE(text.size(), 2u);
  EXPECT_EQ(text[0].rfind("sendfile · 32 MiB is 3.0x faster than readwrite · 4 KiB", 0), 0u) << text[0];
}

TEST(Families, TwoRunsShareChartsWithTheirNamesOnTheLines) {
  results::Results a, b;
  a.results.push_back(make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}));
  a.results.push_back(make({"s", "e", "pread", "read", 65536, 8u << 20, 3000}));
  b.results.push_back(make({"s", "e", "pread", "read", 4096, 8u << 20, 1500}));
  b.results.push_back(make({"s", "e", "pread", "read", 65536, 8u << 20, 3300}));
  auto suites = group_results({{&a, "laptop.json"}, {&b, "server.json"}});
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  EXPECT_EQ(suites[0].families[0].series, (std::vector<std::string>{"pread — laptop.json", "pread — server.json"}));
  std::string page = render_html_report({a, b}, {{"laptop.json", "server.json"}, "two"});
  EXPECT_NE(page.find("<h3>server.json</h3>"), std::string::npos);  // a decision table per run
}

// Issue 29 item 15: Vega drops legend entries past 30 (3 methods x 11 files); the spec lifts the
// limit to the chart's series, so every input is named.
TEST(Families, EveryInputIsNamedInTheLegend) {
  std::vector<results::Results> runs(12);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const char* m : {"pread", "syscall", "mmap"})
      for (std::uint64_t bs : {4096u, 65536u}) runs[i].results.push_back(make({"s", "e", m, "read", bs, 8u << 20, 1000.0 + i}));
    names.push_back("run-" + std::to_string(i) + ".json");
  }
  ReportModel model = build_model(runs, {names, "twelve"});
  ASSERT_EQ(model.suites.at(0).families.size(), 1u);
  const FamilySection& fs = model.suites[0].families[0];
  ASSERT_EQ(fs.family.series.size(), 36u);
  auto spec = nlohmann::json::parse(fs.chart_json);
  EXPECT_EQ(spec["config"]["legend"]["symbolLimit"], 36);
  // Few series: Vega's own limit, unchanged.
  ReportModel two = build_model({runs[0], runs[1]}, {{names[0], names[1]}, "two"});
  EXPECT_FALSE(nlohmann::json::parse(two.suites.at(0).families.at(0).chart_json)["config"]["legend"].contains("symbolLimit"));
}

// Issue 10: a queued method's label always carries its depth and io_uring options.
TEST(Families, QueuedMethodsCarryTheirDepthAndOptions) {
  results::Results rs;
  for (unsigned qd : {1u, 32u})
    for (std::uint64_t bs : {4096u, 65536u}) {
      results::Result r = make({"direct", "e", "io_uring", "read", bs, 8u << 20, 500.0 * qd});
      r.queue_depth = qd;
      if (qd == 32) r.extra["io_options"] = {"registered files", "SQPOLL"};
      rs.results.push_back(r);
    }
  rs.results.push_back(make({"direct", "e", "pread", "read", 4096, 8u << 20, 400}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  EXPECT_EQ(suites[0].families[0].series,
            (std::vector<std::string>{"io_uring qd1", "io_uring qd32+registered files+SQPOLL", "pread"}));
}

TEST(Explain, NamesTheGapWithCallsAndFaultsFromTheRecords) {
  results::Results rs;
  // 1 GiB read at 1 KiB: syscall 1,048,576 calls; mmap 262,144 faults, 9.1x faster.
  // 1 GiB in 1,048,576 calls of exactly 1 µs: 976.5625 MiB/s.
  rs.results.push_back(make({"s", "e", "syscall", "read", 1024, 1ull << 30, 976.5625, 0.02}));
  rs.results.push_back(make({"s", "e", "mmap", "read", 1024, 1ull << 30, 976.5625 * 9.1, 0.02}));
  rs.results.push_back(make({"s", "e", "syscall", "read", 1u << 20, 1ull << 30, 6000, 0.02}));
  rs.results.push_back(make({"s", "e", "mmap", "read", 1u << 20, 1ull << 30, 5000, 0.02}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  auto text = explain(suites[0].families[0]);
  ASSERT_GE(text.size(), 2u);
  EXPECT_NE(text[0].find("At 1 KiB, mmap is 9.1x faster than syscall"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("syscall made 1,048,576 calls of 1.0 µs each"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("mmap took 262,144 minor faults"), std::string::npos) << text[0];
  EXPECT_NE(text[1].find("The lead changes: mmap at 1 KiB and syscall at 1 MiB"), std::string::npos) << text[1];
}

// Counts are per pass: a repetition of 4 passes made 4x the calls of one pass.
TEST(Explain, CountsArePerPass) {
  results::Results rs;
  Spec s{"s", "e", "syscall", "read", 4096, 1u << 20, 1000, 0.02};
  s.passes = 4;
  rs.results.push_back(make(s));
  s.method = "pread";
  s.mib_s = 3000;
  rs.results.push_back(make(s));
  auto suites = grouped_one(rs);
  auto text = explain(suites.at(0).families.at(0));
  EXPECT_NE(text.at(0).find("syscall made 256 calls per pass, "), std::string::npos) << text[0];
}

// Issue 14 #7: records whose repetitions took 0 s (or a denormal) crashed
// explain(); they have no rate: left out of the charts, listed with a warning.
TEST(Robustness, ZeroAndDenormalSamplesAreListedNotCharted) {
  for (double t : {0.0, 5e-324, 1e-12}) {
    SCOPED_TRACE(t);
    results::Results rs;
    for (std::uint64_t bs : {1024u, 4096u})
      for (const char* m : {"mmap", "pread"}) {
        results::Result r = make({"s", "e", m, "read", bs, 8u << 20, 100});
        r.samples_s.assign(5, t);
        rs.results.push_back(r);
      }
    rs.results.push_back(make({"s", "e", "stdio", "read", 1024, 8u << 20, 100}));
    auto suites = grouped_one(rs);
    ASSERT_EQ(suites.at(0).families.size(), 1u);
    EXPECT_EQ(suites[0].families[0].points.size(), 1u);  // stdio alone
    EXPECT_FALSE(explain(suites[0].families[0]).empty());
    std::string page = render_html_report({rs});
    EXPECT_NE(page.find("4 without usable figures"), std::string::npos);
    EXPECT_NE(page.find("a repetition took 0 s"), std::string::npos);
    EXPECT_NE(page.find("This run holds no decision"), std::string::npos);  // nothing ranked from records that never met
  }
}

// Extreme but finite figures (a results file from elsewhere) render without
// crashing or non-finite numbers in the page.
TEST(Robustness, ExtremeFiguresRender) {
  results::Results rs;
  for (std::uint64_t bs : {std::uint64_t{1}, std::uint64_t{1024}, std::uint64_t{1} << 40}) {
    results::Result r = make({"s", "e", "mmap", "read", bs, 8u << 20, 100});
    r.samples_s = {1e300, 1e-9, 1e308};
    r.bytes = ~0ull;
    r.passes = 0;
    r.io_calls = ~0ull;
    r.minor_faults = -5;
    r.user_s = 1e300;
    r.latency_ns->p50 = 1e300;
    rs.results.push_back(r);
    rs.results.push_back(make({"s", "e", "pread", "read", bs, 8u << 20, 100}));
  }
  std::string page = render_html_report({rs});
  page.resize(page.find("data-bundle"));  // the chart library's own code names NaN
  for (const char* bad : {"NaN", "Infinity", "nan", "inf "})
    if (auto at = page.find(bad); at != std::string::npos) ADD_FAILURE() << bad << " in: " << page.substr(at - 300, 400);
}

TEST(Model, ShowsPassesLatencySourceFlushesAndWhereBytesEnded) {
  results::Results rs;
  Spec w{"packet-sweep", "write 256k in 1k packets", "pread", "write", 1024, 256u << 10, 50, 0.02, 5, "", "every-16k:fdatasync"};
  w.passes = 3;
  results::Result flushed = make(w);
  flushed.extra["flushes"] = 16;
  flushed.extra["bytes_per_flush"] = 16384;
  rs.results.push_back(flushed);
  w.sync = "none";
  rs.results.push_back(make(w));
  results::Result direct = make({"direct", "seq write", "direct", "write", 4096, 1u << 20, 500, 0.02, 5, "direct"});
  direct.latency_ns->source = results::LatencySource::EveryRequest;
  rs.results.push_back(direct);

  std::string page = render_html_report({rs});
  std::string body = page.substr(0, page.find("<script type=\"application/json\""));
  EXPECT_NE(page.find("5 reps of 3 passes"), std::string::npos) << body;
  EXPECT_NE(page.find("16 flushes per pass, 16 KiB each"), std::string::npos);
  EXPECT_NE(page.find("flushed (every-16k:fdatasync)"), std::string::npos);
  EXPECT_NE(page.find("page cache only (not flushed)"), std::string::npos);
  EXPECT_NE(page.find("on the device (O_DIRECT; its write cache not flushed)"), std::string::npos);
  EXPECT_NE(page.find("every call timed in a separate pass; 256 samples"), std::string::npos);
  EXPECT_NE(page.find("every request timed in a separate pass, submission to completion"), std::string::npos);
}

// Issue 40 item 6: a lead beyond the noise is judged on the spread of
// single passes, not on the repetitions' range, which shrinks with the
// passes per repetition; the table and the chart's bars show the same spread.
TEST(Model, ClearlyFasterAndTheBarsUseThePerPassSpread) {
  Spec fast_spec;
  fast_spec.mib_s = 1100;
  fast_spec.spread = 0.01;
  fast_spec.passes = 50;
  Spec slow_spec = fast_spec;
  slow_spec.method = "mmap";
  slow_spec.mib_s = 1000;
  results::Result fast = make(fast_spec), slow = make(slow_spec);
  // Repetitions of 50 passes within 1% of their medians: 10% apart, no overlap.
  EXPECT_TRUE(clearly_faster(fast, slow)) << "files without per-pass times: the repetitions' range";
  auto passes_within = [](results::Result& r, double spread) {
    const double median = r.seconds().median / r.passes;
    results::PassSpread p;
    p.n = 250;
    p.median = p.mean = median;
    p.min = p.p5 = median * (1 - spread);
    p.max = p.p95 = median * (1 + spread);
    r.pass_s = p;
  };
  passes_within(fast, 0.3);  // single passes 30% either way: the two overlap
  passes_within(slow, 0.3);
  EXPECT_FALSE(clearly_faster(fast, slow));
  Rate rt = rate(fast);
  EXPECT_NEAR(rt.slowest, 1100 / 1.3, 1);  // the bar's low end: the 95th percentile pass
  EXPECT_NEAR(rt.fastest, 1100 / 0.7, 1);
  passes_within(fast, 0.01);
  passes_within(slow, 0.01);
  EXPECT_TRUE(clearly_faster(fast, slow));
}

// Latency of one call and of one queued request are different quantities:
// a family holding both draws them in separate panels, each named.
TEST(Model, PerCallAndPerRequestLatencyAreSeparatePanels) {
  results::Results rs;
  rs.environment = testing::environment();
  Spec call;
  rs.results.push_back(make(call));
  Spec queued = call;
  queued.method = "io_uring";
  results::Result q = make(queued);
  q.latency_ns->source = results::LatencySource::EveryRequest;
  rs.results.push_back(q);
  std::string page = render_html_report({rs});
  EXPECT_NE(page.find("Latency per call: p50, p99, p99.9 (log)"), std::string::npos);
  EXPECT_NE(page.find("Latency per request: p50, p99, p99.9 (log)"), std::string::npos);
  EXPECT_EQ(page.find("Latency: p50"), std::string::npos);
  // A family of one kind has one panel.
  rs.results.pop_back();
  std::string one = render_html_report({rs});
  EXPECT_NE(one.find("Latency per call: p50"), std::string::npos);
  EXPECT_EQ(one.find("Latency per request"), std::string::npos);
}

// The report says where a write's bytes ended, and labels a queued method,
// exactly as the console does (src/results/console.cpp keeps its own copy).
TEST(Model, DestinationAndQueueLabelAreWordedAsTheConsoleWordsThem) {
  std::vector<results::Result> rs;
  rs.push_back(make({"s", "none", "pread", "write", 4096, 1u << 20, 500, 0.02, 5, ""}));
  rs.push_back(make({"s", "end", "pread", "write", 4096, 1u << 20, 500, 0.02, 5, "", "end:fdatasync"}));
  rs.push_back(make({"s", "direct", "direct", "write", 4096, 1u << 20, 500, 0.02, 5, "direct"}));
  std::string tables = results::format_tables(rs, false);
  for (const auto& r : rs) {
    ASSERT_FALSE(destination(r).empty());
    EXPECT_NE(tables.find(destination(r)), std::string::npos) << destination(r) << "\n" << tables;
  }
  EXPECT_EQ(destination(make({"s", "e", "pread", "read", 4096, 1u << 20, 500})), "");

  results::Result queued = make({"s", "e", "io_uring", "read", 4096, 1u << 20, 500});
  queued.queue_depth = 32;
  queued.extra["io_options"] = {"registered files", "SQPOLL"};
  EXPECT_EQ(queue_label(queued), "qd32+registered files+SQPOLL");
  EXPECT_NE(results::format_tables({queued}, false).find("io_uring " + queue_label(queued)), std::string::npos)
      << results::format_tables({queued}, false);
}

// The direct suite's queue-depth curve: x = requests in flight in all, y =
// IOPS, one line per method whatever its depth (the queued methods'
// depth is x, not part of their label), N threads of O_DIRECT pread as a line
// of its own; latency p50/p99 against the depth. Other experiments of the
// suite keep their charts.
TEST(QueueDepthCurve, OneChartWithIopsAndLatencyAgainstTotalDepth) {
  results::Results rs;
  rs.results = testing::queue_depth_curve();
  rs.results.push_back(make({"direct", "seq read 4k x 64", "direct", "read", 4096, 256u << 10, 100, 0.02, 5, "direct"}));
  rs.results.push_back(make({"direct", "seq read 4k x 64", "pread", "read", 4096, 256u << 10, 300, 0.02, 5, "cold"}));
  auto suites = grouped_one(rs);
  ASSERT_EQ(suites.size(), 1u);
  ASSERT_EQ(suites[0].families.size(), 2u);  // the seq reads keep their own chart
  const Family* curve = nullptr;
  for (const auto& f : suites[0].families)
    if (f.chart == &kQueueDepthCurve) curve = &f;
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(curve->axis, Axis::TotalDepth);
  EXPECT_FALSE(curve->bytes_metric);  // IOPS
  EXPECT_EQ(curve->series, (std::vector<std::string>{"io_uring", "libaio", "direct, N threads"}));
  ASSERT_EQ(curve->points.size(), 9u);
  for (const auto& p : curve->points) EXPECT_EQ(p.x, total_depth(*p.result));
  EXPECT_EQ(x_text(*curve, 16), "16 in flight");

  ReportModel model = build_model({rs}, {});
  const FamilySection* section = nullptr;
  for (const auto& f : model.suites.at(0).families)
    if (f.family.chart == &kQueueDepthCurve) section = &f;
  ASSERT_NE(section, nullptr);
  const nlohmann::json spec = nlohmann::json::parse(section->chart_json);
  ASSERT_EQ(spec["vconcat"].size(), 2u);  // IOPS, then latency
  const nlohmann::json& iops = spec["vconcat"][0]["layer"][1]["encoding"];
  EXPECT_EQ(iops["x"]["title"], "requests in flight (all threads)");
  EXPECT_EQ(iops["x"]["scale"]["type"], "log");
  EXPECT_NE(iops["y"]["title"].get<std::string>().find("IOPS"), std::string::npos);
  const nlohmann::json& latency = spec["vconcat"][1];
  EXPECT_EQ(latency["encoding"]["y"]["field"], "ns");
  EXPECT_EQ(latency["transform"][0]["fold"], (nlohmann::json{"p50", "p99"}));
  // Each row's y is the record's operations per second; p50/p99 its latency.
  ASSERT_EQ(spec["data"]["values"].size(), 9u);
  for (const auto& row : spec["data"]["values"]) {
    const Point* p = nullptr;
    for (const auto& q : curve->points)
      if (q.series == row["series"] && q.x == row["x"].get<double>()) p = &q;
    ASSERT_NE(p, nullptr) << row.dump();
    EXPECT_DOUBLE_EQ(row["rate"].get<double>(), ops_rate(*p->result).median);
    EXPECT_DOUBLE_EQ(row["rate"].get<double>(),
                     static_cast<double>(p->result->ops) / p->result->seconds().median);
    EXPECT_DOUBLE_EQ(row["p99"].get<double>(), p->result->latency_ns->p99);
  }
  // The sentences beneath speak in the chart's unit.
  ASSERT_FALSE(section->explanation.empty());
  EXPECT_NE(section->explanation[0].find(" ops/s"), std::string::npos) << section->explanation[0];
  EXPECT_NE(section->explanation[0].find("in flight"), std::string::npos) << section->explanation[0];
}

}  // namespace
}  // namespace iolab::report
