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
#include "iolab/harness/statistics.h"
#include "iolab/harness/thresholds.h"
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
  std::vector<std::exception_ptr> errors(workers_);
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
      if (!errors[w]) errors[w] = std::current_exception();
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
  if (s.min < thresholds::kTooShortSeconds)
    r.warn(WarningKind::TooShort,
           "timed repetitions too short to trust (shortest " + format_duration(s.min) + " < " +
               format_duration(thresholds::kTooShortSeconds) + ", " + std::to_string(r.passes) +
               (r.passes == 1 ? " pass" : " passes") + " each); allow more with --max-time or a larger --size",
           {"shortest " + format_duration(s.min)});
  if (!s.outliers.empty())
    r.warn(WarningKind::Outliers,
           std::to_string(s.outliers.size()) + " of " + std::to_string(s.n) +
               " repetitions are outliers (median absolute deviation rule); consider more --reps or a quieter machine",
           {std::to_string(s.outliers.size()) + " of " + std::to_string(s.n)});
}

// ---- measure ---------------------------------------------------------------------------

namespace {

// Passes run so far and expected in all, for progress.
struct Passes {
  unsigned done = 0, total = 0;
};

}  // namespace

void check_settings(const EngineSettings& s) {
  if (s.reps == 0) throw UsageError("--reps 0", "at least one timed repetition is needed");
  if (s.warmup == 0 && s.min_time > 0)
    throw UsageError("--warmup 0", "with --min-time above 0 a warm-up pass sets the passes per repetition; give "
                                   "--warmup 1 or more, or --min-time 0 (one pass per repetition)");
  if (!(s.min_time >= 0) || !std::isfinite(s.min_time)) throw UsageError("--min-time", "must be a finite number >= 0");
  if (!(s.max_time >= 0) || !std::isfinite(s.max_time)) throw UsageError("--max-time", "must be a finite number >= 0");
}

bool measure(Workload& workload, Team& team, const EngineSettings& settings, Result& record) {
  check_settings(settings);
  record.samples_s.clear();
  record.pass_s.reset();
  record.reps = 0;
  record.passes = 1;
  record.verified = false;
  record.threads = team.workers();

  Passes progress;
  const bool latency = settings.latency && workload.records_latency();
  const bool verify_pass = settings.verify && workload.has_verification_pass();
  progress.total = (verify_pass ? 1 : 0) + settings.warmup + settings.reps + (latency ? 1 : 0);
  auto one_pass = [&](PassKind kind, DataCheck check) {
    workload.set_data_check(check);
    workload.before_pass(kind);
    if (settings.on_pass_begin) settings.on_pass_begin(kind);
    PassTiming t = team.run(workload.pass(kind));
    workload.after_pass(kind);
    if (settings.on_pass_end) settings.on_pass_end(kind);
    ++progress.done;
    if (settings.on_pass) settings.on_pass(progress.done, progress.total);
    return t;
  };

  struct Repetition {
    double seconds = 0, first_done = 0;
    std::vector<double> pass_seconds;  // each pass, timed by its own clock pair
    Usage usage;
    WorkerTally tally;
  };
  std::vector<Repetition> reps;
  try {
    if (auto why = workload.setup()) {
      record.skipped = *why;
      workload.teardown();
      return false;
    }
    if (verify_pass) one_pass(PassKind::Verify, DataCheck::Full);
    // The estimate is the fastest warm-up pass. A first pass that paid for
    // page faults or a cold TLB promises longer passes than the timed ones
    // get and leaves repetitions short of min_time, so passes shorter than
    // min_time get at least two warm-up passes, and more until they add up to
    // a quarter of min_time (at most 64).
    const unsigned warmups = settings.warmup;  // 0 only with min_time 0 (check_settings)
    double estimate = 0, warmed = 0;
    auto more_warmup = [&](unsigned done) {
      if (done < warmups) return true;
      bool short_pass = settings.min_time > 0 && estimate < settings.min_time;
      return short_pass && done < 64 && (done < 2 || warmed < settings.min_time / 4);
    };
    for (unsigned i = 0; more_warmup(i); ++i) {
      if (i >= warmups) ++progress.total;
      // (The team's longest figure, so that every MPI rank decides alike.)
      double seconds = team.max(one_pass(PassKind::Warmup, DataCheck::Tail).seconds);
      estimate = i == 0 ? seconds : std::min(estimate, seconds);
      warmed += seconds;
    }
    // Passes per repetition: enough for min_time, within max_time for all of them.
    auto passes_for = [&](double per_pass) {
      if (settings.min_time <= 0 || per_pass <= 0 || per_pass >= settings.min_time) return 1u;
      double want = std::ceil(settings.min_time / per_pass);
      double budget = std::floor(settings.max_time / (per_pass * settings.reps));
      return static_cast<unsigned>(std::clamp(std::min(want, budget), 1.0, 1e6));
    };
    // Every process of a team must run the same number of passes.
    unsigned passes = static_cast<unsigned>(team.max(static_cast<double>(passes_for(estimate))));
    progress.total += settings.reps * (passes - 1);
    unsigned recalibrations = 0;
    for (unsigned rep = 0; rep < settings.reps; ++rep) {
      Repetition r;
      double fastest = 0;
      for (unsigned p = 0; p < passes; ++p) {
        PassTiming t = one_pass(PassKind::Timed, p == 0 ? DataCheck::Full : DataCheck::Tail);
        fastest = p == 0 ? t.seconds : std::min(fastest, t.seconds);
        r.seconds += t.seconds;
        r.pass_seconds.push_back(t.seconds);
        r.first_done += t.first_done_s;
        r.usage += t.usage;
        r.tally = add(r.tally, t.tally);
      }
      // Warm-up passes can be slower than timed ones by more than their
      // minimum shows (a file's first allocation, memory the allocator has
      // not recycled yet, a neighbour's load), and passes can speed up after
      // the first repetition too: when a repetition's fastest pass says a
      // repetition of such passes would fall under 3/4 of min_time, the
      // repetitions so far are taken as warm-ups and the passes recomputed
      // from that pass (a few times at most: a pass that keeps speeding up,
      // such as overwrites while writeback settles, may need more than one).
      if (recalibrations < thresholds::kMaxRecalibrations && settings.min_time > 0 &&
          team.max(fastest) * passes < 0.75 * settings.min_time) {
        ++recalibrations;
        unsigned more = static_cast<unsigned>(team.max(static_cast<double>(passes_for(team.max(fastest)))));
        if (more > passes) {
          progress.total += (rep + 1) * passes + settings.reps * (more - passes);
          passes = more;
          reps.clear();
          rep = static_cast<unsigned>(-1);  // the loop's ++ starts the repetitions again
          continue;
        }
      }
      reps.push_back(r);
    }
    record.passes = passes;
    if (latency) {
      auto& hists = workload.latency_histograms();
      hists.assign(team.workers(), LatencyHistogram{});
      one_pass(PassKind::Latency, DataCheck::Full);
      LatencyHistogram all;
      for (const auto& h : hists) all.merge(h);
      team.combine(all);
      if (all.count() > 0) record.latency_ns = latency_of(all, workload.latency_source());
    }
  } catch (const SkipExperiment& skip) {
    workload.teardown();
    record.skipped = skip.what();
    record.samples_s.clear();
    record.latency_ns.reset();
    return false;
  } catch (...) {
    try {
      workload.teardown();
    } catch (...) {  // the first error is the one worth reporting
    }
    throw;
  }
  workload.teardown();
  if (!team.reports()) return true;

  // Figures: medians over repetitions; samples are repetitions' wall times.
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
  record.verified = settings.verify;
  workload.describe(record);
  add_statistics_warnings(record);
  return true;
}

}  // namespace iolab::harness
