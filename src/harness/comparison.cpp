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
  out.estimate = std::exp(median(walsh));
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

std::string_view to_string(Verdict::Kind kind) {
  switch (kind) {
    case Verdict::Kind::Winner: return "winner";
    case Verdict::Kind::Tie: return "tie";
    case Verdict::Kind::Undecided: return "undecided";
  }
  return "?";
}



bool Verdict::final() const {
  return past_deciding || (!settled.empty() && std::all_of(settled.begin(), settled.end(), [](bool s) { return s; }));
}

namespace {

std::string interval_text(const RatioInterval& r) {
  if (!r.available)
    return fmt::format("{:.3f}x (no 95% interval at {} rounds)", r.estimate, std::min(r.n_a, r.n_b));
  return fmt::format("{:.3f}x, {:.3f}..{:.3f} ({:.1f}% interval, {} rounds)", r.estimate, r.lo, r.hi,
                     100 * r.coverage, std::min(r.n_a, r.n_b));
}

std::string names_of(const std::vector<std::string>& names, const std::vector<std::size_t>& which) {
  std::string s;
  for (std::size_t i : which) s += (s.empty() ? "" : ", ") + names[i];
  return s;
}

// Rounds an unresolved pair would need for its interval to clear the
// nearest boundary (margin or 1/margin, in log space) if its estimate held
// and its width shrank as 1/sqrt(rounds): rounds x (half-width / distance)^2.
// An interval wider than half the margin is not projected from (its
// estimate is too rough: a noisy pair near 1 would look hopeless by
// chance): one more round.
double rounds_to_resolve(const RatioInterval& r, double margin) {
  const double n = static_cast<double>(std::min(r.n_a, r.n_b));
  if (!r.available || n == 0) return 6;  // the first interval comes at 6 rounds
  const double e = std::log(r.estimate), half = std::max(std::log(r.hi) - e, e - std::log(r.lo));
  if (half >= std::log(margin) / 2) return n + 1;
  const double distance = std::min(std::abs(e - std::log(margin)), std::abs(e + std::log(margin)));
  if (distance <= 0) return std::numeric_limits<double>::infinity();
  return std::max(n + 1, n * (half / distance) * (half / distance));
}

// One condition's judgement: who is beaten (directly, and through chains),
// who is left, and whether that is settled.
struct ConditionJudgement {
  std::vector<bool> ran;
  // Beaten there, by its strongest direct beater. Chains add no one to the
  // beaten (a candidate beaten through a chain is beaten directly by its
  // link), but they let a winner stand over a rival it never beat directly.
  std::vector<std::optional<Verdict::Beat>> beaten;
  std::vector<std::size_t> left;                     // unbeaten, best first
  bool settled = false;
  std::string unresolved;  // the first pair of `left` that is neither beaten nor equivalent
  RatioInterval unresolved_interval;
  std::size_t unresolved_a = 0, unresolved_b = 0;
};

}  // namespace

Verdict decide(const std::vector<std::vector<std::vector<double>>>& rates, const std::vector<std::string>& names,
               const std::vector<std::string>& conditions, double margin) {
  Verdict v;
  const std::size_t nc = names.size(), nk = rates.size();
  auto ran = [&](std::size_t k, std::size_t c) { return c < rates[k].size() && !rates[k][c].empty(); };
  auto cond_name = [&](std::size_t k) { return k < conditions.size() ? conditions[k] : "condition " + std::to_string(k + 1); };
  // x over y at condition k.
  auto iv = [&](std::size_t k, std::size_t x, std::size_t y) { return paired_ratio_interval(rates[k][y], rates[k][x]); };

  // Best first: geometric mean over conditions of median rate / the condition's best median.
  std::vector<std::pair<double, std::size_t>> score;
  for (std::size_t c = 0; c < nc; ++c) {
    double log_sum = 0;
    int seen = 0;
    for (std::size_t k = 0; k < nk; ++k) {
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
  std::vector<std::size_t> place(nc, nc);
  for (std::size_t i = 0; i < v.ranking.size(); ++i) place[v.ranking[i]] = i;

  std::vector<ConditionJudgement> judged(nk);
  v.beaten.assign(nk, std::vector<std::optional<Verdict::Beat>>(nc));
  v.settled.assign(nk, false);
  v.unbeaten.assign(nk, {});
  for (std::size_t k = 0; k < nk; ++k) {
    ConditionJudgement& j = judged[k];
    j.ran.assign(nc, false);
    j.beaten.assign(nc, std::nullopt);
    std::vector<std::size_t> here;
    for (std::size_t c = 0; c < nc; ++c)
      if (ran(k, c)) j.ran[c] = true, here.push_back(c);
    // Direct beats: each candidate's strongest beater (highest lower bound).
    for (std::size_t x : here)
      for (std::size_t y : here) {
        if (x == y) continue;
        RatioInterval r = iv(k, x, y);
        if (!r.available || r.lo <= margin) continue;
        if (!j.beaten[y] || r.lo > j.beaten[y]->interval.lo) j.beaten[y] = Verdict::Beat{x, r};
      }
    for (std::size_t c : here)
      if (!j.beaten[c]) j.left.push_back(c);
    std::sort(j.left.begin(), j.left.end(), [&](std::size_t a, std::size_t b) { return place[a] < place[b]; });
    v.beaten[k] = j.beaten;
    v.unbeaten[k] = j.left;
    if (j.left.size() <= 1) {
      j.settled = !here.empty();
    } else {
      j.settled = true;
      for (std::size_t a = 0; a < j.left.size(); ++a)
        for (std::size_t b = a + 1; b < j.left.size(); ++b) {
          RatioInterval r = iv(k, j.left[a], j.left[b]);
          if (r.available && r.lo >= 1 / margin && r.hi <= margin) continue;
          v.rounds_needed = std::max(v.rounds_needed, rounds_to_resolve(r, margin));
          if (!j.settled) continue;
          j.settled = false;
          j.unresolved_interval = r;
          j.unresolved_a = j.left[a], j.unresolved_b = j.left[b];
          j.unresolved = fmt::format("{} vs {} at {}: {}, neither above {:.3f} nor inside [{:.3f}, {:.3f}]",
                                     names[j.left[a]], names[j.left[b]], cond_name(k), interval_text(r), margin,
                                     1 / margin, margin);
        }
    }
    v.settled[k] = j.settled;
  }

  if (v.ranking.size() < 2) {
    v.reason = v.ranking.empty() ? "no candidate measured" : "only " + names[v.ranking[0]] + " measured";
    return v;
  }
  auto ran_any = [&](std::size_t k) { return std::any_of(judged[k].ran.begin(), judged[k].ran.end(), [](bool r) { return r; }); };
  // Left unbeaten at every size where anything ran.
  auto unbeaten_everywhere = [&](std::size_t c) {
    for (std::size_t k = 0; k < nk; ++k)
      if (ran_any(k) && std::find(judged[k].left.begin(), judged[k].left.end(), c) == judged[k].left.end()) return false;
    return true;
  };
  // Each size's answer so far, for a reason.
  auto by_size = [&] {
    std::string s;
    for (std::size_t k = 0; k < nk; ++k) {
      if (!ran_any(k)) continue;
      const auto& left = judged[k].left;
      s += fmt::format("{}at {}: {}", s.empty() ? "" : "; ", cond_name(k),
                       !judged[k].settled ? "still open among " + names_of(names, left)
                       : left.size() == 1 ? names[left[0]] + " wins"
                                          : "a tie of " + names_of(names, left));
    }
    return s;
  };
  // Unsettled, but past deciding. A winner or a tie is one set left
  // unbeaten at every size, and each size's set can only shrink (the beaten
  // take no more turns): so a size settled on a set another size has
  // already beaten a member of, or no candidate unbeaten at every size,
  // leaves the cell undecided whatever more rounds show. Only when every
  // candidate ran at every size alike (a missing figure has its own reason).
  if (!std::all_of(judged.begin(), judged.end(), [](const ConditionJudgement& j) { return j.settled; })) {
    bool alike_runs = true, doomed = false, any_everywhere = false;
    std::optional<std::vector<bool>> runs;
    for (std::size_t k = 0; k < nk; ++k) {
      if (!ran_any(k)) continue;
      if (runs && *runs != judged[k].ran) alike_runs = false;
      runs = judged[k].ran;
      if (judged[k].settled)
        for (std::size_t c : judged[k].left) doomed = doomed || !unbeaten_everywhere(c);
    }
    for (std::size_t c = 0; c < nc; ++c) any_everywhere = any_everywhere || unbeaten_everywhere(c);
    doomed = doomed || !any_everywhere;
    if (alike_runs && doomed) {
      v.past_deciding = true;
      v.reason = "the answer changes within the band: " + by_size();
      return v;
    }
  }
  // The first unresolved comparison, condition by condition.
  for (std::size_t k = 0; k < nk; ++k) {
    if (judged[k].settled || judged[k].unresolved.empty()) continue;
    v.reason = judged[k].unresolved;
    v.interval = judged[k].unresolved_interval;
    v.interval_condition = k;
    v.against = judged[k].unresolved_b;
    return v;
  }
  // Every condition settled: the same unbeaten set everywhere, or the answer changes with the size.
  std::vector<std::size_t> first;
  bool alike = true;
  for (std::size_t k = 0; k < nk; ++k) {
    if (!ran_any(k)) continue;
    std::vector<std::size_t> sorted = judged[k].left;
    std::sort(sorted.begin(), sorted.end());
    if (first.empty()) first = sorted;
    else alike = alike && sorted == first;
  }
  if (!alike) {
    // A candidate left unbeaten at one size with no figure at another cannot be judged there.
    for (std::size_t k = 0; k < nk; ++k)
      for (std::size_t o = 0; o < nk; ++o)
        for (std::size_t c : judged[o].left)
          if (!judged[k].ran[c] && ran_any(k)) {
            v.reason = names[c] + " has no trusted figure at " + cond_name(k) + " (" + by_size() + ")";
            return v;
          }
    v.reason = "the answer changes within the band: " + by_size();
    // What is best or tied for best at every size, all the same.
    for (std::size_t c : v.ranking)
      if (unbeaten_everywhere(c)) v.best_everywhere.push_back(c);
    if (!v.best_everywhere.empty()) v.reason += "; best or tied for best at every size: " + names_of(names, v.best_everywhere);
    return v;
  }
  std::vector<std::size_t> chosen = first;
  std::sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) { return place[a] < place[b]; });
  v.chosen = chosen;
  bool have = false;
  if (chosen.size() == 1) {
    // The least favourable direct interval of the winner over a rival.
    const std::size_t w = chosen[0];
    for (std::size_t k = 0; k < nk; ++k)
      for (std::size_t o = 0; o < nc; ++o) {
        if (o == w || !judged[k].ran[o] || !judged[k].ran[w]) continue;
        RatioInterval r = iv(k, w, o);
        if (!r.available || r.lo <= margin) continue;
        if (!have || r.lo < v.interval.lo) v.interval = r, v.interval_condition = k, v.against = o, have = true;
      }
    v.kind = Verdict::Kind::Winner;
    return v;
  }
  // A tie: its widest pairwise interval.
  for (std::size_t k = 0; k < nk; ++k)
    for (std::size_t a = 0; a < chosen.size(); ++a)
      for (std::size_t b = a + 1; b < chosen.size(); ++b) {
        if (!judged[k].ran[chosen[a]] || !judged[k].ran[chosen[b]]) continue;
        RatioInterval r = iv(k, chosen[a], chosen[b]);
        const double width = std::max(r.hi, 1 / r.lo);
        if (!have || width > std::max(v.interval.hi, 1 / v.interval.lo))
          v.interval = r, v.interval_condition = k, v.against = chosen[b], have = true;
      }
  v.kind = Verdict::Kind::Tie;
  return v;
}

}  // namespace iolab::harness
