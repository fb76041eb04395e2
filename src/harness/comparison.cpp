#include "iolab/harness/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "iolab/harness/statistics.h"

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
  out.estimate = std::exp(median(d));
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

std::vector<std::size_t> round_order(std::size_t candidates, std::uint64_t seed, unsigned round) {
  std::vector<std::size_t> order(candidates);
  for (std::size_t i = 0; i < candidates; ++i) order[i] = i;
  // A generator per round from (seed, round): any round's order can be
  // reproduced without replaying the ones before it.
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(round) + 1)));
  for (std::size_t i = candidates; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

std::string_view to_string(Verdict::Kind kind) {
  switch (kind) {
    case Verdict::Kind::Winner: return "winner";
    case Verdict::Kind::Tie: return "tie";
    case Verdict::Kind::Undecided: return "undecided";
  }
  return "?";
}

namespace {

std::string interval_text(const RatioInterval& r) {
  if (!r.available) return fmt::format("{:.3f}x (no 95% interval at {} vs {} repetitions)", r.estimate, r.n_a, r.n_b);
  return fmt::format("{:.3f}x, {:.3f}..{:.3f} ({:.1f}% interval)", r.estimate, r.lo, r.hi, 100 * r.coverage);
}

}  // namespace

Verdict decide(const std::vector<std::vector<std::vector<double>>>& rates, const std::vector<std::string>& names,
               const std::vector<std::string>& conditions, double margin) {
  Verdict v;
  const std::size_t nc = names.size();
  auto ran = [&](std::size_t cond, std::size_t c) { return c < rates[cond].size() && !rates[cond][c].empty(); };
  auto cond_name = [&](std::size_t i) { return i < conditions.size() ? conditions[i] : "condition " + std::to_string(i + 1); };
  // Best first: geometric mean over conditions of median rate / the condition's best median.
  std::vector<std::pair<double, std::size_t>> score;
  for (std::size_t c = 0; c < nc; ++c) {
    double log_sum = 0;
    int seen = 0;
    for (std::size_t k = 0; k < rates.size(); ++k) {
      if (!ran(k, c)) continue;
      double top = 0;
      for (std::size_t o = 0; o < nc; ++o)
        if (ran(k, o)) top = std::max(top, median(rates[k][o]));
      double mine = median(rates[k][c]);
      if (top > 0 && mine > 0) log_sum += std::log(mine / top), ++seen;
    }
    if (seen) score.emplace_back(log_sum / seen, c);
  }
  std::stable_sort(score.begin(), score.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (const auto& [s, c] : score) v.ranking.push_back(c);
  if (v.ranking.size() < 2) {
    v.reason = v.ranking.empty() ? "no candidate measured" : "only " + names[v.ranking[0]] + " measured";
    return v;
  }
  auto iv = [&](std::size_t k, std::size_t x, std::size_t y) { return ratio_interval(rates[k][y], rates[k][x]); };

  // Tries the top `size` candidates as the decided set; on failure says why.
  auto attempt = [&](std::size_t size, std::string& why) {
    std::vector<std::size_t> set(v.ranking.begin(), v.ranking.begin() + static_cast<std::ptrdiff_t>(size));
    RatioInterval deciding;
    std::size_t at = 0, against = 0;
    bool first = true;
    for (std::size_t k = 0; k < rates.size(); ++k) {
      for (std::size_t t : set)
        if (!ran(k, t)) {
          bool others = false;
          for (std::size_t o = 0; o < nc; ++o) others |= o != t && ran(k, o);
          if (others) {
            why = names[t] + " did not run at " + cond_name(k);
            return false;
          }
        }
      for (std::size_t i = 0; i < set.size(); ++i)
        for (std::size_t j = i + 1; j < set.size(); ++j) {
          RatioInterval r = iv(k, set[i], set[j]);
          if (!r.available || r.lo < 1 / margin || r.hi > margin) {
            why = fmt::format("{} vs {} at {}: {} not inside [{:.3f}, {:.3f}]", names[set[i]], names[set[j]],
                              cond_name(k), interval_text(r), 1 / margin, margin);
            return false;
          }
          double width = std::max(r.hi, 1 / r.lo);
          if (first || width > std::max(deciding.hi, 1 / deciding.lo)) deciding = r, at = k, against = set[j], first = false;
        }
      for (std::size_t o = 0; o < nc; ++o) {
        if (std::find(set.begin(), set.end(), o) != set.end() || !ran(k, o)) continue;
        for (std::size_t t : set) {
          RatioInterval r = iv(k, t, o);
          if (!r.available || r.lo <= margin) {
            why = fmt::format("{} over {} at {}: {} not above {:.3f}", names[t], names[o], cond_name(k),
                              interval_text(r), margin);
            return false;
          }
          if (size == 1 && (first || r.lo < deciding.lo)) deciding = r, at = k, against = o, first = false;
        }
      }
    }
    v.chosen = set;
    v.interval = deciding;
    v.interval_condition = at;
    v.against = against;
    return true;
  };
  std::string why_winner, why_tie;
  if (attempt(1, why_winner)) {
    v.kind = Verdict::Kind::Winner;
    return v;
  }
  for (std::size_t size = 2; size <= v.ranking.size(); ++size) {
    std::string why;
    if (attempt(size, why)) {
      v.kind = Verdict::Kind::Tie;
      return v;
    }
    if (size == 2) why_tie = why;
  }
  v.reason = "no winner (" + why_winner + "); no tie (" + why_tie + ")";
  return v;
}

}  // namespace iolab::harness
