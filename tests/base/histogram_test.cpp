#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "iolab/base/histogram.h"

namespace iolab {
namespace {

// The exact value at quantile q of a sorted sample (same rank rule as the histogram).
double exact(const std::vector<std::uint64_t>& sorted, double q) {
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::max<std::size_t>(rank, 1) - 1]);
}

TEST(Histogram, BucketsAreContiguousAndCoverTheirValues) {
  for (std::size_t i = 0; i + 1 < LatencyHistogram::kBuckets; ++i)
    ASSERT_EQ(LatencyHistogram::bucket_low(i) + LatencyHistogram::bucket_width(i), LatencyHistogram::bucket_low(i + 1)) << i;
  for (std::uint64_t v : {0ull, 1ull, 63ull, 64ull, 65ull, 127ull, 128ull, 1000ull, 123456789ull, 1ull << 40, ~0ull}) {
    std::size_t i = LatencyHistogram::index(v);
    ASSERT_LT(i, LatencyHistogram::kBuckets);
    EXPECT_GE(v, LatencyHistogram::bucket_low(i));
    EXPECT_LE(v - LatencyHistogram::bucket_low(i), LatencyHistogram::bucket_width(i) - 1);
  }
}

TEST(Histogram, PercentilesMatchASortedArrayWithinBucketPrecision) {
  std::mt19937_64 rng(7);
  // Log-normal-ish latencies: most near 500 ns, a tail to milliseconds.
  std::lognormal_distribution<double> dist(std::log(500.0), 0.8);
  std::vector<std::uint64_t> v;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    auto ns = static_cast<std::uint64_t>(dist(rng));
    v.push_back(ns);
    h.record(ns);
  }
  std::sort(v.begin(), v.end());
  EXPECT_EQ(h.count(), v.size());
  EXPECT_EQ(h.max(), v.back());
  EXPECT_EQ(h.min(), v.front());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    double want = exact(v, q);
    // Half a bucket either side: 1/32 of the value at most.
    EXPECT_NEAR(h.percentile(q), want, want / LatencyHistogram::kSub + 1) << "q=" << q;
  }
  EXPECT_LE(h.percentile(0.5), h.percentile(0.9));
  EXPECT_LE(h.percentile(0.9), h.percentile(0.99));
  EXPECT_LE(h.percentile(0.99), h.percentile(0.999));
  EXPECT_LE(h.percentile(0.999), static_cast<double>(h.max()));
}

TEST(Histogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (std::uint64_t i = 1; i <= 50; ++i) h.record(i);
  EXPECT_DOUBLE_EQ(h.percentile(0.5), 25);
  EXPECT_DOUBLE_EQ(h.percentile(1.0), 50);
}

TEST(Histogram, MergeAndEmpty) {
  LatencyHistogram a, b;
  EXPECT_EQ(a.percentile(0.5), 0);
  a.record(100);
  b.record(100000);
  a.merge(b);
  EXPECT_EQ(a.count(), 2u);
  EXPECT_EQ(a.max(), 100000u);
  EXPECT_EQ(a.min(), 100u);
}

}  // namespace
}  // namespace iolab
