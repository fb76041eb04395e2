// The commit log's per-second panel (charts_commitlog.cpp): present when the
// records carry extra.per_second, absent otherwise, robust to malformed
// entries, and drawn by the chart library without a warning.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "chromium.h"
#include "iolab/results/record.h"
#include "iolab/report/html.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

constexpr const char* kPanelTitle = "Messages acknowledged per second";

// Two designs at two message sizes (a block-size family), each with a series.
results::Results commitlog_results(bool with_series) {
  results::Results rs;
  for (const char* design : {"kafka", "rocketmq"})
    for (std::uint64_t size : {1024u, 4096u}) {
      testing::Spec s;
      s.suite = "commitlog";
      s.experiment = "designs: 1 producer, 1 topic, closed loop";
      s.method = design;
      s.op = "write";
      s.block = size;
      s.cache = "";
      s.buffer = "";
      results::Result r = testing::make(s);
      if (with_series) {
        nlohmann::json series = nlohmann::json::array();
        for (int t = 0; t < 4; ++t)
          series.push_back({{"t", t}, {"messages", 1000 * (t + 1)}, {"mib", t + 0.5}, {"p99_ns", 20000 * (t + 1)}, {"max_ns", 1e6}});
        // Malformed entries are skipped, not trusted.
        series.push_back({{"t", -1}, {"messages", 5}});
        series.push_back({{"t", "later"}, {"messages", 5}});
        series.push_back(7);
        r.extra["per_second"] = series;
      }
      rs.results.push_back(r);
    }
  return rs;
}

TEST(CommitLogChart, PanelOnlyWhenRecordsCarryASeries) {
  std::string with = render_html_report({commitlog_results(true)});
  std::string without = render_html_report({commitlog_results(false)});
  EXPECT_NE(with.find(kPanelTitle), std::string::npos);
  EXPECT_NE(with.find("p99 append latency per second"), std::string::npos);
  EXPECT_EQ(without.find(kPanelTitle), std::string::npos);
  std::size_t axes = 0;
  for (std::size_t at = with.find("\"second of the run\""); at != std::string::npos; at = with.find("\"second of the run\"", at + 1))
    ++axes;
  EXPECT_EQ(axes, 2u) << "one x axis per panel";
  EXPECT_EQ(with.find("\"later\""), std::string::npos);
}

TEST(CommitLogChart, SeriesEntriesOfEveryShapeAreSkippedSafely) {
  results::Results rs = commitlog_results(false);
  rs.results[0].extra["per_second"] = "not a list";
  rs.results[1].extra["per_second"] = nlohmann::json::array({nullptr, nlohmann::json::object(), {{"t", 1e308 * 10}}});
  std::string page = render_html_report({rs});
  EXPECT_EQ(page.find(kPanelTitle), std::string::npos) << "no usable entry: no panel";
}

// Issue 29 item 8: a long series is drawn as a bounded number of points (means
// over runs of seconds) while the results JSON keeps every second.
TEST(CommitLogChart, LongSeriesIsDownsampledInThePageAndKeptInTheJson) {
  results::Results rs = commitlog_results(false);
  constexpr int kSeconds = 30000;  // past the old 20,000-row cap too
  nlohmann::json series = nlohmann::json::array();
  for (int t = 0; t < kSeconds; ++t) series.push_back({{"t", t}, {"messages", 1000}, {"mib", 1.0}, {"p99_ns", 5000 + t}});
  rs.results[0].extra["per_second"] = series;
  std::string page = render_html_report({rs});
  std::size_t rows = 0;
  for (std::size_t at = page.find("\"messages\":"); at != std::string::npos; at = page.find("\"messages\":", at + 1)) ++rows;
  EXPECT_GT(rows, 100u) << "the series is still drawn";
  EXPECT_LE(rows, 600u) << "at most 600 points per record in the page";
  EXPECT_LT(page.size(), 3u * 1024 * 1024);
  EXPECT_NE(page.find("\"messages\":1000.0"), std::string::npos) << "a mean of equal seconds is that value";
  EXPECT_NE(page.find("\"p99\":" + std::to_string(5000 + kSeconds - 1) + ".0"), std::string::npos) << "the worst second's p99 is kept";
  nlohmann::json saved = results::to_json(rs);
  EXPECT_EQ(saved["results"][0]["extra"]["per_second"].size(), static_cast<std::size_t>(kSeconds));
}

TEST(CommitLogChart, DrawsInChromiumWithoutWarnings) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed";
  std::filesystem::path dir = std::filesystem::path(IOLAB_BINARY_DIR) / "report-test";
  std::filesystem::create_directories(dir);
  std::filesystem::path page = dir / "commitlog-report.html";
  write_html_report({commitlog_results(true)}, page);
  testing::expect_charts_draw_without_warnings(page, 1);
}

}  // namespace
}  // namespace iolab::report
