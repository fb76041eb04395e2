#include "iolab/results/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "iolab/results/thresholds.h"

namespace iolab::results {

double median(std::span<const double> samples) {
  if (samples.empty()) return 0;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  if (n % 2) return v[n / 2];
  // Two samples of 1e308 s summed overflow: their median is not infinite (issue 29 item 15).
  double sum = v[n / 2 - 1] + v[n / 2];
  return std::isfinite(sum) ? sum / 2 : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

double quantile_sorted(std::span<const double> v, double q) {
  if (v.empty()) return 0;
  double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  std::size_t lo = static_cast<std::size_t>(std::floor(at));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

PassSpread pass_spread(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("pass_spread: no passes");
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  PassSpread p;
  p.n = v.size();
  p.min = v.front();
  p.max = v.back();
  p.median = quantile_sorted(v, 0.5);
  p.p5 = quantile_sorted(v, 0.05);
  p.p95 = quantile_sorted(v, 0.95);
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(p.n);
  double ss = 0;
  for (double x : v) ss += (x - p.mean) * (x - p.mean);
  p.stddev = p.n > 1 ? std::sqrt(ss / static_cast<double>(p.n - 1)) : 0.0;
  return p;
}

CpuTime median_cpu(std::span<const CpuTime> reps) {
  if (reps.empty()) return {};
  std::vector<CpuTime> v(reps.begin(), reps.end());
  std::sort(v.begin(), v.end(), [](const CpuTime& a, const CpuTime& b) { return a.user_s + a.sys_s < b.user_s + b.sys_s; });
  std::size_t n = v.size();
  if (n % 2) return v[n / 2];
  return {(v[n / 2 - 1].user_s + v[n / 2].user_s) / 2, (v[n / 2 - 1].sys_s + v[n / 2].sys_s) / 2};
}

Summary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  Summary s;
  s.n = samples.size();
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  s.median = median(samples);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.n);
  double ss = 0;
  for (double x : samples) ss += (x - s.mean) * (x - s.mean);
  s.stddev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;  // sample stddev
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0.0;
  std::vector<double> dev;
  dev.reserve(s.n);
  for (double x : samples) dev.push_back(std::fabs(x - s.median));
  s.mad = median(dev);
  if (s.mad > 0 && s.n >= thresholds::kOutlierMinSamples)
    for (std::size_t i = 0; i < s.n; ++i)
      if (0.6745 * std::fabs(samples[i] - s.median) / s.mad > thresholds::kOutlierZ) s.outliers.push_back(i);
  return s;
}

}  // namespace iolab::results
