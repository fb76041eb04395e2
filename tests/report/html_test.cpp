#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "chromium.h"
#include "iolab/report/html.h"
#include "report/common.h"
#include "report/explain.h"
#include "report/families.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;
using testing::Spec;

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(Escape, HtmlEscapesEveryMarkupCharacter) {
  EXPECT_EQ(html_escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
}

TEST(Escape, ScriptJsonCannotCloseTheScriptOrOpenAComment) {
  nlohmann::json j = {{"name", "</script><!-- <b>&amp;"}, {"bad_utf8", std::string("\xff\xfe", 2)}};
  std::string s = script_json(j);
  EXPECT_EQ(s.find("</"), std::string::npos);
  EXPECT_EQ(s.find("<!--"), std::string::npos);
  EXPECT_EQ(s.find('<'), std::string::npos);
  // Still the same JSON.
  EXPECT_EQ(nlohmann::json::parse(s)["name"], "</script><!-- <b>&amp;");
}

TEST(Numbers, GroupedAndSignificant) {
  EXPECT_EQ(grouped(1048576), "1,048,576");
  EXPECT_EQ(grouped(0), "0");
  EXPECT_EQ(sig(9.14, 2), "9.1");
  EXPECT_EQ(sig(1234.4, 3), "1,234");
  EXPECT_EQ(sig(0.000123, 2), "0.00012");
  EXPECT_EQ(sig(3e300, 2), "3e+300");
  EXPECT_EQ(times(9.14), "9.1x");
  EXPECT_EQ(times(1.424), "1.42x");
  EXPECT_EQ(bytes_text(1024), "1 KiB");
  EXPECT_EQ(bytes_text(32), "32 B");
  EXPECT_EQ(bytes_text(10u << 20), "10 MiB");
  EXPECT_EQ(duration_text(1.0e-6), "1.0 µs");
}

TEST(Bundles, AllThreeEmbeddedAndSafeInsideScript) {
  auto bundles = chart_bundles();
  ASSERT_EQ(bundles.size(), 3u);
  std::set<std::string> names;
  for (const auto& b : bundles) {
    names.insert(std::string(b.name));
    EXPECT_GT(b.text.size(), 30000u) << b.name;
    std::string lower(b.text);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower.find("</script"), std::string::npos) << b.name;
    EXPECT_EQ(lower.find("<!--"), std::string::npos) << b.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"vega", "vega-lite", "vega-embed"}));
  EXPECT_NE(bundles[0].text.find("vega"), std::string::npos);
}

TEST(Families, OneChartPerOpCacheAndFlushWithBlockSizeOnX) {
  harness::Results rs = testing::realistic();
  std::vector<Source> sources{{&rs, "run"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.size(), 3u);
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
  harness::Results rs;
  rs.results.push_back(make({"write-path", "pwrite 1k heap vs aligned", "pread", "write", 1024, 1u << 20, 500, 0.02, 3, ""}));
  rs.results.push_back(make({"write-path", "buffer size swept", "pread", "write", 1024, 8u << 20, 600, 0.02, 3, ""}));
  rs.results.push_back(make({"write-path", "buffer size swept", "pread", "write", 65536, 8u << 20, 900, 0.02, 3, ""}));
  std::vector<Source> sources{{&rs, "run"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.size(), 1u);
  ASSERT_EQ(suites[0].families.size(), 2u);
  EXPECT_NE(suites[0].families[0].title.find("pwrite 1k heap vs aligned"), std::string::npos);
  EXPECT_EQ(suites[0].families[1].axis, Axis::BlockSize);
}

TEST(Families, ASweepStoredAsOneExperimentPerSizeIsOneChartAgain) {
  harness::Results rs;
  for (std::uint64_t bs : {4096ull, 65536ull, 1ull << 20})
    for (std::string buffer : {"heap", "aligned"})
      rs.results.push_back(make({"write-path", "pwrite 32m in " + std::to_string(bs) + " writes", "pread", "write", bs, 32u << 20,
                                 500, 0.02, 3, "", "none", buffer}));
  // Overlaps the sweep at 4 KiB: a chart of its own.
  for (std::uint64_t bs : {1024ull, 4096ull, 20480ull})
    rs.results.push_back(make({"write-path", "2k pwrites of 1..20k", "pread", "write", bs, 2000 * bs, 400, 0.02, 3, ""}));
  std::vector<Source> sources{{&rs, "run"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.at(0).families.size(), 2u);
  const Family& sweep = suites[0].families[0];
  EXPECT_EQ(sweep.axis, Axis::BlockSize);
  EXPECT_EQ(sweep.points.size(), 6u);
  EXPECT_EQ(sweep.series, (std::vector<std::string>{"pread (heap)", "pread (aligned)"}));
  EXPECT_EQ(suites[0].families[1].points.size(), 3u);
  EXPECT_NE(suites[0].families[1].title.find("2k pwrites of 1..20k"), std::string::npos);
}

TEST(Families, OnePointPerMethodAtDifferentSizesIsABarChart) {
  harness::Results rs;
  rs.results.push_back(make({"copy", "copy 32m", "readwrite", "copy", 4096, 32u << 20, 300}));
  rs.results.push_back(make({"copy", "copy 32m", "sendfile", "copy", 32u << 20, 32u << 20, 900}));
  rs.results.push_back(make({"copy", "copy 32m", "splice", "copy", 1u << 20, 32u << 20, 600}));
  std::vector<Source> sources{{&rs, "run"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  const Family& f = suites[0].families[0];
  EXPECT_EQ(f.axis, Axis::None);
  EXPECT_EQ(f.series, (std::vector<std::string>{"readwrite · 4 KiB", "sendfile · 32 MiB", "splice · 1 MiB"}));
  auto text = explain(f);
  ASSERT_GE(text.size(), 2u);
  EXPECT_EQ(text[0].rfind("sendfile · 32 MiB is 3.0x faster than readwrite · 4 KiB", 0), 0u) << text[0];
}

TEST(Families, TwoRunsShareChartsWithTheirNamesOnTheLines) {
  harness::Results a, b;
  a.results.push_back(make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}));
  a.results.push_back(make({"s", "e", "pread", "read", 65536, 8u << 20, 3000}));
  b.results.push_back(make({"s", "e", "pread", "read", 4096, 8u << 20, 1500}));
  b.results.push_back(make({"s", "e", "pread", "read", 65536, 8u << 20, 3300}));
  std::vector<Source> sources{{&a, "laptop.json"}, {&b, "server.json"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  EXPECT_EQ(suites[0].families[0].series, (std::vector<std::string>{"pread — laptop.json", "pread — server.json"}));
  std::string page = render_html_report({a, b}, {{"laptop.json", "server.json"}, "two"});
  EXPECT_NE(page.find("<h3>server.json</h3>"), std::string::npos);  // a decision table per run
}

TEST(Explain, NamesTheGapWithCallsAndFaultsFromTheRecords) {
  harness::Results rs;
  // 1 GiB read at 1 KiB: syscall 1,048,576 calls; mmap 262,144 faults, 9.1x faster.
  // 1 GiB in 1,048,576 calls of exactly 1 µs: 976.5625 MiB/s.
  rs.results.push_back(make({"s", "e", "syscall", "read", 1024, 1ull << 30, 976.5625, 0.02}));
  rs.results.push_back(make({"s", "e", "mmap", "read", 1024, 1ull << 30, 976.5625 * 9.1, 0.02}));
  rs.results.push_back(make({"s", "e", "syscall", "read", 1u << 20, 1ull << 30, 6000, 0.02}));
  rs.results.push_back(make({"s", "e", "mmap", "read", 1u << 20, 1ull << 30, 5000, 0.02}));
  std::vector<Source> sources{{&rs, "run"}};
  auto suites = group_results(sources);
  ASSERT_EQ(suites.at(0).families.size(), 1u);
  auto text = explain(suites[0].families[0]);
  ASSERT_GE(text.size(), 2u);
  EXPECT_NE(text[0].find("At 1 KiB, mmap is 9.1x faster than syscall"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("syscall made 1,048,576 calls of 1.0 µs each"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("mmap took 262,144 minor faults"), std::string::npos) << text[0];
  EXPECT_NE(text[1].find("The lead changes: mmap at 1 KiB and syscall at 1 MiB"), std::string::npos) << text[1];
}

TEST(Html, EscapesJobNamesAndLabelsEverywhere) {
  std::string page = render_html_report({testing::realistic()}, {{"results <i>.json"}, "t"});
  EXPECT_EQ(page.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<b>bold</b>"), std::string::npos);
  EXPECT_EQ(page.find("results <i>.json"), std::string::npos);
  // Our own scripts: the error capture, three bundles, the renderer, plus the JSON block.
  EXPECT_EQ(count(page, "<script"), 6u);
  EXPECT_EQ(count(page, "</script>"), 6u);
  // Offline: a policy that forbids loading anything.
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
}

TEST(Html, CarriesWarningsSkipsEnvironmentReferencesAndTheDecisionTable) {
  std::string page = render_html_report({testing::realistic()});
  EXPECT_NE(page.find("io_uring is disabled"), std::string::npos);                 // skipped, with reason
  EXPECT_NE(page.find("31% of the file was resident"), std::string::npos);        // not cold
  EXPECT_NE(page.find("noisy: cv 32% over 5 repetitions"), std::string::npos);   // from the record
  EXPECT_NE(page.find("Synthetic CPU (2 cores)"), std::string::npos);             // environment
  EXPECT_NE(page.find("seed 001: Java MappedByteBuffer"), std::string::npos);     // published figure
  EXPECT_NE(page.find("Decision table"), std::string::npos);
}

// The page in a real browser: every chart drew, nothing logged, markup shown as text.
TEST(HtmlInChromium, ChartsDrawWithoutErrorsAndMarkupStaysText) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh test installs it)";
  std::filesystem::path dir = std::filesystem::path(IOLAB_BINARY_DIR) / "report-test";
  std::filesystem::create_directories(dir);
  harness::Results rs = testing::realistic();
  harness::write_json(rs, dir / "synthetic-results.json");
  std::filesystem::path page = dir / "report.html";
  write_html_report({rs}, page);

  auto run = testing::run_chromium(page, "--dump-dom");
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string& dom = run.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("id=\"iolab-status\"[^>]*")));
  std::string status = m.str();
  std::smatch charts, rendered, errors;
  ASSERT_TRUE(std::regex_search(status, charts, std::regex("data-charts=\"(\\d+)\"")));
  ASSERT_TRUE(std::regex_search(status, rendered, std::regex("data-rendered=\"(\\d+)\"")));
  ASSERT_TRUE(std::regex_search(status, errors, std::regex("data-errors=\"(\\d+)\"")));
  std::size_t n = std::stoul(charts[1]);
  EXPECT_GE(n, 6u);
  EXPECT_EQ(rendered[1], charts[1]) << status;
  EXPECT_EQ(errors[1], "0") << dom.substr(dom.find("iolab-errors"), 2000);
  // Chromium's log of console messages (--enable-logging=stderr): none expected.
  EXPECT_EQ(run.err.find(":CONSOLE("), std::string::npos) << run.err;

  // Each chart holds an SVG with marks drawn, and every suite has one.
  std::set<std::string> suites_drawn;
  for (std::size_t i = 0; i < n; ++i) {
    std::string id = "id=\"chart-" + std::to_string(i) + "\"";
    std::size_t at = dom.find(id);
    ASSERT_NE(at, std::string::npos) << id;
    std::size_t end = dom.find("class=\"explain\"", at);
    std::string chart = dom.substr(at, end - at);
    EXPECT_NE(chart.find("data-drawn=\"true\""), std::string::npos) << id;
    EXPECT_NE(chart.find("<svg"), std::string::npos) << id;
    EXPECT_GT(count(chart, "role-mark"), 0u) << id;
    EXPECT_GT(count(chart, "<path"), 3u) << id;
    std::smatch s;
    std::string head = dom.substr(dom.rfind("<div", at), 300);
    if (std::regex_search(head, s, std::regex("data-suite=\"([^\"]*)\""))) suites_drawn.insert(s[1]);
  }
  EXPECT_EQ(suites_drawn, (std::set<std::string>{"seq-read", "packet-sweep", "&lt;script&gt;alert(1)&lt;/script&gt;"}));
  // The job name is text, not an element.
  EXPECT_EQ(dom.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_NE(dom.find("Suite: &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);

  std::filesystem::path shot = dir / "report-screenshot.png";
  std::filesystem::remove(shot);
  auto snap = testing::run_chromium(page, "--screenshot=" + shot.string(), "1200,1600");
  ASSERT_EQ(snap.status, 0) << snap.err;
  ASSERT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 20000u);
  std::ifstream png(shot, std::ios::binary);
  char sig[8] = {};
  png.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");
  std::printf("report and screenshot: %s, %s\n", page.c_str(), shot.c_str());
}

}  // namespace
}  // namespace iolab::report
