// The one timed-pass engine (engine.h): passes on a team, repetitions of
// passes long enough to trust, a separate latency pass, one aggregation of
// resource usage, one statistics-and-warnings function.
#include "iolab/harness/engine.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "iolab/base/units.h"

namespace iolab::harness {

// ---- teams -------------------------------------------------------------------------

LocalTeam::LocalTeam(unsigned workers) : workers_(workers) {
  if (workers == 0) throw UsageError("0 workers", "a pass needs at least one worker");
}

std::vector<unsigned> LocalTeam::local_workers() const {
  std::vector<unsigned> all(workers_);
  for (unsigned w = 0; w < workers_; ++w) all[w] = w;
  return all;
}

std::string LocalTeam::clock_description() const {
  return workers_ == 1 ? "steady clock around the timed region"
                       : "steady clock from the start barrier's release to the last thread's end";
}

namespace {

using Clock = std::chrono::steady_clock;

WorkerTally add(WorkerTally a, const WorkerTally& b) {
  a.bytes += b.bytes;
  a.ops += b.ops;
  a.io_calls += b.io_calls;
  return a;
}

}  // namespace

PassTiming LocalTeam::run(const PassBody& body) {
  PassTiming t;
  if (workers_ == 1) {
    // One worker: no thread, no barrier; the same clock reads as a thread pass.
    if (body.prepare) body.prepare(0);
    UsageMeter meter(UsageMeter::Scope::Process);
    std::exception_ptr error;
    meter.start();
    try {
      t.tally = body.timed(0);
    } catch (...) {
      error = std::current_exception();
    }
    t.usage = meter.stop();
    try {
      if (body.finish) body.finish(0);  // closes files, also after a failure
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    if (error) std::rethrow_exception(error);
    t.seconds = t.usage.seconds;
    t.worker_s = {t.seconds};
    t.first_done_s = t.last_done_s = t.seconds;
    return t;
  }

  UsageMeter meter(UsageMeter::Scope::Process);
  Clock::time_point start;
  // The completion steps run once, on one thread, while every worker waits:
  // the clock starts when the last worker arrives, and usage stops after the
  // last worker is done, so opening and closing files stay outside both.
  auto on_start = [&]() noexcept {
    meter.start();
    start = Clock::now();
  };
  auto on_end = [&]() noexcept { t.usage = meter.stop(); };
  std::barrier begin(static_cast<std::ptrdiff_t>(workers_), on_start);
  std::barrier end(static_cast<std::ptrdiff_t>(workers_), on_end);
  std::vector<Clock::time_point> done(workers_);
  std::vector<WorkerTally> tallies(workers_);
  // A worker that could not prepare (say, open its file: EMFILE) or failed
  // in its timed part is the cause; what finish then finds (a region no
  // worker wrote, since a pass with a worker missing is not run) is only a
  // consequence, reported when nothing came before it (issue 29 item 10).
  std::vector<std::exception_ptr> errors(workers_);
  std::vector<std::exception_ptr> finish_errors(workers_);
  std::atomic<bool> failed{false};

  auto worker = [&](unsigned w) {
    try {
      if (body.prepare) body.prepare(w);
    } catch (...) {
      errors[w] = std::current_exception();
      failed = true;
    }
    begin.arrive_and_wait();
    if (!failed.load()) {
      try {
        tallies[w] = body.timed(w);
      } catch (...) {
        errors[w] = std::current_exception();
        failed = true;
      }
    }
    done[w] = Clock::now();
    end.arrive_and_wait();
    try {
      if (body.finish) body.finish(w);  // closes files even after a failure
    } catch (...) {
      finish_errors[w] = std::current_exception();
      failed = true;
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(workers_);
  std::exception_ptr spawn_error;
  for (unsigned w = 1; w < workers_; ++w) {
    try {
      threads.emplace_back(worker, w);
    } catch (...) {
      // Workers that could not start leave both barriers, so the ones running are not stranded.
      spawn_error = std::current_exception();
      failed = true;
      for (unsigned missing = w; missing < workers_; ++missing) {
        begin.arrive_and_drop();
        end.arrive_and_drop();
      }
      break;
    }
  }
  worker(0);  // the calling thread is worker 0
  for (auto& th : threads) th.join();
  if (spawn_error) std::rethrow_exception(spawn_error);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (auto& e : finish_errors)
    if (e) std::rethrow_exception(e);

  t.worker_s.resize(workers_);
  for (unsigned w = 0; w < workers_; ++w) {
    t.worker_s[w] = std::chrono::duration<double>(done[w] - start).count();
    t.tally = add(t.tally, tallies[w]);
  }
  t.first_done_s = *std::min_element(t.worker_s.begin(), t.worker_s.end());
  t.last_done_s = *std::max_element(t.worker_s.begin(), t.worker_s.end());
  t.seconds = t.last_done_s;
  return t;
}

// ---- statistics and warnings -----------------------------------------------------------

void add_statistics_warnings(Result& r) {
  if (r.samples_s.empty()) return;
  Summary s = summarize(r.samples_s);
  if (s.min < thresholds::kTooShortSeconds) {
    std::string text = "timed repetitions too short to trust (shortest " + format_duration(s.min) + " < " +
                       format_duration(thresholds::kTooShortSeconds) + ", " + std::to_string(r.passes) +
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
    r.warn(WarningKind::TooShort, text, {"shortest " + format_duration(s.min)});
  }
  if (!s.outliers.empty())
    r.warn(WarningKind::Outliers,
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

// The steps of measuring one workload, shared by measure() (all repetitions
// at once) and Measurement (one repetition at a time).
struct Measurement::State {
  Workload& workload;
  Team& team;
  EngineSettings settings;
  Result& record;
  unsigned done = 0, total = 0;  // passes run so far and expected in all, for progress
  bool latency = false, verify_pass = false;
  unsigned passes = 1;
  bool started = false, torn_down = false;
  // The budget: wall time since begin() on the engine's clock, and what the
  // passes were sized from (a pass's timed part and all of it, untimed work
  // included), kept for the record when max_time capped the passes.
  double started_at = 0, last_wall = 0;
  double sized_timed = 0, sized_wall = 0;
  bool capped = false;
  unsigned calibration_reps = 0;  // unrecorded repetitions that follow the sizing (Measurement::start)

  struct Repetition {
    double seconds = 0, first_done = 0;
    double wall = 0;                   // every pass from before_pass to after_pass, engine clock
    std::vector<double> pass_seconds;  // each pass, timed by its own clock pair
    Usage usage;
    WorkerTally tally;
    double fastest = 0;                // its fastest pass
  };
  std::vector<Repetition> reps;

  State(Workload& w, Team& t, EngineSettings s, Result& r) : workload(w), team(t), settings(std::move(s)), record(r) {}

  double now() const {
    if (settings.clock) return settings.clock();
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  }
  // Wall time spent on this experiment, the team's longest (MPI ranks decide alike).
  double spent() { return team.max(now() - started_at); }

  PassTiming one_pass(PassKind kind, DataCheck check) {
    const double wall_start = now();
    workload.set_data_check(check);
    workload.before_pass(kind);
    if (settings.on_pass_begin) settings.on_pass_begin(kind);
    PassTiming t = team.run(workload.pass(kind));
    workload.after_pass(kind);
    if (settings.on_pass_end) settings.on_pass_end(kind);
    last_wall = now() - wall_start;
    ++done;
    if (settings.on_pass) settings.on_pass(done, total);
    return t;
  }

  // Passes per repetition: enough for min_time (from the timed part of a
  // pass), and within what is left of max_time for all repetitions (from
  // the whole pass, untimed work included: for a tiny file that is most of
  // it, and budgeting the timed part alone made an experiment run 40-70
  // times max_time).
  unsigned passes_for(double per_pass, double wall_per_pass, double left) {
    if (settings.min_time <= 0 || per_pass <= 0 || per_pass >= settings.min_time) return 1u;
    double want = std::ceil(settings.min_time / per_pass);
    double whole = std::max(per_pass, wall_per_pass);
    double budget = std::floor(std::max(left, 0.0) / (whole * (settings.reps + calibration_reps)));
    sized_timed = per_pass;
    sized_wall = whole;
    capped = budget < want;
    return static_cast<unsigned>(std::clamp(std::min(want, budget), 1.0, 1e6));
  }

  // Setup, verification and warm-up; false when the workload is skipped.
  bool begin() {
    check_settings(settings);
    started_at = now();
    record.samples_s.clear();
    record.pass_s.reset();
    record.reps = 0;
    record.passes = 1;
    record.verified = false;
    record.threads = team.workers();
    latency = settings.latency && workload.records_latency();
    verify_pass = settings.verify && workload.has_verification_pass();
    total = (verify_pass ? 1 : 0) + settings.warmup + settings.reps + (latency ? 1 : 0);
    started = true;
    if (auto why = workload.setup()) {
      record.skipped = *why;
      teardown();
      return false;
    }
    if (verify_pass) one_pass(PassKind::Verify, DataCheck::Full);
    // The estimate is the fastest warm-up pass. A first pass that paid for
    // page faults or a cold TLB promises longer passes than the timed ones
    // get and leaves repetitions short of min_time, so passes shorter than
    // min_time get at least two warm-up passes, and more until they add up to
    // a quarter of min_time (at most 64).
    const unsigned warmups = settings.warmup;  // 0 only with min_time 0 (check_settings)
    double estimate = 0, warmed = 0, wall_total = 0;
    unsigned warmed_passes = 0;
    auto more_warmup = [&](unsigned n) {
      if (n < warmups) return true;
      bool short_pass = settings.min_time > 0 && estimate < settings.min_time;
      return short_pass && n < 64 && (n < 2 || warmed < settings.min_time / 4) && spent() < settings.max_time;
    };
    for (unsigned i = 0; more_warmup(i); ++i) {
      if (i >= warmups) ++total;
      // (The team's longest figure, so that every MPI rank decides alike.)
      double seconds = team.max(one_pass(PassKind::Warmup, DataCheck::Tail).seconds);
      double wall = team.max(last_wall);
      estimate = i == 0 ? seconds : std::min(estimate, seconds);
      wall_total += wall;
      ++warmed_passes;
      warmed += seconds;
    }
    // Every process of a team must run the same number of passes. The
    // budget takes the warm-ups' mean whole pass, not the fastest: the
    // untimed work varies with the machine's load, and the fastest
    // promised more passes than fitted.
    const double left = settings.max_time - spent();
    passes = static_cast<unsigned>(team.max(static_cast<double>(passes_for(estimate, wall_total / warmed_passes, left))));
    total += settings.reps * (passes - 1);
    return true;
  }

  // The next timed pass of repetition `r` (its first checks every byte).
  void timed_pass_into(Repetition& r) {
    const bool first = r.pass_seconds.empty();
    PassTiming t = one_pass(PassKind::Timed, first ? DataCheck::Full : DataCheck::Tail);
    r.fastest = first ? t.seconds : std::min(r.fastest, t.seconds);
    r.seconds += t.seconds;
    r.wall += last_wall;
    r.pass_seconds.push_back(t.seconds);
    r.first_done += t.first_done_s;
    r.usage += t.usage;
    r.tally = add(r.tally, t.tally);
  }
  Repetition timed_repetition() {
    Repetition r;
    for (unsigned p = 0; p < passes; ++p) timed_pass_into(r);
    return r;
  }
  // Measurement's repetition under way, when it runs in parts.
  Repetition partial;

  // Warm-up passes can be slower than timed ones by more than their minimum
  // shows (a file's first allocation, memory the allocator has not recycled
  // yet, a neighbour's load), and passes can speed up after the first
  // repetition too: when a repetition's fastest pass says a repetition of
  // such passes would fall under 3/4 of min_time, the passes are recomputed
  // from that pass. Returns whether they grew (a few times at most: a pass
  // that keeps speeding up, such as overwrites while writeback settles, may
  // need more than one).
  // The first repetition after sizing also shows what a timed pass costs
  // whole (timed passes prove the cache state, warm-ups do not): when the
  // passes would overrun what is left of max_time by a quarter, they are
  // recomputed from it, fewer, once.
  // A repetition long enough not to be redone: 3/4 of min_time, but never
  // under the length below which its record is too short to trust, with
  // headroom, when min_time asked for that much (at a min_time of 55 ms,
  // 3/4 made repetitions of 42-50 ms that the decision table then left out;
  // at exactly 50 ms, passes a little faster than calibrated still did).
  double enough() const {
    const double bound = 0.75 * settings.min_time;
    return settings.min_time >= thresholds::kTooShortSeconds
               ? std::max(bound, thresholds::kTooShortHeadroom * thresholds::kTooShortSeconds)
               : bound;
  }
  bool recalibrate(const Repetition& r, unsigned& recalibrations) {
    if (recalibrations >= thresholds::kMaxRecalibrations || settings.min_time <= 0) return false;
    const double left = settings.max_time - spent();
    const double wall_per_pass = team.max(r.wall / passes);
    const bool overrun = reps.empty() && recalibrations == 0 && left > 0 &&
                         team.max(r.wall) * (settings.reps + calibration_reps - 1) > 1.25 * left;
    if (!overrun && team.max(r.fastest) * passes >= enough()) return false;
    // Redone repetitions must fit in what is left of max_time.
    if (left <= 0) return false;
    ++recalibrations;
    const double kept_timed = sized_timed, kept_wall = sized_wall;
    const bool kept_capped = capped;
    unsigned more =
        static_cast<unsigned>(team.max(static_cast<double>(passes_for(team.max(r.fastest), wall_per_pass, left))));
    if (overrun && more < passes) {
      total -= settings.reps * (passes - more);
      passes = more;
      return true;
    }
    if (more <= passes) {  // the passes stay, and so does what they were sized from
      sized_timed = kept_timed, sized_wall = kept_wall, capped = kept_capped;
      return false;
    }
    total += settings.reps * (more - passes);
    passes = more;
    return true;
  }

  void teardown() {
    if (torn_down) return;
    torn_down = true;
    workload.teardown();
  }
  void teardown_quietly() noexcept {
    try {
      teardown();
    } catch (...) {  // the first error is the one worth reporting
    }
  }

  void skip(const SkipExperiment& skip) {
    teardown_quietly();
    record.skipped = skip.what();
    record.samples_s.clear();
    record.latency_ns.reset();
    reps.clear();
  }

  void latency_pass() {
    if (!latency) return;
    auto& hists = workload.latency_histograms();
    hists.assign(team.workers(), LatencyHistogram{});
    one_pass(PassKind::Latency, DataCheck::Full);
    LatencyHistogram all;
    for (const auto& h : hists) all.merge(h);
    team.combine(all);
    if (all.count() > 0) record.latency_ns = latency_of(all, workload.latency_source());
  }

  // Figures: medians over repetitions; samples are repetitions' wall times.
  void figures() {
    std::vector<double> secs, first, minf, majf, vcs, ivcs, sr, sw, dr, dw, calls, kernel_calls;
    std::vector<CpuTime> cpu;
    std::vector<double> pass_seconds;
    for (const Repetition& r : reps) {
      pass_seconds.insert(pass_seconds.end(), r.pass_seconds.begin(), r.pass_seconds.end());
      secs.push_back(r.seconds);
      first.push_back(r.first_done);
      cpu.push_back({r.usage.user_s, r.usage.sys_s});
      minf.push_back(static_cast<double>(r.usage.minor_faults));
      majf.push_back(static_cast<double>(r.usage.major_faults));
      vcs.push_back(static_cast<double>(r.usage.voluntary_ctx));
      ivcs.push_back(static_cast<double>(r.usage.involuntary_ctx));
      sr.push_back(static_cast<double>(r.usage.storage_read_bytes));
      sw.push_back(static_cast<double>(r.usage.dirtied_bytes));
      dr.push_back(static_cast<double>(r.usage.device_read_bytes));
      dw.push_back(static_cast<double>(r.usage.device_write_bytes));
      kernel_calls.push_back(static_cast<double>(r.usage.syscalls_read + r.usage.syscalls_write));
      calls.push_back(static_cast<double>(workload.kernel_counts_calls() ? r.usage.syscalls_read + r.usage.syscalls_write
                                                                         : r.tally.io_calls));
    }
    record.passes = passes;
    record.samples_s = secs;
    if (!pass_seconds.empty()) record.pass_s = pass_spread(pass_seconds);
    record.reps = static_cast<unsigned>(secs.size());
    record.bytes = reps.front().tally.bytes;
    record.ops = reps.front().tally.ops;
    const CpuTime median_rep = median_cpu(cpu);
    record.user_s = median_rep.user_s;
    record.sys_s = median_rep.sys_s;
    record.minor_faults = static_cast<std::int64_t>(median(minf));
    record.major_faults = static_cast<std::int64_t>(median(majf));
    record.voluntary_ctx = static_cast<std::int64_t>(median(vcs));
    record.involuntary_ctx = static_cast<std::int64_t>(median(ivcs));
    record.storage_read_bytes = static_cast<std::uint64_t>(median(sr));
    record.dirtied_bytes = static_cast<std::uint64_t>(median(sw));
    if (!reps.empty() && reps.front().usage.have_device) {
      record.device_read_bytes = static_cast<std::uint64_t>(median(dr));
      record.device_write_bytes = static_cast<std::uint64_t>(median(dw));
    }
    record.io_calls = static_cast<std::uint64_t>(median(calls));
    if (!reps.empty() && reps.front().usage.have_proc_io)
      record.extra["proc_io_syscalls"] = static_cast<std::uint64_t>(median(kernel_calls));
    if (team.workers() > 1) {
      // elbencho's pair: until the fastest worker ended, and until the slowest did.
      record.extra["first_done_s"] = median(first);
      record.extra["last_done_s"] = median(secs);
      record.extra["first_done_samples_s"] = first;
    }
    record.extra["clock"] = team.clock_description();
    if (capped) {
      record.extra["timed_s_per_pass"] = sized_timed;
      record.extra["untimed_s_per_pass"] = std::max(sized_wall - sized_timed, 0.0);
    }
    record.verified = settings.verify;
    workload.describe(record);
    add_statistics_warnings(record);
  }
};

bool measure(Workload& workload, Team& team, const EngineSettings& settings, Result& record) {
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

Measurement::Measurement(Workload& workload, Team& team, EngineSettings settings, Result& record)
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
    s_->calibration_reps = 1;  // the one below comes out of max_time too
    if (!s_->begin()) return false;
    // Calibration repetitions, not recorded: every recorded repetition has
    // the same passes, whatever the candidates' turns in between.
    unsigned recalibrations = 0;
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

Result Measurement::provisional() const {
  Result r = s_->record;
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
