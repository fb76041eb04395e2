// The cost model as a person and a script read it (cost_model.h): per fit
// its coefficients in ns per call, GB/s, µs per fault and ms per flush with
// intervals, the crossovers and the validation; JSON with the same names.
#include "iolab/report/cost_model.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>

#include "common.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace costfit {

// A coefficient in the unit a person reads: ns per call, GB/s for the byte
// term (its inverse: the bounds swap), µs per fault, ms per flush.
struct Readable {
  const char* name;  // the JSON name
  const char* unit;  // after the figure
  double factor;     // seconds * factor; 0: the byte term's inverse
};
constexpr Readable kReadable[kCostTerms] = {
    {"ns_per_call", "ns/call", 1e9}, {"gb_per_s", "GB/s", 0}, {"us_per_fault", "µs/fault", 1e6}, {"ms_per_flush", "ms/flush", 1e3},
    {"ns_per_system_call", "ns/syscall", 1e9}, {"us_per_folio", "µs/folio", 1e6}};

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
                     "64 B..8 MiB warm and cold reads and buffered writes: median {}, p90 {} over {} points "
                     "({} of them a fit's smallest or largest size, predicted by extrapolation)",
                     pct(v.loo_median_abs_error), pct(v.loo_p90_abs_error), v.points, pct(v.range_loo_median_abs_error),
                     pct(v.range_loo_p90_abs_error), v.range_points, v.range_extrapolated_points);
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
                        {"faults", p.counts[2]}, {"flushes", p.counts[3]}, {"system_calls", p.counts[4]},
                        {"folios", p.counts[5]},                        {"measured_s", p.measured_s},
                        {"fitted_s", p.fitted_s}, {"loo_predicted_s", optional_json(p.loo_predicted_s)},
                        {"loo_extrapolated", p.loo_extrapolated}});
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
  return {{"formula", "time per pass = calls x c_call + bytes x c_byte + faults x c_fault + flushes x c_flush + system_calls x c_syscall + folios x c_folio"},
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
              {"extrapolated_points", v.range_extrapolated_points},
              {"loo_median_abs_error", optional_json(v.range_loo_median_abs_error)},
              {"loo_p90_abs_error", optional_json(v.range_loo_p90_abs_error)}}}}}};
}

std::string format_text(const CostModel& m) {
  using namespace costfit;
  std::string out = fmt::format(
      "Time per pass = calls x c_call + bytes x c_byte + faults x c_fault + flushes x c_flush + system calls x "
      "c_syscall + folios x c_folio, fitted per method "
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
    t.add({"METHOD", "PER CALL", "BYTE TERM", "PER FAULT", "PER FLUSH", "PER SYSCALL", "PER FOLIO", "LOO ERR MEDIAN", "P90", "SIZES"});
    std::vector<std::string> notes;
    for (std::size_t k = i; k < j; ++k) {
      const CostFit& f = m.fits[k];
      std::vector<std::string> row{visible(f.method), "-", "-", "-", "-", "-", "-", "-", "-", size_range(f)};
      for (const auto& c : f.terms) row[1 + static_cast<std::size_t>(c.term)] = figure(c.term, c.seconds);
      if (f.loo_median_abs_error) row[1 + kCostTerms] = error_text(*f.loo_median_abs_error);
      if (f.loo_p90_abs_error) row[2 + kCostTerms] = error_text(*f.loo_p90_abs_error);
      t.add(std::move(row));
      if (f.missing) notes.push_back(visible(f.method) + ": " + missing_term_text(f));
      for (const auto& d : f.dropped)
        // System calls that are the calls (read, pread) are the usual case, not news.
        if ((d.reason.rfind("proportional", 0) == 0 && d.term != CostTerm::SystemCalls) || d.reason.rfind("too few", 0) == 0)
          notes.push_back(fmt::format("{}: {} not fitted: {}", visible(f.method), to_string(d.term), d.reason));
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
