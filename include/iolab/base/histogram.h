// Per-operation latency, log-bucketed like HdrHistogram: values below 2*kSub
// nanoseconds get one bucket each; above that, every power of two is split
// into kSub linear sub-buckets, so any percentile is within 1/kSub (~3%) of
// the true value. Recording is a count-leading-zeros, a shift and an
// increment: cheap enough for a 4 KiB warm pread loop (docs/performance.md).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace iolab {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 5;
  static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;  // 32 sub-buckets per power of two
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSub;

  void record(std::uint64_t ns) noexcept {
    ++counts_[index(ns)];
    ++count_;
    if (ns > max_) max_ = ns;
    if (ns < min_) min_ = ns;
  }
  void merge(const LatencyHistogram& o) noexcept;
  void clear() noexcept { *this = LatencyHistogram{}; }

  std::uint64_t count() const noexcept { return count_; }
  const std::array<std::uint64_t, kBuckets>& buckets() const noexcept { return counts_; }
  // Replaces the contents (a histogram reduced across processes).
  void assign(const std::array<std::uint64_t, kBuckets>& buckets, std::uint64_t count, std::uint64_t min,
              std::uint64_t max) noexcept {
    counts_ = buckets;
    count_ = count;
    min_ = count ? min : UINT64_MAX;
    max_ = max;
  }
  std::uint64_t max() const noexcept { return max_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  // The value at quantile q in [0, 1]: the midpoint of the bucket holding the
  // ceil(q * count)-th smallest sample, clamped to [min, max]. 0 when empty.
  double percentile(double q) const noexcept;

  static std::size_t index(std::uint64_t v) noexcept {
    if (v < 2 * kSub) return static_cast<std::size_t>(v);
    unsigned top = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= kSubBits + 1
    unsigned shift = top - kSubBits;
    return static_cast<std::size_t>((shift + 1) * kSub + ((v >> shift) - kSub));
  }
  // Smallest value that falls in bucket i, and the width of that bucket.
  static std::uint64_t bucket_low(std::size_t i) noexcept;
  static std::uint64_t bucket_width(std::size_t i) noexcept;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0, max_ = 0, min_ = UINT64_MAX;
};

}  // namespace iolab
