// The memory suite's charts (charts_memory.cpp): one chart per workload
// with every working set on a log x, the per-second panels with the moment
// the page cache filled, the counters under the chart, and a page the chart
// library draws without a warning. Small synthetic records: no memory run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "chromium.h"
#include "iolab/results/record.h"
#include "iolab/report/html.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

constexpr const char* kCurveTitle = "MiB/s against working set / memory limit (log-log)";
constexpr std::uint64_t kLimit = 32u << 20;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Random 4 KiB reads and the scan, by mmap and io_uring at QD 32, at 0.5x,
// 1x and 4x a 32 MiB limit; mmap collapses past the limit.
results::Results memory_results(bool with_series) {
  results::Results rs;
  for (bool random : {true, false})
    for (double ratio : {0.5, 1.0, 4.0})
      for (const char* method : {"mmap", "io_uring"}) {
        const bool mapped = std::string(method) == "mmap";
        testing::Spec s;
        s.suite = "memory";
        s.experiment = std::string(random ? "random 4k reads" : "seq 256k scan") + ", file " +
                       (ratio == 0.5 ? "0.5" : ratio == 1.0 ? "1" : "4") + "x limit 32m";
        s.method = method;
        s.block = random ? 4096 : 256 * 1024;
        s.file = static_cast<std::uint64_t>(ratio * static_cast<double>(kLimit));
        s.mib_s = mapped && ratio > 1 ? (random ? 0.25 : 300) : (random ? 80 : 600);
        s.reps = 1;
        s.passes = 1;
        s.cache = mapped ? "cold" : "direct";
        s.buffer = "aligned";
        results::Result r = testing::make(s);
        r.pattern = random ? results::AccessPattern::Rand : results::AccessPattern::Seq;
        if (!mapped) r.queue_depth = 32;
        r.extra["memory_limit_bytes"] = kLimit;
        r.extra["working_set_ratio"] = ratio;
        r.extra["major_faults_per_mib"] = mapped ? 250.0 : 0.0;
        r.extra["sys_s_per_mib"] = mapped ? 0.01 : 0.001;
        r.extra["storage_read_bytes_per_byte"] = mapped ? 1.5 : 1.0;
        r.extra["device_read_bytes_per_byte"] = mapped ? 1.6 : 1.0;
        r.extra["tlb_shootdowns_per_s"] = mapped ? 12.0 : 0.0;
        r.extra["cache_full_at_s"] = mapped && ratio > 1 ? nlohmann::json(3.0) : nlohmann::json(nullptr);
        if (with_series) {
          nlohmann::json series = nlohmann::json::array();
          for (int t = 1; t <= 5; ++t) {
            const double mib_s = mapped && ratio > 1 && t > 3 ? 0.2 : 50.0 * t;
            const double cache = mapped ? std::min(1.0 * t / 3, 0.95) * static_cast<double>(kLimit) : 0.0;
            series.push_back({{"t", t}, {"seconds", 1}, {"mib", mib_s}, {"mib_per_s", mib_s}, {"major_faults", mapped ? 900 : 0},
                              {"page_cache_bytes", cache}, {"tlb_shootdowns", mapped ? 12 : 0}});
          }
          series.push_back({{"t", "later"}, {"mib_per_s", 5}});  // malformed: skipped
          series.push_back({{"t", 6}, {"seconds", 0.5}, {"mib_per_s", 0}, {"page_cache_bytes", nullptr}});
          r.extra["per_second"] = series;
        }
        rs.results.push_back(r);
      }
  return rs;
}

TEST(MemoryChart, OneChartPerWorkloadWithEveryWorkingSet) {
  std::string page = render_html_report({memory_results(true)});
  EXPECT_EQ(occurrences(page, kCurveTitle), 2u) << "random reads and the scan: a chart each, every working set in it";
  EXPECT_EQ(occurrences(page, "format(datum.value, '~g') + 'x'"), 2u) << "each chart's x: ratios labelled 0.5x, 4x";
  for (const char* at : {"File 0.5x the limit", "File 1x the limit", "File 4x the limit"})
    EXPECT_EQ(occurrences(page, at), 2u) << at;
  EXPECT_EQ(occurrences(page, "The group's page cache (dashed: the limit)"), 6u);
  EXPECT_EQ(page.find("\"later\""), std::string::npos) << "a malformed entry is not drawn";
  EXPECT_EQ(occurrences(page, "page cache full at second"), 2u) << "the rule where the cache filled: mmap at 4x, each workload";
}

TEST(MemoryChart, CountersExplainTheLargestWorkingSet) {
  std::string page = render_html_report({memory_results(true)});
  EXPECT_NE(page.find("mmap at 4x: 250 major faults per MiB, 10 s kernel CPU per GiB, 1.5 bytes read by the block "
                      "layer per byte delivered (this process), 1.6 by the device (machine-wide), 12 TLB shootdowns "
                      "per second (machine-wide); the group&#39;s page cache full at 3 s."),
            std::string::npos);
  EXPECT_NE(page.find("io_uring qd32 at 4x: 0 major faults per MiB"), std::string::npos);
  EXPECT_NE(page.find("At 0.5x the limit: io_uring qd32 fastest at 80.0 MiB/s"), std::string::npos);
  EXPECT_NE(page.find("at 4x the limit: io_uring qd32 fastest at 80.0 MiB/s, 320x mmap&#39;s 0.250 MiB/s"), std::string::npos);
}

TEST(MemoryChart, WithoutASeriesTheCurveStaysAndNoTimePanel) {
  std::string page = render_html_report({memory_results(false)});
  EXPECT_EQ(occurrences(page, kCurveTitle), 2u);
  EXPECT_EQ(page.find("MiB/s in each second"), std::string::npos);
}

// A record whose group's cache never filled (extra.cache_never_full) is no
// past-memory figure: not on the curve, not in who leads, and said so.
TEST(MemoryChart, APassWhoseCacheNeverFilledIsLeftOutOfTheCurveAndTheLead) {
  results::Results rs = memory_results(true);
  for (auto& r : rs.results)
    if (r.method == "io_uring" && r.extra["working_set_ratio"] == 4.0) r.extra["cache_never_full"] = true;
  std::string page = render_html_report({rs});
  EXPECT_EQ(page.find("at 4x the limit: io_uring qd32 fastest"), std::string::npos) << "no party to who leads";
  EXPECT_NE(page.find("at 4x the limit: mmap fastest"), std::string::npos);
  EXPECT_NE(page.find("Left out, as their group&#39;s page cache never filled during the pass: io_uring qd32 at 4x."),
            std::string::npos);
}

TEST(MemoryChart, MalformedFieldsAreSkippedNotTrusted) {
  results::Results rs = memory_results(true);
  rs.results[0].extra["per_second"] = "not a list";
  rs.results[1].extra["per_second"] = nlohmann::json::array({nullptr, nlohmann::json::object(), {{"t", 1e308 * 10}}});
  rs.results[2].extra["major_faults_per_mib"] = "manyfaults";
  rs.results[3].extra["cache_full_at_s"] = -4;
  rs.results[4].extra["memory_limit_bytes"] = nlohmann::json::array();
  std::string page = render_html_report({rs});
  EXPECT_EQ(occurrences(page, kCurveTitle), 3u) << "the record whose limit is not a number: a chart of its own";
  EXPECT_EQ(page.find("manyfaults"), std::string::npos);
  EXPECT_EQ(page.find("full at -4"), std::string::npos);
}

TEST(MemoryChart, DrawsInChromiumWithoutWarnings) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed";
  std::filesystem::path dir = std::filesystem::path(IOLAB_BINARY_DIR) / "report-test";
  std::filesystem::create_directories(dir);
  std::filesystem::path page = dir / "memory-report.html";
  write_html_report({memory_results(true)}, page);
  testing::expect_charts_draw_without_warnings(page, 2);
}

}  // namespace
}  // namespace iolab::report
