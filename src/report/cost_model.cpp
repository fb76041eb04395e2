// The cost model of issue 42 (cost_model.h, docs/model.md).
#include "iolab/report/cost_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "common.h"
#include "iolab/base/splitmix.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"
#include "iolab/results/statistics.h"

namespace iolab::report {

// A named namespace, not an anonymous one: the report layer is built as a
// unity build, and these helpers must not meet another file's.
namespace costfit {

constexpr double kHuberK = 1.345;      // 95% efficiency at the normal
constexpr double kMinScale = 1e-3;     // residuals below 0.1% are all weighed fully
constexpr double kFaultsPerMiB = 1.0;  // below this in every record, faults are noise
constexpr double kProportional = 1.02; // two counts within 2% of one ratio in every record cannot be told apart
constexpr double kKneeResidual = 0.10; // a fit whose p90 |residual| reaches this is checked for a missing term
constexpr double kKneeGain = 0.5;      // a knee term must at least halve that p90
constexpr std::size_t kMaxColumns = kCostTerms + 1;

// One row of a fit: the counts (scaled by the record's median time, so the
// fit weighs relative errors) and the time, likewise scaled.
struct Row {
  std::array<double, kMaxColumns> a{};
  double b = 0;
};

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
// most five columns every support is tried, and the best one whose
// unconstrained solution is non-negative is the constrained optimum.
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
    const double scale = std::max(kMinScale, 1.4826 * harness::median(abs_r));
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

// One record of a group: counts per pass and the time of each repetition per pass.
struct Sample {
  ModelPoint point;
  std::vector<double> pass_s;  // each repetition / passes
};

TermCounts counts_of(const harness::Result& r) {
  TermCounts c{};
  c[0] = per_pass(r, static_cast<double>(r.ops));
  c[1] = per_pass(r, static_cast<double>(r.bytes));
  c[2] = per_pass(r, static_cast<double>(r.minor_faults + r.major_faults));
  if (auto it = r.extra.find("flushes"); it != r.extra.end() && it->is_number()) c[3] = std::max(0.0, it->get<double>());
  return c;
}

bool sweepable(const harness::Result& r) {
  return measured(r) && (r.op == harness::Op::Read || r.op == harness::Op::Write) && r.threads == 1 &&
         (!r.pattern || *r.pattern == harness::AccessPattern::Seq) && r.block_size > 0 && r.bytes > 0;
}

std::string column_of(const harness::Result& r) {
  std::string c = harness::cache_name(r);
  if (!c.empty()) return c;
  return r.op == harness::Op::Write ? "buffered" : "none";  // a write to a fresh file goes through the page cache
}

// The rows of a fit over `samples` (only those `keep` allows), one per
// repetition; `extra` adds a column (the knee's) from a point.
template <class Keep, class Extra>
std::vector<Row> rows_of(const std::vector<Sample>& samples, const std::vector<CostTerm>& terms, Keep keep, Extra extra,
                         bool with_extra, const std::vector<std::vector<std::size_t>>* picks = nullptr) {
  std::vector<Row> rows;
  for (std::size_t s = 0; s < samples.size(); ++s) {
    const Sample& x = samples[s];
    if (!keep(x.point)) continue;
    const double scale = x.point.measured_s;
    auto add = [&](double y) {
      Row r;
      for (std::size_t j = 0; j < terms.size(); ++j) r.a[j] = x.point.counts[static_cast<std::size_t>(terms[j])] / scale;
      if (with_extra) r.a[terms.size()] = extra(x.point) / scale;
      r.b = y / scale;
      rows.push_back(r);
    };
    if (picks)
      for (std::size_t i : (*picks)[s]) add(x.pass_s[i]);
    else
      for (double y : x.pass_s) add(y);
  }
  return rows;
}

TermCounts spread(const std::vector<CostTerm>& terms, const std::vector<double>& c) {
  TermCounts t{};
  for (std::size_t j = 0; j < terms.size(); ++j) t[static_cast<std::size_t>(terms[j])] = c[j];
  return t;
}

double predicted(const TermCounts& coef, const TermCounts& counts) {
  double s = 0;
  for (std::size_t j = 0; j < kCostTerms; ++j) s += coef[j] * counts[j];
  return s;
}

Interval interval_of(double estimate, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {estimate, harness::quantile_sorted(v, 0.025), harness::quantile_sorted(v, 0.975)};
}

double p90_abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return harness::quantile_sorted(v, 0.9);
}

// Which terms a group's records can carry, and why the others are dropped.
std::vector<CostTerm> choose_terms(const std::vector<Sample>& samples, std::size_t sizes, std::vector<DroppedTerm>& dropped) {
  std::vector<CostTerm> kept;
  for (std::size_t t = 0; t < kCostTerms; ++t) {
    const auto term = static_cast<CostTerm>(t);
    bool any = false;
    double faults_per_mib = 0;
    for (const auto& s : samples) {
      any = any || s.point.counts[t] > 0;
      if (s.point.counts[1] > 0) faults_per_mib = std::max(faults_per_mib, s.point.counts[2] / (s.point.counts[1] / kMiB));
    }
    if (!any) {
      dropped.push_back({term, "no record of this method counts any"});
      continue;
    }
    if (term == CostTerm::Faults && faults_per_mib < kFaultsPerMiB) {
      dropped.push_back({term, "fewer than 1 fault per MiB in every record: the process's own, not the method's"});
      continue;
    }
    std::string folded;
    for (CostTerm u : kept) {
      const auto ui = static_cast<std::size_t>(u);
      double lo = std::numeric_limits<double>::infinity(), hi = 0;
      bool same_zeros = true;
      for (const auto& s : samples) {
        const double a = s.point.counts[t], b = s.point.counts[ui];
        if ((a > 0) != (b > 0)) same_zeros = false;
        if (a > 0 && b > 0) {
          lo = std::min(lo, a / b);
          hi = std::max(hi, a / b);
        }
      }
      if (same_zeros && hi > 0 && hi <= lo * kProportional) {
        folded = fmt::format("proportional to {} in every record ({} per {}): its cost is inside the {} term",
                             to_string(u), sig(std::sqrt(lo * hi), 3), to_string(u), to_string(u));
        break;
      }
    }
    if (!folded.empty()) {
      dropped.push_back({term, folded});
      continue;
    }
    kept.push_back(term);
  }
  while (kept.size() > sizes) {
    dropped.push_back({kept.back(), "too few sizes to tell it from the other terms"});
    kept.pop_back();
  }
  return kept;
}

void interpolate_counts(CostFit& f) {
  for (std::uint64_t size : f.sizes) {
    TermCounts per_byte{};
    for (std::size_t t = 0; t < kCostTerms; ++t) {
      std::vector<double> v;
      for (const auto& p : f.points)
        if (p.size == size && p.counts[1] > 0) v.push_back(p.counts[t] / p.counts[1]);
      per_byte[t] = harness::median(v);
    }
    f.counts_per_byte.push_back(per_byte);
  }
}

// Looks for the term the residuals say is missing: a per-byte cost that
// changes at one size (a cache-size knee), tried at every split that
// leaves two sizes on each side.
std::optional<MissingTerm> missing_term(const CostFit& f, const std::vector<Sample>& samples,
                                        const std::vector<CostTerm>& terms) {
  std::vector<double> rel;
  for (const auto& p : f.points) rel.push_back((p.fitted_s - p.measured_s) / p.measured_s);
  const double base = p90_abs(rel);
  if (base < kKneeResidual) return std::nullopt;
  MissingTerm best{"unexplained", 0, 0, 0, base, base};
  for (std::size_t j = 2; j + 2 <= f.sizes.size(); ++j) {
    const std::uint64_t knee = f.sizes[j];
    for (bool above : {true, false}) {
      auto extra = [&](const ModelPoint& p) { return (p.size >= knee) == above ? p.counts[1] : 0.0; };
      auto rows = rows_of(samples, terms, [](const ModelPoint&) { return true; }, extra, true);
      std::vector<double> c = robust_fit(rows, terms.size() + 1);
      if (!(c.back() > 0)) continue;
      TermCounts coef = spread(terms, c);
      std::vector<double> r;
      for (const auto& p : f.points) r.push_back((predicted(coef, p.counts) + c.back() * extra(p) - p.measured_s) / p.measured_s);
      const double with = p90_abs(r);
      if (with <= base * kKneeGain && with < best.residual_p90_with_term)
        best = {above ? "bytes_above_knee" : "bytes_below_knee", knee, f.sizes[j - 1], c.back(), base, with};
    }
  }
  return best;
}

CostFit fit_group(const std::string& key_method, const harness::Result& first, std::vector<Sample> samples,
                  const ModelOptions& o, std::uint64_t group_seed) {
  CostFit f;
  f.method = key_method;
  f.op = std::string(harness::to_string(first.op));
  f.column = column_of(first);
  f.flush = io::to_string(first.sync);
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.point.size, a.point.file_size, a.point.measured_s) < std::tie(b.point.size, b.point.file_size, b.point.measured_s);
  });
  for (const auto& s : samples) {
    f.points.push_back(s.point);
    f.repetitions += s.pass_s.size();
    if (f.sizes.empty() || f.sizes.back() != s.point.size) f.sizes.push_back(s.point.size);
  }
  const std::vector<CostTerm> terms = choose_terms(samples, f.sizes.size(), f.dropped);
  const std::size_t p = terms.size();
  auto all = [](const ModelPoint&) { return true; };
  auto none = [](const ModelPoint&) { return 0.0; };

  f.coefficients = spread(terms, robust_fit(rows_of(samples, terms, all, none, false), p));
  for (auto& pt : f.points) pt.fitted_s = predicted(f.coefficients, pt.counts);

  // The bootstrap: each record's repetitions drawn with replacement, so
  // every size stays in every resample.
  std::uint64_t draw = 0;
  for (unsigned b = 0; b < o.resamples; ++b) {
    std::vector<std::vector<std::size_t>> picks(samples.size());
    for (std::size_t s = 0; s < samples.size(); ++s)
      for (std::size_t i = 0; i < samples[s].pass_s.size(); ++i)
        picks[s].push_back(static_cast<std::size_t>(splitmix64(group_seed, draw++) % samples[s].pass_s.size()));
    f.resamples.push_back(spread(terms, robust_fit(rows_of(samples, terms, all, none, false, &picks), p)));
  }
  for (CostTerm t : terms) {
    const auto ti = static_cast<std::size_t>(t);
    std::vector<double> v;
    for (const auto& r : f.resamples) v.push_back(r[ti]);
    f.terms.push_back({t, interval_of(f.coefficients[ti], std::move(v))});
  }

  // Leave one size out: fit without it, predict its records from their counts.
  std::vector<double> errors;
  if (f.sizes.size() >= std::max<std::size_t>(p, 2) + 1) {
    for (std::uint64_t size : f.sizes) {
      auto others = [size](const ModelPoint& pt) { return pt.size != size; };
      TermCounts c = spread(terms, robust_fit(rows_of(samples, terms, others, none, false), p));
      for (auto& pt : f.points)
        if (pt.size == size) {
          pt.loo_predicted_s = predicted(c, pt.counts);
          errors.push_back(std::fabs(*pt.loo_predicted_s - pt.measured_s) / pt.measured_s);
        }
    }
    std::sort(errors.begin(), errors.end());
    f.loo_median_abs_error = harness::quantile_sorted(errors, 0.5);
    f.loo_p90_abs_error = harness::quantile_sorted(errors, 0.9);
  }
  f.missing = missing_term(f, samples, terms);
  interpolate_counts(f);
  return f;
}

// Seconds per byte of `a` minus `b` on a log grid over [lo, hi].
std::vector<double> difference(const CostFit& a, const TermCounts& ca, const CostFit& b, const TermCounts& cb,
                               const std::vector<double>& grid) {
  std::vector<double> d;
  for (double s : grid) d.push_back(*a.seconds_per_byte_at(s, ca) - *b.seconds_per_byte_at(s, cb));
  return d;
}

struct Crossing {
  double size;
  bool a_below;  // a is the cheaper one below the size
};

std::vector<Crossing> crossings(const std::vector<double>& grid, const std::vector<double>& d) {
  std::vector<Crossing> out;
  for (std::size_t k = 0; k + 1 < d.size(); ++k) {
    if (!(d[k] * d[k + 1] < 0)) continue;
    const double u = d[k] / (d[k] - d[k + 1]);
    const double ls = std::log(grid[k]) + u * (std::log(grid[k + 1]) - std::log(grid[k]));
    out.push_back({std::exp(ls), d[k] < 0});
  }
  return out;
}

void find_crossovers(CostModel& m, const ModelOptions& o) {
  for (std::size_t i = 0; i < m.fits.size(); ++i)
    for (std::size_t j = i + 1; j < m.fits.size(); ++j) {
      const CostFit& a = m.fits[i];
      const CostFit& b = m.fits[j];
      if (a.op != b.op || a.column != b.column || a.flush != b.flush) continue;
      const double lo = static_cast<double>(std::max(a.sizes.front(), b.sizes.front()));
      const double hi = static_cast<double>(std::min(a.sizes.back(), b.sizes.back()));
      if (!(lo < hi)) continue;
      const std::size_t n = static_cast<std::size_t>(std::ceil(std::log2(hi / lo) * 16)) + 1;
      std::vector<double> grid;
      for (std::size_t k = 0; k <= n; ++k) grid.push_back(k == n ? hi : lo * std::pow(hi / lo, double(k) / double(n)));
      for (const Crossing& c : crossings(grid, difference(a, a.coefficients, b, b.coefficients, grid))) {
        std::vector<double> found;
        for (std::size_t r = 0; r < std::min(a.resamples.size(), b.resamples.size()); ++r) {
          double nearest = 0;
          for (const Crossing& x : crossings(grid, difference(a, a.resamples[r], b, b.resamples[r], grid)))
            if (x.a_below == c.a_below && std::fabs(std::log(x.size / c.size)) <= std::log(4.0) &&
                (nearest == 0 || std::fabs(std::log(x.size / c.size)) < std::fabs(std::log(nearest / c.size))))
              nearest = x.size;
          if (nearest > 0) found.push_back(nearest);
        }
        const double share = o.resamples ? double(found.size()) / double(o.resamples) : 1.0;
        if (share < o.crossover_min_share) continue;
        Crossover x;
        x.op = a.op;
        x.column = a.column;
        x.flush = a.flush;
        x.below = c.a_below ? a.method : b.method;
        x.above = c.a_below ? b.method : a.method;
        x.size_bytes = found.empty() ? Interval{c.size, c.size, c.size} : interval_of(c.size, found);
        x.resamples_crossing = share;
        m.crossovers.push_back(x);
      }
    }
}

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
        if (in_validation_range(f, p)) range.push_back(e);
      }
  std::sort(all.begin(), all.end());
  std::sort(range.begin(), range.end());
  auto& v = m.validation;
  v.points = all.size();
  v.range_points = range.size();
  if (!all.empty()) {
    v.loo_median_abs_error = harness::quantile_sorted(all, 0.5);
    v.loo_p90_abs_error = harness::quantile_sorted(all, 0.9);
  }
  if (!range.empty()) {
    v.range_loo_median_abs_error = harness::quantile_sorted(range, 0.5);
    v.range_loo_p90_abs_error = harness::quantile_sorted(range, 0.9);
  }
}

}  // namespace costfit

std::string_view to_string(CostTerm t) {
  switch (t) {
    case CostTerm::Calls: return "calls";
    case CostTerm::Bytes: return "bytes";
    case CostTerm::Faults: return "faults";
    case CostTerm::Flushes: return "flushes";
  }
  return "calls";
}

double CostFit::predict(const TermCounts& counts) const { return costfit::predicted(coefficients, counts); }

std::optional<double> CostFit::seconds_per_byte_at(double size, const TermCounts& coef) const {
  if (sizes.empty() || size < static_cast<double>(sizes.front()) || size > static_cast<double>(sizes.back())) return std::nullopt;
  std::size_t j = 0;
  while (j + 1 < sizes.size() && static_cast<double>(sizes[j + 1]) < size) ++j;
  const std::size_t k = std::min(j + 1, sizes.size() - 1);
  const double l0 = std::log(static_cast<double>(sizes[j])), l1 = std::log(static_cast<double>(sizes[k]));
  const double u = l1 > l0 ? (std::log(size) - l0) / (l1 - l0) : 0.0;
  double s = 0;
  for (std::size_t t = 0; t < kCostTerms; ++t) {
    const double v0 = counts_per_byte[j][t], v1 = counts_per_byte[k][t];
    const double v = v0 > 0 && v1 > 0 ? std::exp(std::log(v0) + u * (std::log(v1) - std::log(v0))) : v0 + u * (v1 - v0);
    s += coef[t] * v;
  }
  return s;
}

CostModel fit_cost_model(const std::vector<harness::Result>& records, const ModelOptions& o) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // op, column, flush, method
  std::map<Key, std::pair<const harness::Result*, std::vector<costfit::Sample>>> groups;
  for (const auto& r : records) {
    if (!costfit::sweepable(r)) continue;
    std::string method = method_label(r);
    if (std::string q = queue_label(r); !q.empty()) method += " " + q;
    Key key{std::string(harness::to_string(r.op)), costfit::column_of(r), io::to_string(r.sync), method};
    costfit::Sample s;
    s.point.size = r.block_size;
    s.point.file_size = r.file_size;
    s.point.counts = costfit::counts_of(r);
    for (double x : r.samples_s) s.pass_s.push_back(x / passes(r));
    s.point.measured_s = harness::median(s.pass_s);
    auto& g = groups[key];
    if (!g.first) g.first = &r;
    g.second.push_back(std::move(s));
  }
  CostModel m;
  m.resamples = o.resamples;
  m.seed = o.seed;
  std::uint64_t index = 0;
  for (auto& [key, g] : groups) {
    std::vector<std::uint64_t> sizes;
    for (const auto& s : g.second) sizes.push_back(s.point.size);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (sizes.size() < std::max<std::size_t>(o.min_sizes, 2)) continue;
    m.fits.push_back(costfit::fit_group(std::get<3>(key), *g.first, std::move(g.second), o, splitmix64(o.seed, index++)));
  }
  costfit::find_crossovers(m, o);
  costfit::validate(m);
  return m;
}

namespace costfit {

// A coefficient in the unit a person reads: ns per call, GB/s for the byte
// term (its inverse: the bounds swap), µs per fault, ms per flush.
struct Readable {
  const char* name;  // the JSON name
  const char* unit;  // after the figure
  double factor;     // seconds * factor; 0: the byte term's inverse
};
constexpr Readable kReadable[kCostTerms] = {
    {"ns_per_call", "ns/call", 1e9}, {"gb_per_s", "GB/s", 0}, {"us_per_fault", "µs/fault", 1e6}, {"ms_per_flush", "ms/flush", 1e3}};

Interval readable(CostTerm t, const Interval& s) {
  const Readable& r = kReadable[static_cast<std::size_t>(t)];
  if (r.factor > 0) return {s.estimate * r.factor, s.low * r.factor, s.high * r.factor};
  auto inv = [](double x) { return x > 0 ? 1.0 / (x * 1e9) : std::numeric_limits<double>::infinity(); };
  return {inv(s.estimate), inv(s.high), inv(s.low)};
}

nlohmann::json interval_json(const Interval& i) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"estimate", num(i.estimate)}, {"low", num(i.low)}, {"high", num(i.high)}};
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string figure(CostTerm t, const Interval& s) {
  Interval r = readable(t, s);
  auto one = [](double x) { return std::isfinite(x) ? sig(x, 2) : std::string("∞"); };
  return fmt::format("{} ({}..{}) {}", one(r.estimate), one(r.low), one(r.high), kReadable[static_cast<std::size_t>(t)].unit);
}

std::string size_range(const CostFit& f) {
  return fmt::format("{}..{} ({})", bytes_text(f.sizes.front()), bytes_text(f.sizes.back()), f.sizes.size());
}

std::string gbps(double seconds_per_byte) {
  return seconds_per_byte > 0 ? sig(1.0 / (seconds_per_byte * 1e9), 2) + " GB/s" : std::string("free");
}

}  // namespace costfit

// A relative error as a percentage, "<0.1%" below what a benchmark can tell.
std::string error_text(double fraction) { return fraction < 0.001 ? std::string("<0.1%") : format_percent(fraction); }

std::string coefficient_text(CostTerm t, const Interval& seconds) { return costfit::figure(t, seconds); }

// What the residuals say, with the byte term's speed on either side of the knee.
std::string missing_term_text(const CostFit& f) {
  using costfit::gbps;
  if (!f.missing) return "";
  const MissingTerm& m = *f.missing;
  if (m.term == "unexplained")
    return fmt::format("residuals reach {} (p90) and no single knee explains them: a term the model lacks",
                       error_text(m.residual_p90));
  const double c = f.coefficients[static_cast<std::size_t>(CostTerm::Bytes)];
  const bool above = m.term == "bytes_above_knee";
  return fmt::format("missing term {}: bytes cost {} below {} and {} from it (a cache-size knee between {} and {}; "
                     "p90 |residual| {} without the term, {} with it)",
                     m.term, gbps(above ? c : c + m.extra_seconds_per_byte), bytes_text(m.knee_bytes),
                     gbps(above ? c + m.extra_seconds_per_byte : c), bytes_text(m.below_bytes), bytes_text(m.knee_bytes),
                     error_text(m.residual_p90), error_text(m.residual_p90_with_term));
}

std::string crossover_text(const Crossover& c) {
  auto size = [](double b) { return bytes_text(static_cast<std::uint64_t>(std::llround(b))); };
  return fmt::format("{}, {}, flush {}: {} below {} ({}..{}), {} above ({} of resamples)", c.op, c.column, c.flush,
                     visible(c.below), size(c.size_bytes.estimate), size(c.size_bytes.low), size(c.size_bytes.high),
                     visible(c.above), format_percent(c.resamples_crossing));
}

std::string validation_text(const ModelValidation& v) {
  auto pct = [](const std::optional<double>& x) { return x ? error_text(*x) : std::string("n/a"); };
  return fmt::format("leave one size out, |predicted - measured| / measured: median {}, p90 {} over {} points; "
                     "64 B..8 MiB warm and cold reads and buffered writes: median {}, p90 {} over {} points",
                     pct(v.loo_median_abs_error), pct(v.loo_p90_abs_error), v.points, pct(v.range_loo_median_abs_error),
                     pct(v.range_loo_p90_abs_error), v.range_points);
}


nlohmann::json to_json(const CostModel& m) {
  using namespace costfit;
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& f : m.fits) {
    nlohmann::json coef = nlohmann::json::object(), human = nlohmann::json::object();
    for (const auto& c : f.terms) {
      coef[std::string(to_string(c.term))] = interval_json(c.seconds);
      human[kReadable[static_cast<std::size_t>(c.term)].name] = interval_json(readable(c.term, c.seconds));
    }
    nlohmann::json dropped = nlohmann::json::array();
    for (const auto& d : f.dropped) dropped.push_back({{"term", to_string(d.term)}, {"reason", d.reason}});
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : f.points)
      points.push_back({{"size", p.size}, {"file_size", p.file_size}, {"calls", p.counts[0]}, {"bytes", p.counts[1]},
                        {"faults", p.counts[2]}, {"flushes", p.counts[3]}, {"measured_s", p.measured_s},
                        {"fitted_s", p.fitted_s}, {"loo_predicted_s", optional_json(p.loo_predicted_s)}});
    nlohmann::json missing = nullptr;
    if (f.missing)
      missing = {{"term", f.missing->term},
                 {"knee_bytes", f.missing->knee_bytes},
                 {"below_bytes", f.missing->below_bytes},
                 {"extra_seconds_per_byte", f.missing->extra_seconds_per_byte},
                 {"residual_p90", f.missing->residual_p90},
                 {"residual_p90_with_term", f.missing->residual_p90_with_term}};
    fits.push_back({{"method", f.method}, {"op", f.op}, {"column", f.column}, {"flush", f.flush}, {"sizes", f.sizes},
                    {"repetitions", f.repetitions}, {"coefficients", coef}, {"readable", human}, {"dropped", dropped},
                    {"loo_median_abs_error", optional_json(f.loo_median_abs_error)},
                    {"loo_p90_abs_error", optional_json(f.loo_p90_abs_error)}, {"missing_term", missing}, {"points", points}});
  }
  nlohmann::json crossovers = nlohmann::json::array();
  for (const auto& c : m.crossovers)
    crossovers.push_back({{"op", c.op}, {"column", c.column}, {"flush", c.flush}, {"below", c.below}, {"above", c.above},
                          {"size_bytes", interval_json(c.size_bytes)}, {"resamples_crossing", c.resamples_crossing}});
  const auto& v = m.validation;
  return {{"formula", "time per pass = calls x c_call + bytes x c_byte + faults x c_fault + flushes x c_flush"},
          {"resamples", m.resamples},
          {"seed", m.seed},
          {"interval", 0.95},
          {"fits", fits},
          {"crossovers", crossovers},
          {"validation",
           {{"points", v.points},
            {"loo_median_abs_error", optional_json(v.loo_median_abs_error)},
            {"loo_p90_abs_error", optional_json(v.loo_p90_abs_error)},
            {"range",
             {{"what", "64 B..8 MiB; warm and cold reads, buffered writes"},
              {"points", v.range_points},
              {"loo_median_abs_error", optional_json(v.range_loo_median_abs_error)},
              {"loo_p90_abs_error", optional_json(v.range_loo_p90_abs_error)}}}}}};
}

std::string format_text(const CostModel& m) {
  using namespace costfit;
  std::string out = fmt::format(
      "Time per pass = calls x c_call + bytes x c_byte + faults x c_fault + flushes x c_flush, fitted per method "
      "(robust, non-negative; 95% intervals from {} resamples of the repetitions, seed {}; '-': term not fitted)\n",
      m.resamples, m.seed);
  std::size_t i = 0;
  while (i < m.fits.size()) {
    std::size_t j = i;
    while (j < m.fits.size() && m.fits[j].op == m.fits[i].op && m.fits[j].column == m.fits[i].column &&
           m.fits[j].flush == m.fits[i].flush)
      ++j;
    out += fmt::format("\n{}, {}, flush {}\n", m.fits[i].op, m.fits[i].column, m.fits[i].flush);
    TextTable t;
    t.add({"METHOD", "PER CALL", "BYTE TERM", "PER FAULT", "PER FLUSH", "LOO ERR MEDIAN", "P90", "SIZES"});
    std::vector<std::string> notes;
    for (std::size_t k = i; k < j; ++k) {
      const CostFit& f = m.fits[k];
      std::vector<std::string> row{visible(f.method), "-", "-", "-", "-", "-", "-", size_range(f)};
      for (const auto& c : f.terms) row[1 + static_cast<std::size_t>(c.term)] = figure(c.term, c.seconds);
      if (f.loo_median_abs_error) row[5] = error_text(*f.loo_median_abs_error);
      if (f.loo_p90_abs_error) row[6] = error_text(*f.loo_p90_abs_error);
      t.add(std::move(row));
      if (f.missing) notes.push_back(visible(f.method) + ": " + missing_term_text(f));
      for (const auto& d : f.dropped)
        if (d.reason.rfind("proportional", 0) == 0 || d.reason.rfind("too few", 0) == 0) notes.push_back(fmt::format("{}: {} not fitted: {}", visible(f.method), to_string(d.term), d.reason));
    }
    out += t.render();
    for (const auto& n : notes) out += "  " + n + "\n";
    i = j;
  }
  out += "\nCrossovers (the size where the cheaper method changes, per byte moved):\n";
  if (m.crossovers.empty()) out += "  none within the sizes both methods measured\n";
  for (const auto& c : m.crossovers) out += "  " + crossover_text(c) + "\n";
  out += "\nValidation: " + validation_text(m.validation) + "\n";
  return out;
}

}  // namespace iolab::report
