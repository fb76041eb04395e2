// Internal to crosscheck*.cpp: what the driver, the text and the JSON share.
#pragma once

#include <cmath>
#include <vector>

#include "iolab/fio/crosscheck.h"
#include "iolab/results/statistics.h"

namespace iolab::fio::crosscheck_detail {

// Blocks from this size up are shown as bytes per second, smaller ones as I/Os.
inline constexpr std::uint64_t kShowBytesFrom = 64 * 1024;

// The median of `value` over the rounds where it is a positive finite figure.
template <typename F>
double median_of(const std::vector<CrosscheckRound>& rounds, F value) {
  std::vector<double> v;
  for (const auto& r : rounds) {
    double x = value(r);
    if (x > 0 && std::isfinite(x)) v.push_back(x);
  }
  return results::median(v);
}

}  // namespace iolab::fio::crosscheck_detail
