// The cost model's numerical fit (robust_fit.h).
#include "robust_fit.h"

#include <algorithm>
#include <cmath>

#include "iolab/results/statistics.h"

namespace iolab::report::costfit {

// Named, not anonymous: the report layer is a unity build, and these must not meet another file's.
constexpr double kHuberK = 1.345;   // 95% efficiency at the normal
constexpr double kMinScale = 1e-3;  // residuals below 0.1% are all weighed fully

double dot(const Row& r, const std::vector<double>& c) {
  double s = 0;
  for (std::size_t j = 0; j < c.size(); ++j) s += r.a[j] * c[j];
  return s;
}

// Solves G x = h (n x n, n <= kMaxColumns) by Gaussian elimination with
// partial pivoting on the unit-diagonal scaling; false when singular.
bool solve(std::vector<std::vector<double>> g, std::vector<double> h, std::vector<double>& x) {
  const std::size_t n = h.size();
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(g[i][i] > 0)) return false;
    d[i] = std::sqrt(g[i][i]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) g[i][j] /= d[i] * d[j];
    h[i] /= d[i];
  }
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(g[r][c]) > std::fabs(g[p][c])) p = r;
    if (std::fabs(g[p][c]) < 1e-10) return false;
    std::swap(g[p], g[c]);
    std::swap(h[p], h[c]);
    for (std::size_t r = c + 1; r < n; ++r) {
      double f = g[r][c] / g[c][c];
      for (std::size_t k = c; k < n; ++k) g[r][k] -= f * g[c][k];
      h[r] -= f * h[c];
    }
  }
  x.assign(n, 0);
  for (std::size_t i = n; i-- > 0;) {
    double s = h[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= g[i][k] * x[k];
    x[i] = s / g[i][i];
  }
  for (std::size_t i = 0; i < n; ++i) x[i] /= d[i];
  return true;
}

// Weighted non-negative least squares over `p` columns, exactly: with at
// most six columns (five terms and a knee) every support is tried, and the
// best one whose unconstrained solution is non-negative is the constrained optimum.
std::vector<double> nnls(const std::vector<Row>& rows, const std::vector<double>& w, std::size_t p) {
  std::vector<double> best(p, 0);
  double best_f = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) best_f += w[i] * rows[i].b * rows[i].b;
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < p; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    const std::size_t k = cols.size();
    std::vector<std::vector<double>> g(k, std::vector<double>(k, 0));
    std::vector<double> h(k, 0);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t u = 0; u < k; ++u) {
        h[u] += w[i] * rows[i].a[cols[u]] * rows[i].b;
        for (std::size_t v = 0; v < k; ++v) g[u][v] += w[i] * rows[i].a[cols[u]] * rows[i].a[cols[v]];
      }
    std::vector<double> x;
    if (!solve(g, h, x)) continue;
    if (std::any_of(x.begin(), x.end(), [](double v) { return !(v >= 0) || !std::isfinite(v); })) continue;
    std::vector<double> c(p, 0);
    for (std::size_t u = 0; u < k; ++u) c[cols[u]] = x[u];
    double f = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      double r = rows[i].b - dot(rows[i], c);
      f += w[i] * r * r;
    }
    if (f < best_f) {
      best_f = f;
      best = c;
    }
  }
  return best;
}

// Huber's M-estimate by iteratively reweighted NNLS; the residuals are
// relative (the rows are scaled), their scale the MAD's.
std::vector<double> robust_fit(const std::vector<Row>& rows, std::size_t p) {
  std::vector<double> w(rows.size(), 1.0);
  std::vector<double> c = nnls(rows, w, p);
  for (int it = 0; it < 30; ++it) {
    std::vector<double> r(rows.size()), abs_r(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      r[i] = rows[i].b - dot(rows[i], c);
      abs_r[i] = std::fabs(r[i]);
    }
    const double scale = std::max(kMinScale, 1.4826 * results::median(abs_r));
    for (std::size_t i = 0; i < rows.size(); ++i)
      w[i] = abs_r[i] <= kHuberK * scale ? 1.0 : kHuberK * scale / abs_r[i];
    std::vector<double> next = nnls(rows, w, p);
    double change = 0;
    for (std::size_t j = 0; j < p; ++j) {
      double m = std::max(std::fabs(next[j]), std::fabs(c[j]));
      if (m > 0) change = std::max(change, std::fabs(next[j] - c[j]) / m);
    }
    c = std::move(next);
    if (change < 1e-9) break;
  }
  return c;
}

}  // namespace iolab::report::costfit
