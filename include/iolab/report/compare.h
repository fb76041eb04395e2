// Two runs side by side (machine vs machine, before vs after): experiments
// matched by what they measured, the ratio of their median rates with a
// bootstrap interval, differences inside the noise marked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/harness/result.h"

namespace iolab::report {

// What identifies an experiment across runs: suite, experiment, method, op,
// pattern, block_size, file_size, buffer, cache, sync, threads, queue depth.
std::string match_key(const harness::Result& r);

// The ratio of two samples' medians, median(b) / median(a), with a 95%
// percentile-bootstrap interval: both samples resampled with replacement,
// the ratio of the resamples' medians taken, its 2.5th and 97.5th
// percentiles reported. The generator is seeded with `seed`: the same
// samples always give the same interval.
struct RatioInterval {
  double ratio = 1, lo = 1, hi = 1;
};
RatioInterval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, std::uint64_t seed);

struct Matched {
  const harness::Result* a = nullptr;
  const harness::Result* b = nullptr;
  // How many times faster B did the same work than A (< 1: slower): B's median
  // rate over A's, where a rate is bytes (or operations) per second of each
  // repetition, so runs with different passes per repetition compare fairly.
  double ratio = 1;
  double lo = 1, hi = 1;     // 95% bootstrap interval of the ratio
  double rate_a = 0, rate_b = 0;  // the medians (MiB/s, or ops/s when the records count operations)
  bool bytes = true;         // rates in MiB/s (else ops/s)
  bool noise_known = false;  // both have >= 2 repetitions
  bool significant = false;  // the interval excludes 1
  // Why a figure deserves less trust ("too_short", ...), per side.
  std::vector<std::string> warnings_a, warnings_b;
  std::string skipped;       // why no ratio (skipped on one side, no usable figures, ...)
};

struct Comparison {
  std::vector<Matched> matched;
  std::vector<const harness::Result*> only_a, only_b;
};

Comparison compare(const harness::Results& a, const harness::Results& b);

// "B is 1.42x faster than A (95% interval 1.38x..1.47x)" lines, then the
// unmatched experiments. Text from the files is shown with control
// characters escaped (it cannot drive the terminal).
std::string format_text(const Comparison& c, std::string_view name_a, std::string_view name_b);
std::string format_markdown(const Comparison& c, std::string_view name_a, std::string_view name_b);

}  // namespace iolab::report
