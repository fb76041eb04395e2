// The steps of measuring one workload (engine.cpp's measure() and
// Measurement): setup and verification, warm-ups that size a repetition's
// passes within min_time and max_time, timed repetitions and their
// recalibration, the latency pass, and the figures written to the record.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/engine.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"

namespace iolab::harness {

// The steps of measuring one workload, shared by measure() (all repetitions
// at once) and Measurement (one repetition at a time).
struct Measurement::State {
  Workload& workload;
  Team& team;
  EngineSettings settings;
  results::Result& record;
  unsigned done = 0, total = 0;  // passes run so far and expected in all, for progress
  bool latency = false, verify_pass = false, verify_after = false;
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

  State(Workload& w, Team& t, EngineSettings s, results::Result& r) : workload(w), team(t), settings(std::move(s)), record(r) {}

  double now() const {
    if (settings.clock) return settings.clock();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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
  // it, so a budget of the timed part alone would overrun max_time many times).
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
    verify_after = verify_pass && workload.verifies_after_timing();
    total = (verify_pass ? 1 : 0) + (verify_after ? 1 : 0) + settings.warmup + settings.reps + (latency ? 1 : 0);
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
    r.tally += t.tally;
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
  // headroom, when min_time asked for that much: passes a little faster
  // than calibrated would otherwise leave repetitions under that length.
  double enough() const {
    const double bound = 0.75 * settings.min_time;
    return settings.min_time >= results::thresholds::kTooShortSeconds
               ? std::max(bound, results::thresholds::kTooShortHeadroom * results::thresholds::kTooShortSeconds)
               : bound;
  }
  bool recalibrate(const Repetition& r, unsigned& recalibrations) {
    if (recalibrations >= results::thresholds::kMaxRecalibrations || settings.min_time <= 0) return false;
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
    if (all.count() > 0) record.latency_ns = results::latency_of(all, workload.latency_source());
  }

  // After the timed and latency passes (Workload::verifies_after_timing).
  void verification_after_timing() {
    if (verify_after) one_pass(PassKind::Verify, DataCheck::Full);
  }

  // Figures: medians over repetitions; samples are repetitions' wall times.
  void figures() {
    std::vector<double> secs, first, minf, majf, vcs, ivcs, sr, sw, dr, dw, calls, kernel_calls;
    std::vector<results::CpuTime> cpu;
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
    if (!pass_seconds.empty()) record.pass_s = results::pass_spread(pass_seconds);
    record.reps = static_cast<unsigned>(secs.size());
    record.bytes = reps.front().tally.bytes;
    record.ops = reps.front().tally.ops;
    const results::CpuTime median_rep = results::median_cpu(cpu);
    record.user_s = median_rep.user_s;
    record.sys_s = median_rep.sys_s;
    record.minor_faults = static_cast<std::int64_t>(results::median(minf));
    record.major_faults = static_cast<std::int64_t>(results::median(majf));
    record.voluntary_ctx = static_cast<std::int64_t>(results::median(vcs));
    record.involuntary_ctx = static_cast<std::int64_t>(results::median(ivcs));
    record.storage_read_bytes = static_cast<std::uint64_t>(results::median(sr));
    record.dirtied_bytes = static_cast<std::uint64_t>(results::median(sw));
    if (!reps.empty() && reps.front().usage.have_device) {
      record.device_read_bytes = static_cast<std::uint64_t>(results::median(dr));
      record.device_write_bytes = static_cast<std::uint64_t>(results::median(dw));
    }
    record.io_calls = static_cast<std::uint64_t>(results::median(calls));
    if (!reps.empty() && reps.front().usage.have_proc_io)
      record.extra["proc_io_syscalls"] = static_cast<std::uint64_t>(results::median(kernel_calls));
    if (team.workers() > 1) {
      // elbencho's pair: until the fastest worker ended, and until the slowest did.
      record.extra["first_done_s"] = results::median(first);
      record.extra["last_done_s"] = results::median(secs);
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

}  // namespace iolab::harness
