// Two runs side by side (machine vs machine, before vs after): experiments
// matched by what they measured, ratios with their uncertainty, hyperfine-style.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "iolab/harness/result.h"

namespace iolab::report {

// What identifies an experiment across runs: suite, experiment, method, op,
// pattern, block_size, file_size, buffer, cache, sync, threads.
std::string match_key(const harness::Result& r);

struct Matched {
  const harness::Result* a = nullptr;
  const harness::Result* b = nullptr;
  // How many times faster B did the same work than A (< 1: slower), from mean
  // times per unit of work; stddev propagated from both relative stddevs.
  double ratio = 1, stddev = 0;
  bool noise_known = false;  // both have >= 2 repetitions
  bool significant = false;  // beyond the noise: ranges do not overlap, or |ratio - 1| > 2 stddev
  std::string skipped;       // why no ratio: skipped on one side (the reason)
};

struct Comparison {
  std::vector<Matched> matched;
  std::vector<const harness::Result*> only_a, only_b;
};

Comparison compare(const harness::Results& a, const harness::Results& b);

// "B is 1.42 ± 0.06x faster than A" lines, then the unmatched experiments.
std::string format_text(const Comparison& c, std::string_view name_a, std::string_view name_b);
std::string format_markdown(const Comparison& c, std::string_view name_a, std::string_view name_b);

}  // namespace iolab::report
