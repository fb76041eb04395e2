// The cost model's numerical fit (cost_model.cpp): weighted non-negative
// least squares solved exactly over every support, and Huber's robust
// M-estimate by reweighting it. Internal to the report layer.
#pragma once

#include <array>
#include <vector>

#include "iolab/report/cost_model.h"

namespace iolab::report::costfit {

inline constexpr std::size_t kMaxColumns = kCostTerms + 1;

// One row of a fit: the counts (scaled by the record's median time, so the
// fit weighs relative errors) and the time, likewise scaled.
struct Row {
  std::array<double, kMaxColumns> a{};
  double b = 0;
};

double dot(const Row& r, const std::vector<double>& c);
// Weighted non-negative least squares over the first `p` columns, exactly.
std::vector<double> nnls(const std::vector<Row>& rows, const std::vector<double>& w, std::size_t p);
// Huber's M-estimate by iteratively reweighted NNLS; residuals relative, their scale the MAD's.
std::vector<double> robust_fit(const std::vector<Row>& rows, std::size_t p);

}  // namespace iolab::report::costfit
