#include <gtest/gtest.h>

#include <fmt/format.h>

#include "iolab/harness/comparison.h"
#include "iolab/report/compare.h"
#include "internal/report/common.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;

results::Results run_of(std::vector<results::Result> rs) {
  results::Results out;
  out.environment = testing::environment();
  out.results = std::move(rs);
  return out;
}

// Issue 23: 3 repetitions a side give no 95% interval, so nothing is called
// significant, however far apart; 10 a side give one with its real coverage.
TEST(Compare, ThreeRepetitionsAreTooFewTenAreEnough) {
  auto a3 = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.01, 3})});
  auto b3 = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 2000, 0.01, 3})});
  Comparison c = compare(a3, b3);
  ASSERT_EQ(c.matched.size(), 1u);
  EXPECT_FALSE(c.matched[0].significant);
  EXPECT_FALSE(c.matched[0].enough);
  std::string text = format_text(c, "a", "b");
  EXPECT_NE(text.find("too few repetitions (3 vs 3; 5 a side are needed), not significant"), std::string::npos) << text;
  auto a10 = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.01, 10})});
  auto b10 = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 2000, 0.01, 10})});
  Comparison d = compare(a10, b10);
  ASSERT_TRUE(d.matched[0].interval);
  EXPECT_TRUE(d.matched[0].significant);
  EXPECT_GE(d.matched[0].coverage, 0.95);
  EXPECT_LT(d.matched[0].coverage, 0.97);
  text = format_text(d, "a", "b");
  EXPECT_NE(text.find(fmt::format("{:.1f}% interval 1.9", 100 * d.matched[0].coverage)), std::string::npos) << text;
}

// Issue 29 item 11: a record whose data did not verify is not compared, and counted.
TEST(Compare, UnverifiedRecordsAreLeftOutAndCounted) {
  auto a = run_of({make({"s", "e", "mmap", "read", 4096, 8u << 20, 3000})});
  auto b = run_of({make({"s", "e", "mmap", "read", 4096, 8u << 20, 1000})});
  b.results[0].verified = false;
  Comparison c = compare(a, b);
  EXPECT_EQ(c.unverified, 1u);
  EXPECT_EQ(c.matched[0].skipped, "data not verified in B");
  EXPECT_NE(format_text(c, "a", "b").find("1 not compared (1 unverified)"), std::string::npos);
}

TEST(Compare, DriftAcrossHostsOrHoursIsWarned) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000})});
  auto b = a;
  b.environment.hostname = "elsewhere";
  a.environment.created = "2026-12-02T05:00:00Z";
  b.environment.created = "2026-12-02T07:30:00Z";
  Comparison c = compare(a, b);
  ASSERT_EQ(c.drift.size(), 2u);
  std::string text = format_text(c, "a", "b");
  EXPECT_NE(text.find("warning: the runs come from different hosts"), std::string::npos) << text;
  EXPECT_NE(text.find("2.5 hours apart"), std::string::npos) << text;
  EXPECT_TRUE(compare(a, a).drift.empty());
}

TEST(Compare, RatioOfMedianRatesWithAnExactInterval) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.0, 5})});
  // Same work, 1.5x the median rate; B's times spread +-10%.
  auto b = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1500, 0.10, 5})});
  Comparison c = compare(a, b);
  ASSERT_EQ(c.matched.size(), 1u);
  const Matched& m = c.matched[0];
  EXPECT_NEAR(m.ratio, 1.5, 1e-9);
  EXPECT_NEAR(m.rate_a, 1000, 1e-6);
  EXPECT_NEAR(m.rate_b, 1500, 1e-6);
  EXPECT_LT(m.lo, 1.5);
  EXPECT_GT(m.hi, 1.5);
  EXPECT_GT(m.lo, 1.3);  // B's slowest repetition is 1.36x A
  EXPECT_TRUE(m.noise_known);
  EXPECT_TRUE(m.significant);
  std::string text = format_text(c, "a.json", "b.json");
  EXPECT_NE(text.find("B is 1.50x faster than A (1,500 MiB/s vs 1,000 MiB/s); Hodges-Lehmann estimate 1.5"), std::string::npos) << text;
  EXPECT_NE(text.find(", its 96.8% interval 1."), std::string::npos) << text;
  // Issue 40 item 8: the interval is around the Hodges-Lehmann estimate, not the ratio of medians: both are named.
  EXPECT_NEAR(m.hl_estimate, harness::ratio_interval(rates(*m.a), rates(*m.b)).estimate, 1e-12);
  EXPECT_NE(text.find("the ratio of medians"), std::string::npos) << text;
  // The same statistic in every column: medians.
  std::string md = format_markdown(c, "a.json", "b.json");
  EXPECT_NE(md.find("| 1,000 MiB/s | 1,500 MiB/s | 1.50x faster than A | 1."), std::string::npos) << md;
}

// A mean dragged by one slow repetition must not move the ratio: medians.
TEST(Compare, OneSlowRepetitionDoesNotMoveTheRatio) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.01, 5})});
  auto b = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.01, 5})});
  b.results[0].samples_s.back() *= 10;  // one repetition ten times slower
  Comparison c = compare(a, b);
  EXPECT_NEAR(c.matched[0].ratio, 1.0, 1e-9);
  EXPECT_FALSE(c.matched[0].significant);
}

// Passes per repetition differ between runs: rates per byte, never raw times.
TEST(Compare, DifferentPassesPerRepetitionCompareByRate) {
  testing::Spec s{"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.01, 5};
  s.passes = 1;
  auto a = run_of({make(s)});
  s.passes = 8;
  s.mib_s = 1200;
  auto b = run_of({make(s)});
  ASSERT_GT(b.results[0].seconds().median, 6 * a.results[0].seconds().median);  // raw times would say B is slower
  Comparison c = compare(a, b);
  EXPECT_NEAR(c.matched[0].ratio, 1.2, 1e-9);
  EXPECT_TRUE(c.matched[0].significant);
}

TEST(Compare, SlowerAndInsideTheNoise) {
  auto a = run_of({make({"s", "e", "mmap", "read", 1024, 8u << 20, 2000, 0.02}),
                   make({"s", "e", "pread", "read", 1024, 8u << 20, 1000, 0.05})});
  auto b = run_of({make({"s", "e", "mmap", "read", 1024, 8u << 20, 1000, 0.02}),
                   make({"s", "e", "pread", "read", 1024, 8u << 20, 1010, 0.05})});
  Comparison c = compare(a, b);
  ASSERT_EQ(c.matched.size(), 2u);
  EXPECT_NEAR(c.matched[0].ratio, 0.5, 1e-9);
  EXPECT_TRUE(c.matched[0].significant);
  EXPECT_FALSE(c.matched[1].significant);
  std::string text = format_text(c, "a", "b");
  EXPECT_NE(text.find("B is 2.00x slower than A (1,000 MiB/s vs 2,000 MiB/s); Hodges-Lehmann estimate 2"), std::string::npos) << text;
  EXPECT_NE(text.find("96.8% interval 1.9"), std::string::npos) << text;
  EXPECT_NE(text.find("(not significant: inside the noise)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 matched experiments: 0 faster in B, 1 slower in B, 1 inside the noise, 0 not compared"),
            std::string::npos)
      << text;
}

TEST(Compare, WarningsAndUnusableFiguresAreShown) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}), make({"s", "e", "mmap", "read", 4096, 8u << 20, 900})});
  auto b = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}), make({"s", "e", "mmap", "read", 4096, 8u << 20, 900})});
  b.results[0].warn(results::WarningKind::Outliers, "outliers");
  b.results[1].samples_s.assign(5, 0.0);  // a file whose times are all 0
  Comparison c = compare(a, b);
  ASSERT_EQ(c.matched.size(), 2u);
  EXPECT_EQ(c.matched[0].warnings_b, std::vector<std::string>{"outliers"});
  EXPECT_EQ(c.matched[1].skipped.rfind("no usable figures in B", 0), 0u) << c.matched[1].skipped;
  std::string text = format_text(c, "a", "b");
  EXPECT_NE(text.find("figures with warnings: B outliers"), std::string::npos) << text;
}

TEST(Compare, UnmatchedAndSkippedAreListed) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}), make({"s", "e", "stdio", "read", 4096, 8u << 20, 900}),
                   make({"s", "e", "mmap", "read", 4096, 8u << 20, 900})});
  auto skipped = make({"s", "e", "mmap", "read", 4096, 8u << 20, 900});
  skipped.skipped = "no mmap here";
  auto b = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000}), make({"s", "e", "pread", "read", 8192, 8u << 20, 1000}),
                   skipped});
  Comparison c = compare(a, b);
  ASSERT_EQ(c.matched.size(), 2u);
  ASSERT_EQ(c.only_a.size(), 1u);
  EXPECT_EQ(c.only_a[0]->method, "stdio");
  ASSERT_EQ(c.only_b.size(), 1u);
  EXPECT_EQ(c.only_b[0]->block_size, 8192u);
  EXPECT_EQ(c.matched[1].skipped, "skipped in B: no mmap here");
  std::string text = format_text(c, "a", "b");
  EXPECT_NE(text.find("Only in A (a):\n  s / e / stdio: read seq bs=4k"), std::string::npos) << text;
  EXPECT_NE(text.find("Only in B (b):\n  s / e / pread: read seq bs=8k"), std::string::npos) << text;
  std::string md = format_markdown(c, "a", "b");
  EXPECT_NE(md.find("| experiment | A (median) | B (median) | B vs A (ratio of medians) | Hodges-Lehmann estimate | "
                    "interval (coverage) | significant | warnings |"),
            std::string::npos);
  EXPECT_NE(md.find("- only in A: s / e / stdio"), std::string::npos) << md;
  EXPECT_NE(md.find("skipped in B: no mmap here"), std::string::npos) << md;
}

// Strings from the files cannot drive the terminal or forge a line.
TEST(Compare, TextFromTheFilesIsShownWithControlCharactersEscaped) {
  auto r = make({"s\x1b]0;title\x07", "e\nforged", "m\x1b[2J", "read", 4096, 8u << 20, 1000});
  auto a = run_of({r}), b = run_of({r});
  Comparison c = compare(a, b);
  for (const std::string& out : {format_text(c, "a\x1b[1m", "b"), format_markdown(c, "a", "b")}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
    EXPECT_EQ(out.find("\nforged"), std::string::npos) << out;
    EXPECT_NE(out.find("s\\x1b]0;title\\x07 / e\\x0aforged / m\\x1b[2J"), std::string::npos) << out;
  }
}

TEST(Compare, KeyIncludesEveryParameter) {
  auto x = make({"s", "e", "pread", "read", 4096, 8u << 20, 1000});
  auto y = x;
  y.cache = results::CacheState::Cold;
  EXPECT_NE(match_key(x), match_key(y));
  y = x;
  y.threads = 2;
  EXPECT_NE(match_key(x), match_key(y));
  y = x;
  y.queue_depth = 32;
  EXPECT_NE(match_key(x), match_key(y));
  y = x;
  y.samples_s[0] *= 2;  // figures are not part of the key
  EXPECT_EQ(match_key(x), match_key(y));
}

}  // namespace
}  // namespace iolab::report
