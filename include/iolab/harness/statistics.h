// Summaries of repeated measurements, hyperfine-style.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace iolab::harness {

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

}  // namespace iolab::harness
