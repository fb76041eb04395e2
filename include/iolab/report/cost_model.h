// Why, as a model (issue 42): per (method, op, cache column, flush policy),
// the time of one pass fitted as
//   calls x c_call + bytes x c_byte + faults x c_fault + flushes x c_flush
//     + system calls x c_syscall + folios x c_folio
// from the counts every record carries (docs/model.md). The fit is robust
// (Huber weights, iteratively reweighted, on relative residuals) and
// non-negative; its intervals come from a seeded bootstrap over each
// record's repetitions; each fit is checked by leaving one size out; where
// the residuals show a cache-size knee the model names the term it lacks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/decision/verdict.h"
#include "iolab/results/record.h"

namespace iolab::report {

// The counts a pass is charged for, in this order everywhere. Calls are the
// measured operation's (a `fread`, a `read`(2)); system calls are the ones
// that moved data under them (the record's `io_calls`): for stdio and
// iostream a read(2) per buffer, for io_uring an io_uring_enter per batch,
// for mmap the mapping. Where they are the calls (read, pread) the term is
// proportional to calls and dropped. Folios are the page-cache folios a
// buffered write(2) allocates as it extends a file: one per 4 KiB page for
// writes of a page or less, one per write up to 2 MiB for larger ones (the
// kernel sizes a new folio by the write), so a 1 KiB write pays a quarter of
// one and a 32 KiB write one, not eight (docs/model.md).
enum class CostTerm { Calls, Bytes, Faults, Flushes, SystemCalls, Folios };
inline constexpr std::size_t kCostTerms = 6;
std::string_view to_string(CostTerm t);  // "calls", "bytes", "faults", "flushes", "system_calls", "folios"
using TermCounts = std::array<double, kCostTerms>;

// An estimate with its bootstrap interval (2.5% and 97.5% of the resamples).
struct Interval {
  double estimate = 0, low = 0, high = 0;
};

struct CostCoefficient {
  CostTerm term = CostTerm::Calls;
  Interval seconds;  // seconds per call, per byte, per fault, per flush
};

// A term of the formula that this fit does not carry, and why: no record
// has the count, the count is noise, or it is proportional to a term kept
// (its cost is then inside that term's coefficient).
struct DroppedTerm {
  CostTerm term = CostTerm::Calls;
  std::string reason;
};

// One record as the fit saw it: counts per pass, median seconds per pass.
struct ModelPoint {
  std::uint64_t size = 0;  // bytes per call (the sweep's x)
  std::uint64_t file_size = 0;
  TermCounts counts{};
  double measured_s = 0;                   // median repetition / passes
  double fitted_s = 0;                     // the full fit's prediction from the counts
  std::optional<double> loo_predicted_s;   // predicted by the fit without this size
  // That size was the fit's smallest or largest: the prediction extrapolates
  // beyond the sizes the fit without it had.
  bool loo_extrapolated = false;
};

// What the residuals say the formula lacks. `term` is "bytes_above_knee"
// (a per-byte cost that grows past a size, e.g. a copy leaving a CPU
// cache) or "bytes_below_knee"; "unexplained" when the residuals are large
// and no single knee accounts for them.
struct MissingTerm {
  std::string term;
  std::uint64_t knee_bytes = 0;  // first size past the knee (0 when unexplained)
  std::uint64_t below_bytes = 0; // last size before it
  double extra_seconds_per_byte = 0;
  double residual_p90 = 0;            // |relative residual|, 90th percentile, of the fit without the term
  double residual_p90_with_term = 0;  // ... and with it
};

struct CostFit {
  std::string method, op, column, flush;
  // The flush policy as methods are compared at it (io::unresolved): a mapping's
  // msync and a file's fdatasync on one schedule are the same durability.
  std::string compared_flush;
  std::vector<CostCoefficient> terms;  // the terms it carries, in CostTerm order
  std::vector<DroppedTerm> dropped;
  std::vector<ModelPoint> points;      // sorted by size
  std::vector<std::uint64_t> sizes;    // distinct, ascending
  std::vector<TermCounts> counts_per_byte;  // per size (median over its records), aligned with `sizes`
  std::size_t repetitions = 0;
  // Leave-one-size-out |predicted - measured| / measured over the points;
  // unset when too few sizes remain to fit without one.
  std::optional<double> loo_median_abs_error, loo_p90_abs_error;
  std::optional<MissingTerm> missing;
  // Coefficients (seconds per unit, every term, 0 when not carried) of the
  // point fit and of each bootstrap resample.
  TermCounts coefficients{};
  std::vector<TermCounts> resamples;

  // Seconds per pass the model gives for these counts.
  double predict(const TermCounts& counts) const;
  // Seconds per byte the model predicts at `size` within the measured range,
  // the counts per byte interpolated (log-log) between the measured sizes;
  // `coef` is `coefficients` or a resample.
  std::optional<double> seconds_per_byte_at(double size, const TermCounts& coef) const;
};

// Where two methods of one (op, column, compared flush) trade places.
struct Crossover {
  std::string op, column, flush;  // flush: the fits' compared_flush
  std::string below, above;  // the cheaper method below the size, and above it
  Interval size_bytes;
  double resamples_crossing = 0;  // share of resamples that cross near the estimate
};

struct ModelValidation {
  std::size_t points = 0;  // left-out points over every fit
  std::optional<double> loo_median_abs_error, loo_p90_abs_error;
  // The same over 64 B..8 MiB, warm and cold reads and buffered writes (issue 42's bar).
  std::size_t range_points = 0;
  std::optional<double> range_loo_median_abs_error, range_loo_p90_abs_error;
  std::size_t range_extrapolated_points = 0;  // of range_points, those whose prediction extrapolates
};

struct CostModel {
  std::vector<CostFit> fits;
  std::vector<Crossover> crossovers;
  ModelValidation validation;
  unsigned resamples = 0;
  std::uint64_t seed = 0;
};

struct ModelOptions {
  unsigned resamples = 200;
  std::uint64_t seed = 42;
  std::size_t min_sizes = 3;  // a (method, op, column, flush) needs this many block sizes
  double crossover_min_share = 0.5;  // crossovers found in fewer resamples are not reported
};

// Records that can enter a fit: measured, read or write, one worker,
// sequential, from a sweep of at least `min_sizes` block sizes. Records of
// other kinds are ignored; an empty model means there was no sweep.
CostModel fit_cost_model(const std::vector<results::Result>& records, const ModelOptions& options = {});

// The fit a record belongs to (its method, op, cache column and flush
// policy, as the fits name them); null when the model has none.
const CostFit* fit_of(const CostModel& m, const results::Result& r);
// The seconds per pass the model gives for a record's own counts (the
// report's model line): from the fit of its (method, op, column, flush),
// within the block sizes that fit measured; none when no fit covers it.
std::optional<double> modeled_seconds_per_pass(const CostModel& m, const results::Result& r);

// The model as `iolab model --json` gives it (docs/model.md).
nlohmann::json to_json(const CostModel& m);
// Where a row of the decision map changes its pick between two measured
// sizes (the pick `below` at `from`, `above` at `to`), the model's crossover
// of the two methods (matched through their records), nearest the two sizes.
struct CrossoverCheck {
  std::string row;  // "read|none|warm"
  std::uint64_t from = 0, to = 0;
  std::string below, above;  // the decision's labels
  bool below_fitted = false, above_fitted = false;  // each has a fit in the model
  std::optional<Interval> model;  // the model's crossover of the pair, if any
  bool model_reversed = false;    // it has `above` cheaper below it
  bool between = false;           // in the same direction, strictly between `from` and `to`
  // The rounds told the two picks apart: neither is among the other
  // condition's survivors within the zone. A change between picks they
  // could not tell apart is listed, not counted: no crossover need lie there.
  bool told_apart = true;
};
std::vector<CrossoverCheck> check_crossovers(const CostModel& m, const decision::Decision& d,
                                             const std::vector<results::Result>& records);
// "Crossovers against the decision map: 3 of 4 pick changes the rounds told apart have ... (75%)", then one line per change.
std::string crossover_check_text(const std::vector<CrossoverCheck>& checks);
// {"changes", "told_apart", "between" (of those told apart), "share_between" (between / told_apart),
//  "rows": [{row, from, to, below, above, model (interval or null), between, told_apart}]}.
nlohmann::json to_json(const std::vector<CrossoverCheck>& checks);

// The per-machine profile `iolab model --save` writes (docs/model.md):
// `format` "iolab-model-profile", the machine (the identity fields of the
// results files' environment), the files it was fitted from, and the model
// as to_json gives it. Every source must come from one machine (hostname and
// CPU model), else UsageError.
inline constexpr std::string_view kModelProfileFormat = "iolab-model-profile";
struct ProfileSource {
  std::string file;
  const results::Environment* environment = nullptr;
};
struct ProfileMaker {
  std::string created;  // UTC, ISO 8601
  std::string iolab_version, git_commit;  // the build that fitted it
};
nlohmann::json profile_json(const CostModel& m, const std::vector<ProfileSource>& sources, const ProfileMaker& maker);
// Whether the first bytes of a file are a profile's (`--save` replaces only those).
bool is_model_profile(std::string_view head);

// The words both the console and the HTML report use: a coefficient with
// its interval in the unit a person reads ("380 (350..410) ns/call",
// "9.8 (9.1..10) GB/s"), a relative error ("4.2%", "<0.1%"), the missing
// term of a fit, a crossover ("read, warm, flush none: mmap below 2.1 KiB
// (1.8 KiB..2.5 KiB), pread above (97% of resamples)"), the validation.
std::string coefficient_text(CostTerm t, const Interval& seconds);
std::string error_text(double fraction);
std::string missing_term_text(const CostFit& f);
std::string crossover_text(const Crossover& c);
std::string validation_text(const ModelValidation& v);
// Tables for a person: coefficients with intervals (ns per call, GB/s,
// µs per fault, ms per flush), missing terms, crossovers, validation.
std::string format_text(const CostModel& m);

}  // namespace iolab::report
