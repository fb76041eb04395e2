#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "iolab/results/statistics.h"

namespace iolab::results {
namespace {

TEST(Statistics, MedianOddAndEven) {
  std::vector<double> odd{5, 1, 3};
  std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(odd), 3);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{}), 0);
}

// The two middle samples' sum overflows; their median does not (issue 29 item 15).
TEST(Statistics, MedianOfHugeSamplesIsFinite) {
  std::vector<double> v{1e308, 1e308};
  EXPECT_EQ(median(v), 1e308);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{1.7e308, 1e308}), 1.35e308);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{1.7e308, 1.5e308, 1, 2}), 7.5e307);
}

TEST(Statistics, SummaryOfAKnownSample) {
  std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  Summary s = summarize(x);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);  // sample standard deviation
  EXPECT_NEAR(s.cv, std::sqrt(32.0 / 7.0) / 5, 1e-12);
  // |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> median 0.5
  EXPECT_DOUBLE_EQ(s.mad, 0.5);
}

TEST(Statistics, MadFlagsOnlyTheOutlier) {
  std::vector<double> x{1.00, 1.02, 0.98, 1.01, 0.99, 3.0};
  Summary s = summarize(x);
  ASSERT_EQ(s.outliers.size(), 1u);
  EXPECT_EQ(s.outliers[0], 5u);
}

// Of three, the median deviates by 0 and the MAD is the smaller other
// deviation: 1.00, 1.01, 1.10 would flag 1.10 (z 6.1). Too few to judge.
TEST(Statistics, ThreeSamplesAreTooFewForTheOutlierRule) {
  std::vector<double> x{1.00, 1.01, 1.10};
  EXPECT_TRUE(summarize(x).outliers.empty());
}

TEST(Statistics, NoOutliersInATightSample) {
  std::vector<double> x{1.00, 1.02, 0.98, 1.01, 0.99};
  EXPECT_TRUE(summarize(x).outliers.empty());
}

TEST(Statistics, IdenticalSamplesHaveNoSpreadAndNoOutliers) {
  std::vector<double> x{2, 2, 2};
  Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_TRUE(s.outliers.empty());
}

// The kernel's user/system split moves between repetitions of equal work:
// the medians of each apart (0.3 + 0.3) are no repetition's CPU time; the
// median repetition's by total (0.2 + 0.35) is.
TEST(Statistics, MedianCpuIsTheMedianRepetitionsTotalNotASumOfMedians) {
  std::vector<CpuTime> reps{{0.1, 0.4}, {0.3, 0.3}, {0.3, 0.1}, {0.4, 0.3}, {0.2, 0.35}};
  CpuTime m = median_cpu(reps);
  EXPECT_DOUBLE_EQ(m.user_s, 0.2);
  EXPECT_DOUBLE_EQ(m.sys_s, 0.35);
  std::vector<CpuTime> even{{0.1, 0.1}, {0.3, 0.1}, {0.1, 0.2}, {0.5, 0.5}};
  CpuTime e = median_cpu(even);
  EXPECT_DOUBLE_EQ(e.user_s, 0.2);  // the middle two, {0.1, 0.2} and {0.3, 0.1}
  EXPECT_DOUBLE_EQ(e.sys_s, 0.15);
  CpuTime none = median_cpu(std::vector<CpuTime>{});
  EXPECT_DOUBLE_EQ(none.user_s + none.sys_s, 0);
}

TEST(Statistics, EmptySampleThrows) { EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument); }

}  // namespace
}  // namespace iolab::results
