#include "iolab/harness/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "iolab/results/statistics.h"

namespace iolab::harness {

namespace {

// Null counts of U for m vs n: the coefficients of the Gaussian binomial
// [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Each step keeps
// the polynomial exact in its low coefficients (they are built from lower
// ones only), which are the tail the intervals need.
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  std::size_t degree = m * n;
  std::vector<double> p(degree + 1, 0.0);
  p[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    std::size_t up = n + i;
    for (std::size_t k = degree; k >= up; --k) p[k] -= p[k - up];
    for (std::size_t k = i; k <= degree; ++k) p[k] += p[k - i];
  }
  return p;
}

double log_choose(std::size_t a, std::size_t b) {
  return std::lgamma(static_cast<double>(a) + 1) - std::lgamma(static_cast<double>(b) + 1) -
         std::lgamma(static_cast<double>(a - b) + 1);
}

// Beyond this many repetitions a side the counts overflow a double: the
// normal approximation of U (with continuity correction) is exact enough there.
constexpr std::size_t kExactLimit = 300;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

double mann_whitney_cdf(std::size_t m, std::size_t n, std::size_t u) {
  if (m == 0 || n == 0) return 1;
  if (u >= m * n) return 1;
  if (m + n > kExactLimit) {
    double mu = static_cast<double>(m * n) / 2;
    double sd = std::sqrt(static_cast<double>(m * n) * static_cast<double>(m + n + 1) / 12);
    return normal_cdf((static_cast<double>(u) + 0.5 - mu) / sd);
  }
  std::vector<double> c = u_counts(std::min(m, n), std::max(m, n));
  double sum = 0;
  for (std::size_t k = 0; k <= u; ++k) sum += c[k];
  return std::min(1.0, std::exp(std::log(sum) - log_choose(m + n, m)));
}

RatioInterval ratio_interval(std::span<const double> a, std::span<const double> b, double level) {
  RatioInterval out;
  out.n_a = a.size();
  out.n_b = b.size();
  out.hi = std::numeric_limits<double>::infinity();
  std::vector<double> d;
  d.reserve(a.size() * b.size());
  for (double y : b)
    for (double x : a)
      if (x > 0 && y > 0) d.push_back(std::log(y) - std::log(x));
  if (d.empty()) return out;
  std::sort(d.begin(), d.end());
  out.estimate = std::exp(results::median(d));
  if (d.size() != a.size() * b.size()) return out;  // a zero rate: no interval
  const std::size_t m = a.size(), n = b.size(), mn = m * n;
  const double tail = (1 - level) / 2;
  // The largest k with P(U <= k-1) <= tail; the interval is [d(k), d(mn+1-k)].
  std::size_t k = 0;
  double below = 0;
  if (m + n <= kExactLimit) {
    std::vector<double> c = u_counts(std::min(m, n), std::max(m, n));
    double total = std::exp(log_choose(m + n, m)), sum = 0;
    for (std::size_t u = 0; u < mn; ++u) {
      sum += c[u];
      if (sum / total > tail) break;
      k = u + 1;
      below = sum / total;
    }
  } else {
    while (k + 1 < mn / 2 && mann_whitney_cdf(m, n, k) <= tail) ++k;
    below = k ? mann_whitney_cdf(m, n, k - 1) : 0;
  }
  if (k == 0) return out;  // even the widest interval, [d(1), d(mn)], covers less than `level`
  out.lo = std::exp(d[k - 1]);
  out.hi = std::exp(d[mn - k]);
  out.coverage = 1 - 2 * below;
  out.available = true;
  return out;
}

namespace {

// Beyond this many pairs the exact signed-rank distribution is replaced by
// its normal approximation (with continuity correction), exact enough there.
constexpr std::size_t kSignedRankExactLimit = 200;

// P(T = t) for t = 0 .. n(n+1)/2: each rank in or out of the sum with
// probability 1/2, built one rank at a time (halving as it goes keeps every
// entry a probability, so nothing overflows).
std::vector<double> signed_rank_pmf(std::size_t n) {
  const std::size_t top = n * (n + 1) / 2;
  std::vector<double> p(top + 1, 0.0);
  p[0] = 1;
  std::size_t reach = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    reach += i;
    for (std::size_t t = reach; t >= i; --t) p[t] = (p[t] + p[t - i]) / 2;
    for (std::size_t t = i; t-- > 0;) p[t] /= 2;
  }
  return p;
}

}  // namespace

double signed_rank_cdf(std::size_t n, std::size_t t) {
  const std::size_t top = n * (n + 1) / 2;
  if (t >= top) return 1;
  if (n > kSignedRankExactLimit) {
    const double nn = static_cast<double>(n);
    const double mu = nn * (nn + 1) / 4, sd = std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24);
    return normal_cdf((static_cast<double>(t) + 0.5 - mu) / sd);
  }
  std::vector<double> p = signed_rank_pmf(n);
  double sum = 0;
  for (std::size_t k = 0; k <= t; ++k) sum += p[k];
  return std::min(1.0, sum);
}

RatioInterval paired_ratio_interval(std::span<const double> a, std::span<const double> b, double level) {
  RatioInterval out;
  out.paired = true;
  out.hi = std::numeric_limits<double>::infinity();
  const std::size_t n = std::min(a.size(), b.size());
  out.n_a = out.n_b = n;
  std::vector<double> d;
  d.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (a[i] > 0 && b[i] > 0) d.push_back(std::log(b[i]) - std::log(a[i]));
  if (d.empty()) return out;
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  out.estimate = std::exp(results::median(walsh));
  if (d.size() != n) return out;  // a zero rate: no interval
  const std::size_t total = walsh.size();
  const double tail = (1 - level) / 2;
  // The largest k with P(T <= k-1) <= tail; the interval is [W(k), W(N+1-k)].
  std::size_t k = 0;
  double below = 0;
  if (n <= kSignedRankExactLimit) {
    std::vector<double> p = signed_rank_pmf(n);
    double sum = 0;
    for (std::size_t t = 0; t < total; ++t) {
      sum += p[t];
      if (sum > tail) break;
      k = t + 1;
      below = sum;
    }
  } else {
    while (k + 1 < total / 2 && signed_rank_cdf(n, k) <= tail) ++k;
    below = k ? signed_rank_cdf(n, k - 1) : 0;
  }
  if (k == 0) return out;  // even [W(1), W(N)] covers less than `level`
  out.lo = std::exp(walsh[k - 1]);
  out.hi = std::exp(walsh[total - k]);
  out.coverage = 1 - 2 * below;
  out.available = true;
  return out;
}

std::vector<std::size_t> round_order(std::size_t candidates, std::uint64_t seed, unsigned round) {
  std::vector<std::size_t> order(candidates);
  for (std::size_t i = 0; i < candidates; ++i) order[i] = i;
  // A generator per round from (seed, round): any round's order can be
  // reproduced without replaying the ones before it.
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(round) + 1)));
  for (std::size_t i = candidates; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

}  // namespace iolab::harness
