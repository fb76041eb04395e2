// The cost model of issue 42 (cost_model.h, docs/model.md).
#include "iolab/report/cost_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "common.h"
#include "cost_model_counts.h"
#include "cost_model_validation.h"
#include "robust_fit.h"
#include "iolab/base/splitmix.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"
#include "iolab/results/statistics.h"

namespace iolab::report {

// A named namespace, not an anonymous one: the report layer is built as a
// unity build, and these helpers must not meet another file's.
namespace costfit {

constexpr double kProportional = 1.02; // two counts within 2% of one ratio in every record cannot be told apart
constexpr double kKneeResidual = 0.10; // a fit whose p90 |residual| reaches this is checked for a missing term
constexpr double kKneeGain = 0.5;      // a knee term must at least halve that p90

// One record of a group: counts per pass and the time of each repetition per pass.
struct Sample {
  ModelPoint point;
  std::vector<double> pass_s;  // each repetition / passes
};

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
  return {estimate, results::quantile_sorted(v, 0.025), results::quantile_sorted(v, 0.975)};
}

double p90_abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return results::quantile_sorted(v, 0.9);
}

// Which terms a group's records can carry, and why the others are dropped.
// `checked`: the fit is one that leaving a size out will check, so a folio
// term is kept only where a fit without one size can still carry it.
std::vector<CostTerm> choose_terms(const std::vector<Sample>& samples, std::size_t sizes, std::vector<DroppedTerm>& dropped,
                                   bool checked = true) {
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
  // The folio term bends the line at the page size; it is carried only where
  // a fit without one size still has more sizes than terms, so that leaving
  // one size out checks it rather than solves for it exactly (three sizes
  // for three terms fit any three points, noise included).
  if (checked && !kept.empty() && kept.back() == CostTerm::Folios && sizes < kept.size() + 2) {
    dropped.push_back({CostTerm::Folios, "too few sizes to check it with one size left out"});
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
      per_byte[t] = results::median(v);
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

CostFit fit_group(const std::string& key_method, const results::Result& first, std::vector<Sample> samples,
                  const ModelOptions& o, std::uint64_t group_seed) {
  CostFit f;
  f.method = key_method;
  f.op = std::string(results::to_string(first.op));
  f.column = column_of(first);
  f.flush = io::to_string(first.sync);
  f.compared_flush = io::to_string(io::unresolved(first.sync));
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
      // The fit without the size is made as any fit is, its terms (of the
      // full fit's) chosen from its own records: a term the others cannot tell from the rest
      // (the folio term with no size left on one side of a page) is dropped,
      // not left to whichever of two equal lines the solver meets first.
      std::vector<Sample> others;
      for (const auto& s : samples)
        if (s.point.size != size) others.push_back(s);
      std::vector<DroppedTerm> unused;
      std::vector<CostTerm> kept = choose_terms(others, f.sizes.size() - 1, unused, false);
      std::erase_if(kept, [&](CostTerm t) { return std::find(terms.begin(), terms.end(), t) == terms.end(); });
      TermCounts c = spread(kept, robust_fit(rows_of(others, kept, all, none, false), kept.size()));
      for (auto& pt : f.points)
        if (pt.size == size) {
          pt.loo_predicted_s = predicted(c, pt.counts);
          pt.loo_extrapolated = size == f.sizes.front() || size == f.sizes.back();
          errors.push_back(std::fabs(*pt.loo_predicted_s - pt.measured_s) / pt.measured_s);
        }
    }
    std::sort(errors.begin(), errors.end());
    f.loo_median_abs_error = results::quantile_sorted(errors, 0.5);
    f.loo_p90_abs_error = results::quantile_sorted(errors, 0.9);
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
      if (a.op != b.op || a.column != b.column || a.compared_flush != b.compared_flush) continue;
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
        x.flush = a.compared_flush;
        x.below = c.a_below ? a.method : b.method;
        x.above = c.a_below ? b.method : a.method;
        x.size_bytes = found.empty() ? Interval{c.size, c.size, c.size} : interval_of(c.size, found);
        x.resamples_crossing = share;
        m.crossovers.push_back(x);
      }
    }
}

}  // namespace costfit

std::string_view to_string(CostTerm t) {
  switch (t) {
    case CostTerm::Calls: return "calls";
    case CostTerm::Bytes: return "bytes";
    case CostTerm::Faults: return "faults";
    case CostTerm::Flushes: return "flushes";
    case CostTerm::SystemCalls: return "system_calls";
    case CostTerm::Folios: return "folios";
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

namespace costfit {

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // op, column, flush, method

// A page-aligned buffer and the heap one (64 B into its page: io/buffer.h)
// cost the same through the page cache, per call and per byte (docs/model.md
// has the figures), so their records are one fit; O_DIRECT keeps the buffer
// in the key.
Key key_of(const results::Result& r) {
  std::string method = r.cache == results::CacheState::Direct ? method_label(r) : r.method;
  if (std::string q = queue_label(r); !q.empty()) method += " " + q;
  return {std::string(results::to_string(r.op)), column_of(r), io::to_string(r.sync), method};
}

}  // namespace costfit

const CostFit* fit_of(const CostModel& m, const results::Result& r) {
  const auto [op, column, flush, method] = costfit::key_of(r);
  for (const auto& f : m.fits)
    if (f.method == method && f.op == op && f.column == column && f.flush == flush) return &f;
  return nullptr;
}

std::optional<double> modeled_seconds_per_pass(const CostModel& m, const results::Result& r) {
  const CostFit* f = costfit::sweepable(r) ? fit_of(m, r) : nullptr;
  if (!f || r.block_size < f->sizes.front() || r.block_size > f->sizes.back()) return std::nullopt;
  const double s = f->predict(costfit::counts_of(r));
  return s > 0 ? std::optional<double>(s) : std::nullopt;
}

CostModel fit_cost_model(const std::vector<results::Result>& records, const ModelOptions& o) {
  std::map<costfit::Key, std::pair<const results::Result*, std::vector<costfit::Sample>>> groups;
  for (const auto& r : records) {
    if (!costfit::sweepable(r)) continue;
    const costfit::Key key = costfit::key_of(r);
    costfit::Sample s;
    s.point.size = r.block_size;
    s.point.file_size = r.file_size;
    s.point.counts = costfit::counts_of(r);
    const double share = costfit::own_core_share(r);
    for (double x : r.samples_s) s.pass_s.push_back(x * share / passes(r));
    s.point.measured_s = results::median(s.pass_s);
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

}  // namespace iolab::report
