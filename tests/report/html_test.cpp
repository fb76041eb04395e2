#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <type_traits>

#include "chromium.h"
#include "decision/synthetic_decision.h"
#include "iolab/report/html.h"
#include "internal/report/common.h"
#include "internal/report/explain.h"
#include "internal/report/families.h"
#include "internal/report/html_text.h"
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

// Issue 14 #13: a U+2028 in a name stopped every chart from rendering.
TEST(Escape, ScriptJsonEscapesLineAndParagraphSeparators) {
  nlohmann::json j = {{"m", "a\u2028b\u2029c"}};
  std::string s = script_json(j);
  EXPECT_EQ(s.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(s.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_NE(s.find("a\\u2028b\\u2029c"), std::string::npos) << s;
  EXPECT_EQ(nlohmann::json::parse(s)["m"], "a\u2028b\u2029c");
}

TEST(Escape, VisibleShowsControlCharactersSeparatorsAndBadUtf8) {
  EXPECT_EQ(visible("plain µs ±"), "plain µs ±");
  EXPECT_EQ(visible("a\x1b[31mb\nc\td\x7f"), "a\\x1b[31mb\\x0ac\\x09d\\x7f");
  EXPECT_EQ(visible("x\u2028y\u2029z\u202e"), "x\\u2028y\\u2029z\\u202e");
  EXPECT_EQ(visible("\xc2\x85"), "\\u0085");                 // C1 NEL
  EXPECT_EQ(visible(std::string("a\xff\xc0\x80" "b", 5)), "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b");  // invalid, overlong
  EXPECT_EQ(visible(std::string("\0", 1)), "\\x00");
  EXPECT_EQ(visible(visible("a\x1b" "b")), visible("a\x1b" "b"));   // idempotent
}

// One Markdown cell escaper for every Markdown table (results, compare, both
// decision tables): a '|' or a line break in outside text cannot end a cell or a row.
TEST(Escape, MarkdownCellEscapesPipesAndShowsLineBreaks) {
  EXPECT_EQ(markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(markdown_cell("row\nnext"), "row\\x0anext");
  EXPECT_EQ(markdown_cell("plain µs"), "plain µs");
}

TEST(Escape, AMarkdownTableEscapesEveryCellAndStatesEachColumnsAlignment) {
  using A = MarkdownTable::Align;
  MarkdownTable t({"name", "MiB/s", "note"}, {A::Left, A::Right});
  t.add({"a|b", "12.5", ""});
  t.add({"line\nbreak", "", "x"});
  EXPECT_EQ(t.render(),
            "| name | MiB/s | note |\n"
            "|---|---:|---|\n"
            "| a\\|b | 12.5 | |\n"
            "| line\\x0abreak | | x |\n");
}

// Html is built from literals and escaped text only: a runtime string cannot become markup.
static_assert(!std::is_constructible_v<Html, std::string>);
static_assert(!std::is_constructible_v<Html, std::string_view>);
static_assert(!std::is_convertible_v<std::string, Html>);

TEST(Escape, HtmlTextEscapesAndShowsControls) {
  Html h = Html("<b>") + text("<i>\x1b</i> & 'q'") + "</b>";
  EXPECT_EQ(h.str(), "<b>&lt;i&gt;\\x1b&lt;/i&gt; &amp; &#39;q&#39;</b>");
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

// A repetition is `passes` passes: the table gives one pass's and one
// operation's time beside it (issue 40 item 4), from the record's
// seconds_per_pass and ns_per_op.
TEST(Html, FiguresTableGivesTimePerPassAndPerOperation) {
  results::Results run;
  run.environment = testing::environment();
  Spec spec;
  spec.passes = 10;  // 8 MiB at 1000 MiB/s: 8 ms a pass of 2048 calls, 80 ms a repetition
  run.results.push_back(make(spec));
  ASSERT_DOUBLE_EQ(run.results[0].seconds_per_pass(), 0.008);
  std::string page = render_html_report({run});
  EXPECT_NE(page.find("<th>time per pass / per op</th>"), std::string::npos);
  EXPECT_NE(page.find("8.0 ms per pass; 3.9 µs per op"), std::string::npos);
  EXPECT_EQ(page.find("80 ms per pass"), std::string::npos);
}

TEST(Html, CarriesWarningsSkipsEnvironmentReferencesAndTheDecisionTable) {
  std::string page = render_html_report({testing::realistic()});
  EXPECT_NE(page.find("io_uring is disabled"), std::string::npos);                 // skipped, with reason
  EXPECT_NE(page.find("31% of the file was resident"), std::string::npos);        // not cold
  EXPECT_NE(page.find("noisy: cv 32% over 5 repetitions"), std::string::npos);   // from the record
  EXPECT_NE(page.find("Synthetic CPU (2 cores)"), std::string::npos);             // environment
  EXPECT_NE(page.find("seed 001: Java MappedByteBuffer"), std::string::npos);     // published figure
  // Nothing is ranked from records that were never measured side by side: one line says how to get a decision.
  EXPECT_NE(page.find("This run holds no decision"), std::string::npos);
  EXPECT_NE(page.find("iolab recommend"), std::string::npos);
}

// The records of `iolab recommend --save`: a run with a decision.
results::Results decision_run() {
  using decision::Column;
  using decision::Row;
  const std::vector<std::string> mapped{"maps_file", "positional"}, positional{"positional"};
  results::Results run = testing::realistic();
  run.results.clear();
  std::uint64_t seed = 1;
  for (std::uint64_t size : {8u, 512u, 32768u}) {
    auto rs = iolab::testing::synthetic_condition({Row{results::Op::Read, "none", Column::Cold}, size},
                                                  {{"mapped reader", mapped, size < 4096 ? 3000.0 : 800.0},
                                                   {"pread", positional, 1000}, {"io_uring O_DIRECT QD32", positional, 900}},
                                                  0.02, seed++);
    run.results.insert(run.results.end(), rs.begin(), rs.end());
  }
  return run;
}

// A run with a decision: its section draws the map (each pick coloured by
// method, the ratio over the best ruled out and its interval on hover) and
// the seeds' rules beside its picks, size by size, matched by traits.
TEST(Html, ADecisionIsDrawnAsAMapWithTheSeedsRules) {
  std::string page = render_html_report({decision_run()});
  std::size_t section = page.find("<section id=\"decision\">");
  ASSERT_NE(section, std::string::npos);
  std::string decision = page.substr(section, page.find("</section>", section) - section);
  EXPECT_NE(decision.find("<table class=\"decision map\">"), std::string::npos) << decision;
  // The measured sizes, and between them the grid sizes the cost model predicts (decision_prediction_test.cpp).
  EXPECT_NE(decision.find("<th>8 B</th><th>32 B</th><th>128 B</th><th>512 B</th><th>2 KiB</th><th>8 KiB</th><th>32 KiB</th>"),
            std::string::npos) << decision;
  EXPECT_NE(decision.find(">mapped reader</td>"), std::string::npos) << decision;
  EXPECT_NE(decision.find("title=\"mapped reader at 8 B; over pread 2.9"), std::string::npos) << decision;
  EXPECT_NE(decision.find("interval, within this run"), std::string::npos) << decision;
  EXPECT_NE(decision.find("style=\"background:#"), std::string::npos) << decision;
  EXPECT_NE(decision.find("Kim &amp; Nelson"), std::string::npos) << decision;
  EXPECT_NE(decision.find("The seeds' rules beside this run's picks, size by size"), std::string::npos);
  // 004: reads under 4 KiB, a mapped method picked at 8 B and 512 B: holds; over 4 KiB, pread at 32 KiB: holds.
  std::size_t rule = decision.find("reads under 4 KiB: mmap wins clearly");
  ASSERT_NE(rule, std::string::npos) << decision;
  std::string row = decision.substr(rule, decision.find("</tr>", rule) - rule);
  EXPECT_NE(row.find("at 8 B: mapped reader"), std::string::npos) << row;
  EXPECT_NE(row.find("<td class=\"clear\">yes</td>"), std::string::npos) << row;
  EXPECT_NE(decision.find("not in this table"), std::string::npos);
  // A run without a decision has no seed rows.
  std::string plain = render_html_report({testing::realistic()});
  EXPECT_EQ(plain.find("The seeds' rules"), std::string::npos);
}

// What Chromium made of a report page: the charts the page says it has, how
// many drew, the errors it caught, and each chart's DOM.
struct Drawn {
  std::size_t charts = 0, rendered = 0, errors = 0;
  std::string dom, log;
  std::vector<std::string> chart_dom;  // per chart, from its div to its explanation
};

Drawn draw_in_chromium(const std::filesystem::path& page) {
  Drawn d;
  auto run = testing::run_chromium(page, "--dump-dom");
  EXPECT_EQ(run.status, 0) << run.err;
  d.dom = run.out;
  d.log = run.err;
  std::smatch m;
  if (!std::regex_search(d.dom, m, std::regex("id=\"iolab-status\"[^>]*"))) {
    ADD_FAILURE() << "no status element in the page";
    return d;
  }
  std::string status = m.str();
  auto attribute = [&](const char* name) {
    std::smatch v;
    return std::regex_search(status, v, std::regex(std::string(name) + "=\"(\\d+)\"")) ? std::stoul(v[1]) : 0ul;
  };
  d.charts = attribute("data-charts");
  d.rendered = attribute("data-rendered");
  d.errors = attribute("data-errors");
  for (std::size_t i = 0; i < d.charts; ++i) {
    std::size_t at = d.dom.find("id=\"chart-" + std::to_string(i) + "\"");
    if (at == std::string::npos) {
      ADD_FAILURE() << "chart-" << i << " missing";
      continue;
    }
    d.chart_dom.push_back(d.dom.substr(at, d.dom.find("class=\"explain\"", at) - at));
  }
  return d;
}

// Every chart holds an SVG with marks drawn; nothing was logged.
void expect_all_drawn(const Drawn& d) {
  EXPECT_EQ(d.rendered, d.charts);
  EXPECT_EQ(d.errors, 0u) << d.dom.substr(d.dom.find("iolab-errors"), 2000);
  // Chromium's log of console messages (--enable-logging=stderr): none expected.
  EXPECT_EQ(d.log.find(":CONSOLE("), std::string::npos) << d.log;
  for (std::size_t i = 0; i < d.chart_dom.size(); ++i) {
    const std::string& chart = d.chart_dom[i];
    EXPECT_NE(chart.find("data-drawn=\"true\""), std::string::npos) << "chart-" << i;
    EXPECT_NE(chart.find("<svg"), std::string::npos) << "chart-" << i;
    EXPECT_GT(count(chart, "role-mark"), 0u) << "chart-" << i;
    EXPECT_GT(count(chart, "<path"), 3u) << "chart-" << i;
  }
}

std::filesystem::path test_dir() {
  std::filesystem::path dir = std::filesystem::path(IOLAB_BINARY_DIR) / "report-test";
  std::filesystem::create_directories(dir);
  return dir;
}

// The page in a real browser: every chart drew, nothing logged, markup shown as text.
TEST(HtmlInChromium, ChartsDrawWithoutErrorsAndMarkupStaysText) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh test installs it)";
  std::filesystem::path dir = test_dir();
  results::Results rs = testing::realistic();
  results::write_json(rs, dir / "synthetic-results.json");
  std::filesystem::path page = dir / "report.html";
  write_html_report({rs}, page);

  Drawn d = draw_in_chromium(page);
  EXPECT_GE(d.charts, 6u);
  expect_all_drawn(d);
  // Every suite has a chart.
  std::set<std::string> suites_drawn;
  for (std::size_t i = 0; i < d.charts; ++i) {
    std::size_t at = d.dom.find("id=\"chart-" + std::to_string(i) + "\"");
    std::smatch s;
    std::string head = d.dom.substr(d.dom.rfind("<div", at), 300);
    if (std::regex_search(head, s, std::regex("data-suite=\"([^\"]*)\""))) suites_drawn.insert(s[1]);
  }
  EXPECT_EQ(suites_drawn, (std::set<std::string>{"seq-read", "packet-sweep", "direct", "&lt;script&gt;alert(1)&lt;/script&gt;"}));
  // The job name is text, not an element.
  EXPECT_EQ(d.dom.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_NE(d.dom.find("Suite: &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);

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

// The decision's map in a real browser: a cell per condition, coloured,
// with its hover text, and nothing logged.
TEST(HtmlInChromium, TheDecisionMapDrawsWithItsHoverText) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh test installs it)";
  std::filesystem::path page = test_dir() / "decision-map.html";
  write_html_report({decision_run()}, page);
  Drawn d = draw_in_chromium(page);
  EXPECT_EQ(d.errors, 0u);
  EXPECT_EQ(d.log.find(":CONSOLE("), std::string::npos) << d.log;
  const std::size_t map = d.dom.find("class=\"decision map\"");
  ASSERT_NE(map, std::string::npos);
  const std::string table = d.dom.substr(map, d.dom.find("</table>", map) - map);
  EXPECT_EQ(count(table, "class=\"pick\""), 3u) << table;
  EXPECT_EQ(count(table, "class=\"predicted\""), 4u) << table;
  EXPECT_EQ(count(table, "title=\""), 7u) << table;
  EXPECT_NE(table.find("background:#"), std::string::npos) << "the browser kept the cells' colours";
}

// Issue 14 #13: a U+2028 (or U+2029, or a control character) in a method or
// experiment name made the chart library's expression parser throw
// ("Unexpected token ILLEGAL") and no chart drew. They still draw.
TEST(HtmlInChromium, ALineSeparatorInANameDoesNotStopTheCharts) {
  if (testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh test installs it)";
  results::Results rs;
  for (std::uint64_t bs : {1024u, 4096u, 65536u})
    for (const char* m : {"mm\u2028ap", "pr\u2029ead", "sys\x1b[31mcall"})
      rs.results.push_back(make({"s\u2028uite", "e\u2028xp", m, "read", bs, 4u << 20, 100.0 * static_cast<double>(bs >> 10)}));
  std::filesystem::path page = test_dir() / "u2028.html";
  write_html_report({rs}, page);
  Drawn d = draw_in_chromium(page);
  EXPECT_EQ(d.charts, 1u);
  expect_all_drawn(d);
  EXPECT_NE(d.dom.find("mm\\u2028ap"), std::string::npos);  // shown, visibly
}

}  // namespace
}  // namespace iolab::report
