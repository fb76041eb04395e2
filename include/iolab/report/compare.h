// Two runs side by side (machine vs machine, before vs after): experiments
// matched by what they measured, the ratio of their median rates with the
// exact distribution-free interval of harness::ratio_interval (its real
// coverage stated), differences inside the noise marked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report {

// What identifies an experiment across runs: suite, experiment, method, op,
// pattern, block_size, file_size, buffer, cache, sync, threads, queue depth.
std::string match_key(const results::Result& r);

// Repetitions a side below which no difference is called significant: the
// interval then exists (4 vs 4 is the least) but is as wide as the samples.
inline constexpr std::size_t kMinRepetitions = 5;

struct Matched {
  const results::Result* a = nullptr;
  const results::Result* b = nullptr;
  // How many times faster B did the same work than A (< 1: slower): B's median
  // rate over A's, where a rate is bytes (or operations) per second of each
  // repetition, so runs with different passes per repetition compare fairly.
  double ratio = 1;
  // The interval of the factor (harness::ratio_interval), when `interval`,
  // and the Hodges-Lehmann estimate it is built around (the median of every
  // ratio of a B rate to an A rate): not `ratio`, which it need not contain.
  double lo = 0, hi = 0, hl_estimate = 0;
  double coverage = 0;       // its real coverage (>= 0.95)
  bool interval = false;     // an interval exists (>= 4 repetitions a side)
  double rate_a = 0, rate_b = 0;  // the medians (MiB/s, or ops/s when the records count operations)
  bool bytes = true;         // rates in MiB/s (else ops/s)
  bool noise_known = false;  // both have >= 2 repetitions
  bool enough = false;       // both have >= kMinRepetitions repetitions
  bool significant = false;  // enough repetitions, and the interval excludes 1
  // Why a figure deserves less trust ("too_short", ...), per side.
  std::vector<std::string> warnings_a, warnings_b;
  std::string skipped;       // why no ratio (skipped on one side, no usable figures, ...)
};

struct Comparison {
  std::vector<Matched> matched;
  std::vector<const results::Result*> only_a, only_b;
  std::size_t unverified = 0;        // matched pairs not compared: data not verified on a side
  std::vector<std::string> drift;    // the runs differ in host, or were made more than an hour apart
};

Comparison compare(const results::Results& a, const results::Results& b);

// "B is 1.42x faster than A (95% interval 1.38x..1.47x)" lines, then the
// unmatched experiments. Text from the files is shown with control
// characters escaped (it cannot drive the terminal).
std::string format_text(const Comparison& c, std::string_view name_a, std::string_view name_b);
std::string format_markdown(const Comparison& c, std::string_view name_a, std::string_view name_b);

}  // namespace iolab::report
