// The one timed-pass engine (engine.h): measure() runs a workload's
// repetitions at once, Measurement one at a time (both through the steps in
// measurement.h); one statistics-and-warnings function for every record.
#include "iolab/harness/engine.h"

#include <cmath>
#include <exception>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "measurement.h"

namespace iolab::harness {

// ---- statistics and warnings -----------------------------------------------------------

void add_statistics_warnings(results::Result& r) {
  if (r.samples_s.empty()) return;
  results::Summary s = results::summarize(r.samples_s);
  if (s.min < results::thresholds::kTooShortSeconds) {
    std::string text = "timed repetitions too short to trust (shortest " + format_duration(s.min) + " < " +
                       format_duration(results::thresholds::kTooShortSeconds) + ", " + std::to_string(r.passes) +
                       (r.passes == 1 ? " pass" : " passes") + " each); ";
    // The engine capped the passes because the untimed work around each
    // pass (cache state, checks, files) used up --max-time: say so, with the cost.
    if (r.extra.contains("untimed_s_per_pass"))
      text += "passes too short to time within --max-time, which counts the untimed work around each (" +
              format_duration(r.extra["timed_s_per_pass"].get<double>()) + " timed, " +
              format_duration(r.extra["untimed_s_per_pass"].get<double>()) +
              " untimed per pass); allow more with --max-time or a larger --size";
    else
      text += "allow more with --max-time or a larger --size";
    r.warn(results::WarningKind::TooShort, text, {"shortest " + format_duration(s.min)});
  }
  if (!s.outliers.empty())
    r.warn(results::WarningKind::Outliers,
           std::to_string(s.outliers.size()) + " of " + std::to_string(s.n) +
               " repetitions are outliers (median absolute deviation rule); consider more --reps or a quieter machine",
           {std::to_string(s.outliers.size()) + " of " + std::to_string(s.n)});
}

// ---- measure ---------------------------------------------------------------------------

void check_settings(const EngineSettings& s) {
  if (s.reps == 0) throw UsageError("--reps 0", "at least one timed repetition is needed");
  if (s.warmup == 0 && s.min_time > 0)
    throw UsageError("--warmup 0", "with --min-time above 0 a warm-up pass sets the passes per repetition; give "
                                   "--warmup 1 or more, or --min-time 0 (one pass per repetition)");
  if (!(s.min_time >= 0) || !std::isfinite(s.min_time)) throw UsageError("--min-time", "must be a finite number >= 0");
  if (!(s.max_time >= 0) || !std::isfinite(s.max_time)) throw UsageError("--max-time", "must be a finite number >= 0");
}

bool measure(Workload& workload, Team& team, const EngineSettings& settings, results::Result& record) {
  Measurement::State s(workload, team, settings, record);
  try {
    if (!s.begin()) return false;
    unsigned recalibrations = 0;
    for (unsigned rep = 0; rep < settings.reps; ++rep) {
      Measurement::State::Repetition r = s.timed_repetition();
      // A recalibration takes the repetitions so far as warm-ups.
      const unsigned before = s.passes;
      if (s.recalibrate(r, recalibrations)) {
        s.total += (rep + 1) * before;
        s.reps.clear();
        rep = static_cast<unsigned>(-1);  // the loop's ++ starts the repetitions again
        continue;
      }
      s.reps.push_back(r);
    }
    record.passes = s.passes;
    s.latency_pass();
    s.verification_after_timing();
  } catch (const SkipExperiment& skip) {
    s.skip(skip);
    return false;
  } catch (...) {
    s.teardown_quietly();
    throw;
  }
  s.teardown();
  if (!team.reports()) return true;
  s.figures();
  return true;
}

// ---- one repetition at a time -----------------------------------------------------------

Measurement::Measurement(Workload& workload, Team& team, EngineSettings settings, results::Result& record)
    : s_(std::make_unique<State>(workload, team, std::move(settings), record)) {}

Measurement::~Measurement() {
  if (s_ && s_->started) s_->teardown_quietly();
}

template <typename F>
bool Measurement::guarded(F&& step) {
  if (skipped_) return false;
  try {
    if (step()) return true;
  } catch (const SkipExperiment& skip) {
    s_->skip(skip);
  } catch (...) {
    s_->teardown_quietly();
    throw;
  }
  skipped_ = true;
  return false;
}

bool Measurement::start() {
  return guarded([&] {
    s_->calibration_reps = std::max(1u, s_->settings.calibration_reps);  // they come out of max_time too
    if (!s_->begin()) return false;
    // Calibration repetitions, not recorded: every recorded repetition has
    // the same passes, whatever the candidates' turns in between.
    unsigned recalibrations = 0;
    for (unsigned i = 0; i < s_->calibration_reps; ++i)
      while (s_->recalibrate(s_->timed_repetition(), recalibrations)) {
      }
    return true;
  });
}

bool Measurement::repetition() { return repetition_part(s_->passes); }

unsigned Measurement::passes() const { return s_->passes; }

unsigned Measurement::passes_left() const {
  return s_->passes - static_cast<unsigned>(s_->partial.pass_seconds.size());
}

bool Measurement::repetition_part(unsigned count) {
  return guarded([&] {
    for (unsigned i = 0; i < count && passes_left() > 0; ++i) s_->timed_pass_into(s_->partial);
    if (passes_left() == 0) {
      s_->reps.push_back(std::move(s_->partial));
      s_->partial = State::Repetition{};
    }
    return true;
  });
}

void Measurement::abandon_repetition() { s_->partial = State::Repetition{}; }

unsigned Measurement::repetitions() const { return static_cast<unsigned>(s_->reps.size()); }

std::vector<double> Measurement::rates() const {
  std::vector<double> out;
  for (const auto& r : s_->reps) {
    double work = static_cast<double>(r.tally.bytes ? r.tally.bytes : r.tally.ops);
    out.push_back(r.seconds > 0 ? work / r.seconds : 0);
  }
  return out;
}

double Measurement::shortest_seconds() const {
  double out = 0;
  for (const auto& r : s_->reps) out = out == 0 ? r.seconds : std::min(out, r.seconds);
  return out;
}

results::Result Measurement::provisional() const {
  results::Result r = s_->record;
  r.samples_s.clear();
  for (const auto& rep : s_->reps) r.samples_s.push_back(rep.seconds);
  r.reps = static_cast<unsigned>(r.samples_s.size());
  r.passes = s_->passes;
  if (!s_->reps.empty()) {
    r.bytes = s_->reps.front().tally.bytes;
    r.ops = s_->reps.front().tally.ops;
  }
  r.verified = s_->settings.verify;
  s_->workload.describe(r);
  return r;
}

bool Measurement::finish() {
  if (skipped_) return false;
  if (!guarded([&] {
        s_->latency_pass();
        s_->verification_after_timing();
        s_->teardown();
        return true;
      }))
    return false;
  if (s_->reps.empty()) {
    s_->record.skipped = "no repetition was run";
    return false;
  }
  if (s_->team.reports()) s_->figures();
  return true;
}

}  // namespace iolab::harness
