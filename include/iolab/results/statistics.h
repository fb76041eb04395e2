// Summaries of repeated measurements, hyperfine-style.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iolab::results {

struct Summary {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  double cv = 0;   // stddev / mean (0 when mean is 0)
  double mad = 0;  // median absolute deviation (unscaled)
  // Indices of samples whose modified z-score (0.6745 * |x - median| / MAD) exceeds 3.5
  // (Iglewicz & Hoaglin; hyperfine uses the same rule).
  std::vector<std::size_t> outliers;
};

// Throws std::invalid_argument for an empty sample.
Summary summarize(std::span<const double> samples);

// Median of a sample (copied and partially sorted). Empty -> 0.
double median(std::span<const double> samples);

// The spread of single passes (each timed by its own pair of clock reads).
// A repetition of many passes is their sum, so the repetitions' spread
// shrinks with the passes per repetition while a pass's does not: rows with
// different passes per repetition are compared on this. p5 and p95 are
// linear-interpolation quantiles (with few passes, near min and max).
struct PassSpread {
  std::uint64_t n = 0;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p5 = 0, p95 = 0;
};
// Throws std::invalid_argument for an empty sample.
PassSpread pass_spread(std::span<const double> pass_seconds);
// The q-quantile (0..1) of a sorted sample, by linear interpolation; empty -> 0.
double quantile_sorted(std::span<const double> sorted, double q);

// User and system CPU seconds of one repetition.
struct CpuTime {
  double user_s = 0, sys_s = 0;
};
// The CPU time of the median repetition by total (the mean of the middle two
// for an even count), so that user + sys is the median total. Medians of user
// and of sys taken apart need not add up to it: the kernel splits a process's
// time between the two by sampling ticks, and the split wanders from
// repetition to repetition. Empty -> zeros.
CpuTime median_cpu(std::span<const CpuTime> reps);

}  // namespace iolab::results
