#include <gtest/gtest.h>

#include "iolab/report/compare.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;

harness::Results run_of(std::vector<harness::Result> rs) {
  harness::Results out;
  out.environment = testing::environment();
  out.results = std::move(rs);
  return out;
}

TEST(Compare, RatiosWithPropagatedUncertainty) {
  auto a = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1000, 0.0, 5})});
  // Same work, 1.5x the throughput; B's times spread +-10% (evenly: cv ~ 7.9%).
  auto b = run_of({make({"s", "e", "pread", "read", 4096, 8u << 20, 1500, 0.10, 5})});
  Comparison c = compare(a, b);
  ASSERT_EQ(c.matched.size(), 1u);
  const Matched& m = c.matched[0];
  EXPECT_NEAR(m.ratio, 1.5, 1e-9);
  harness::Summary sb = b.results[0].seconds();
  EXPECT_NEAR(m.stddev, 1.5 * sb.cv, 1e-9);
  EXPECT_TRUE(m.noise_known);
  EXPECT_TRUE(m.significant);
  std::string text = format_text(c, "a.json", "b.json");
  EXPECT_NE(text.find("B is 1.50 ± 0.12x faster than A"), std::string::npos) << text;
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
  EXPECT_NE(text.find("B is 2.00 ± 0.0"), std::string::npos) << text;
  EXPECT_NE(text.find("x slower than A"), std::string::npos) << text;
  EXPECT_NE(text.find("(not significant: inside the noise)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 matched experiments: 0 faster in B, 1 slower in B, 1 inside the noise"), std::string::npos) << text;
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
  EXPECT_NE(md.find("| experiment | A | B | B vs A | significant |"), std::string::npos);
  EXPECT_NE(md.find("- only in A: s / e / stdio"), std::string::npos) << md;
  EXPECT_NE(md.find("skipped in B: no mmap here"), std::string::npos) << md;
}

TEST(Compare, KeyIncludesEveryParameter) {
  auto x = make({"s", "e", "pread", "read", 4096, 8u << 20, 1000});
  auto y = x;
  y.cache = harness::CacheState::Cold;
  EXPECT_NE(match_key(x), match_key(y));
  y = x;
  y.threads = 2;
  EXPECT_NE(match_key(x), match_key(y));
  y = x;
  y.samples_s[0] *= 2;  // figures are not part of the key
  EXPECT_EQ(match_key(x), match_key(y));
}

}  // namespace
}  // namespace iolab::report
