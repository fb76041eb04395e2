#include "iolab/base/histogram.h"

#include <algorithm>
#include <cmath>

namespace iolab {

std::uint64_t LatencyHistogram::bucket_low(std::size_t i) noexcept {
  if (i < 2 * kSub) return i;
  std::uint64_t shift = i / kSub - 1;
  return (kSub + i % kSub) << shift;
}

std::uint64_t LatencyHistogram::bucket_width(std::size_t i) noexcept {
  if (i < 2 * kSub) return 1;
  return std::uint64_t{1} << (i / kSub - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  max_ = std::max(max_, o.max_);
  min_ = std::min(min_, o.min_);
}

double LatencyHistogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      // Width-1 buckets hold exact values; wider ones report their midpoint.
      double w = static_cast<double>(bucket_width(i));
      double v = static_cast<double>(bucket_low(i)) + (w > 1 ? (w - 1) / 2 : 0);
      return std::clamp(v, static_cast<double>(min()), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}


}  // namespace iolab
