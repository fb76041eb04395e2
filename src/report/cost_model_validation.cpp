// The cost model's validation over every fit (cost_model_validation.h).
#include "cost_model_validation.h"

#include <algorithm>
#include <cmath>

#include "iolab/results/statistics.h"

namespace iolab::report::costfit {

bool in_validation_range(const CostFit& f, const ModelPoint& p) {
  const bool kind = (f.op == "read" && (f.column == "warm" || f.column == "cold")) || (f.op == "write" && f.column == "buffered");
  return kind && p.size >= 64 && p.size <= (8u << 20);
}

void validate(CostModel& m) {
  std::vector<double> all, range;
  for (const auto& f : m.fits)
    for (const auto& p : f.points)
      if (p.loo_predicted_s) {
        const double e = std::fabs(*p.loo_predicted_s - p.measured_s) / p.measured_s;
        all.push_back(e);
        if (in_validation_range(f, p)) {
          range.push_back(e);
          m.validation.range_extrapolated_points += p.loo_extrapolated ? 1 : 0;
        }
      }
  std::sort(all.begin(), all.end());
  std::sort(range.begin(), range.end());
  auto& v = m.validation;
  v.points = all.size();
  v.range_points = range.size();
  if (!all.empty()) {
    v.loo_median_abs_error = results::quantile_sorted(all, 0.5);
    v.loo_p90_abs_error = results::quantile_sorted(all, 0.9);
  }
  if (!range.empty()) {
    v.range_loo_median_abs_error = results::quantile_sorted(range, 0.5);
    v.range_loo_p90_abs_error = results::quantile_sorted(range, 0.9);
  }
}

}  // namespace iolab::report::costfit
