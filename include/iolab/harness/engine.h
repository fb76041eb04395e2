// The one timed-pass engine. Every figure iolab reports comes from here,
// timed the same way: single runs, threads and MPI ranks alike.
//
// A *pass* is the workload done once (read the file once, write a fresh file
// once, run a store phase once) by every worker of a Team. Each worker
// prepares untimed, waits at a start barrier, runs its timed region, and
// records its end; the pass lasts from the start barrier's release to the
// last worker's end ("last done"; the first worker's end is "first done").
// There is exactly one clock read at each end of a pass, none per call.
//
// A *repetition* is `passes` passes back to back (untimed work between them,
// such as evicting the cache or creating a fresh file, is not counted in
// its time): the engine picks `passes` so that a repetition lasts at least
// min_time (Google Benchmark's min_time), within max_time of wall time for
// the whole experiment, untimed work included.
//
// Latency is never measured inside the repetitions: a separate pass times
// every call (or every request of a queued method), and the record says so.
//
// What each kind of experiment puts inside its timed region is written down
// once, in docs/results-format.md ("The timed region"), and every workload
// follows it (tests hold them to it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "iolab/base/histogram.h"
#include "iolab/results/record.h"
#include "iolab/harness/usage.h"

namespace iolab::harness {

// Why a pass runs. Verify: untimed, every byte read or written is checked on
// the path that is timed. Warmup: timed but not recorded (it also tells the
// engine how long one pass takes). Timed: a repetition's pass. Latency:
// every call timed into the worker's histogram, not counted in throughput.
enum class PassKind { Verify, Warmup, Timed, Latency };

// How much of a pass's data the workload checks after it (untimed). Full:
// every byte read or written, against what the file should hold. Tail: the
// checks that cost nothing like the pass itself (byte counts, the file's
// length, the last block), which catch a short, misplaced or missing
// transfer. The engine asks for Full on the Verify and Latency passes and
// on the first pass of every timed repetition, Tail on warm-ups and the
// other passes of a repetition: a full check of a memory-speed pass costs
// about as much as the pass, and repetitions of many short passes spent as
// long checking as being timed.
enum class DataCheck { Full, Tail };
// Where a check reads [0, length) from: 0 (Full), or `tail` bytes before the end.
inline std::uint64_t check_start(DataCheck check, std::uint64_t length, std::uint64_t tail) {
  return check == DataCheck::Full || tail >= length ? 0 : length - tail;
}

// What one worker did in its timed region (summed over workers by the engine).
struct WorkerTally {
  std::uint64_t bytes = 0;     // bytes moved
  std::uint64_t ops = 0;       // calls or requests of the measured operation
  std::uint64_t io_calls = 0;  // system calls that moved data or synced; 0 with kernel_counts_calls

  WorkerTally& operator+=(const WorkerTally& o) {
    bytes += o.bytes;
    ops += o.ops;
    io_calls += o.io_calls;
    return *this;
  }
};

// The three parts of a pass, per worker. `worker` is 0..workers-1 (an MPI
// rank is its worker number). prepare runs before the start barrier and
// finish after every worker has ended: neither is timed.
struct PassBody {
  std::function<void(unsigned worker)> prepare;
  std::function<WorkerTally(unsigned worker)> timed;
  std::function<void(unsigned worker)> finish;
};

// One pass, as the Team measured it.
struct PassTiming {
  double seconds = 0;            // start barrier released -> last worker's end
  std::vector<double> worker_s;  // each worker's end, from the same start
  double first_done_s = 0, last_done_s = 0;
  Usage usage;                   // the whole pass: every thread of the process, or summed over ranks
  WorkerTally tally;             // summed over workers
};

// Who runs a pass: one worker inline, N threads, or MPI ranks (src/mpi/).
class Team {
 public:
  virtual ~Team() = default;
  // Workers in a pass (threads, or ranks over the whole job).
  virtual unsigned workers() const = 0;
  // The worker numbers this process runs (all of them for threads; its own
  // rank for MPI).
  virtual std::vector<unsigned> local_workers() const = 0;
  // Runs one pass. An exception in any worker is rethrown after every worker
  // of this process has finished (MPI: on every rank, after they agree).
  virtual PassTiming run(const PassBody& body) = 0;
  // MPI: true on the rank that holds the gathered figures; always true otherwise.
  virtual bool reports() const { return true; }
  // How the pass clock is defined, for results ("steady clock, one process", ...).
  virtual std::string clock_description() const = 0;
  // Agreement across the team (MPI: a reduction; threads: the value itself).
  virtual bool all(bool mine) { return mine; }
  virtual double max(double mine) { return mine; }
  // Folds every process's latency histogram into `h` (MPI: onto the reporting rank).
  virtual void combine(LatencyHistogram&) {}
  // Worker 0's `value` on every process (MPI: a broadcast from rank 0).
  virtual std::string broadcast(const std::string& value) { return value; }
};

// Thrown by a workload (from setup or before_pass) when this machine cannot
// give it the conditions it is labelled with (a cold file that stays
// resident): the record is skipped with the reason, never published.
struct SkipExperiment : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One worker inline when workers == 1, else that many threads released
// together by a start gate (the calling thread is worker 0). The threads
// beyond the caller are made at the first pass and kept for the team's
// life: every pass runs worker w on the same thread (its CPU and caches),
// and no thread is made or joined between passes.
class LocalTeam final : public Team {
 public:
  explicit LocalTeam(unsigned workers = 1);
  ~LocalTeam() override;
  LocalTeam(const LocalTeam&) = delete;
  LocalTeam& operator=(const LocalTeam&) = delete;
  unsigned workers() const override { return workers_; }
  std::vector<unsigned> local_workers() const override;
  PassTiming run(const PassBody& body) override;
  std::string clock_description() const override;
  // Threads made for passes since the team was made (workers - 1 after the
  // first pass with several workers, whatever the passes that followed).
  unsigned threads_made() const { return threads_made_; }

 private:
  struct Crew;
  unsigned workers_;
  unsigned threads_made_ = 0;
  std::unique_ptr<Crew> crew_;
};

// A workload the engine measures: one record's worth of passes.
class Workload {
 public:
  virtual ~Workload() = default;
  // Untimed, once, before any pass. Returns a reason when the workload cannot
  // run here (it is then recorded as skipped, never replaced by another).
  virtual std::optional<std::string> setup() { return std::nullopt; }
  // Untimed, on every process, before each pass (cache state, fresh files).
  virtual void before_pass(PassKind) {}
  // The pass. In PassKind::Latency passes, each local worker records its
  // calls into latency(worker); in Verify passes it checks every byte.
  virtual PassBody pass(PassKind kind) = 0;
  // Untimed, after each pass (verify what was written, as data_check()
  // says; remove files).
  virtual void after_pass(PassKind) {}
  // Untimed, once, after the last pass (also after a failure).
  virtual void teardown() {}
  // Whether its Verify pass checks what no timed pass can; when not, the
  // engine does not run it. Reads through a per-call loop need it: a timed
  // pass checks the last block only, to keep the loop bare. Data checked
  // after the pass (writes) is checked in full on the first timed pass of
  // every repetition, which makes a verification pass a repeat.
  virtual bool has_verification_pass() const { return true; }
  // Whether the Verify pass runs again after the timed passes and the
  // latency pass (untimed): the data those passes read was checked at each
  // pass's last block only, so a file a device or filesystem corrupted
  // during the measurement is caught rather than reported verified. Not for
  // a workload whose timed passes change what its verification expects.
  virtual bool verifies_after_timing() const { return false; }
  // Whether its pass can time every call into latency(worker); when not,
  // the record has no latency rather than one measured some other way.
  virtual bool records_latency() const { return true; }
  // How the latency pass times: every call, or every request (queued).
  virtual results::LatencySource latency_source() const { return results::LatencySource::EveryCall; }
  // The workload's data calls happen inside a library (stdio, SQLite...):
  // take the kernel's count of read/write calls for io_calls.
  virtual bool kernel_counts_calls() const { return false; }
  // Fills what only the workload knows into its record (after all passes).
  virtual void describe(results::Result&) const {}

  // Per-worker latency histograms, sized by the engine before a Latency pass.
  LatencyHistogram& latency(unsigned worker) { return latency_[worker]; }
  std::vector<LatencyHistogram>& latency_histograms() { return latency_; }

  // What the current pass's data checks cover; set by the engine before each pass.
  DataCheck data_check() const { return data_check_; }
  void set_data_check(DataCheck c) { data_check_ = c; }

 private:
  std::vector<LatencyHistogram> latency_;
  DataCheck data_check_ = DataCheck::Full;
};

struct EngineSettings {
  unsigned reps = 5;
  unsigned warmup = 1;             // untimed-for-the-record passes before the repetitions (>= 1 when min_time > 0: they calibrate)
  double min_time = 0.100;         // seconds a repetition aims at (0: one pass per repetition)
  // Wall seconds one experiment may take when its passes are repeated to
  // reach min_time: setup, verification, warm-ups, the repetitions and the
  // untimed work around every pass (cache state, checks, fresh files), on
  // `clock`. Never fewer than one pass per repetition or `reps` repetitions.
  double max_time = 3.0;
  // Interleaved rounds (Measurement::start): unrecorded repetitions after
  // the sizing, each able to resize the passes. More than one for passes
  // that speed up after the first repetition, such as syncs waiting out the
  // device's backlog of the other candidates' setup.
  unsigned calibration_reps = 1;
  bool latency = true;             // run the latency pass
  bool verify = true;              // run the verification pass
  std::function<void(unsigned done, unsigned total)> on_pass;  // progress (passes, incl. untimed)
  // Untimed, around every pass: after the workload's before_pass (the cache
  // state is made) and after its after_pass. Observers that sample while a
  // pass runs (the memory suite's per-second series) start and stop here.
  std::function<void(PassKind)> on_pass_begin, on_pass_end;
  // Seconds on a monotonic clock, for the max_time budget (tests give a
  // fake); empty: the steady clock. Passes are timed by the Team, not by it.
  std::function<double()> clock;
};

// Throws UsageError for settings the engine cannot honour (no repetitions,
// no warm-up to calibrate min_time with, a negative or non-finite time), so
// commands can refuse them before any work.
void check_settings(const EngineSettings& settings);

// Runs `workload` on `team` and fills `record` (labels set by the caller):
// samples, passes, bytes, ops, usage medians, latency, first/last done for
// several workers, statistics warnings. Returns false when the workload was
// skipped (record.skipped says why). Throws Error for real failures.
bool measure(Workload& workload, Team& team, const EngineSettings& settings, results::Result& record);

// One workload measured a repetition at a time, so that several can take
// turns (interleaved rounds: Runner::Rounds, runner.h). start() does what
// measure() does before its repetitions (setup, verification, warm-up,
// passes per repetition), then runs calibration repetitions that are not
// recorded (measure()'s recalibration, moved before the first recorded
// repetition so that every recorded one has the same passes);
// repetition() times one more; finish() runs the latency pass, tears the
// workload down and fills the record as measure() does. A skip (setup's
// reason, SkipExperiment) makes any step return false with record.skipped
// set. settings.reps only sizes passes within max_time.
class Measurement {
 public:
  Measurement(Workload& workload, Team& team, EngineSettings settings, results::Result& record);
  ~Measurement();  // tears the workload down if finish() did not
  Measurement(const Measurement&) = delete;
  Measurement& operator=(const Measurement&) = delete;
  bool start();
  bool repetition();
  // Passes per repetition (set by start()).
  unsigned passes() const;
  // A repetition in parts, so that several workloads' passes can alternate
  // within one repetition's time (Rounds): runs up to `count` more passes
  // of the repetition under way (the first of them starting it) and
  // records it when its last pass has run. repetition() is one part of
  // every pass.
  bool repetition_part(unsigned count);
  // Passes the repetition under way still needs (passes() when none is).
  unsigned passes_left() const;
  // Drops a repetition under way (a round cut short): it is not recorded.
  void abandon_repetition();
  bool finish();
  unsigned repetitions() const;
  // Bytes (or, when none move, operations) per second of each recorded repetition, in order.
  std::vector<double> rates() const;
  // The shortest recorded repetition's seconds (0 before the first).
  double shortest_seconds() const;
  // The record as it would read if the measurement finished now: its
  // repetitions so far as samples, the work of one, and what the workload
  // says of itself (its warnings, its cache state's figures). What a judge
  // between repetitions applies its filter to (decision/trust.h).
  results::Result provisional() const;

  struct State;

 private:
  template <typename F>
  bool guarded(F&& step);
  std::unique_ptr<State> s_;
  bool skipped_ = false;
};

// The statistics-and-warnings function: summarises the samples and adds
// the warnings they call for (too short, outliers). Used by measure() and
// by anything that re-summarises records.
void add_statistics_warnings(results::Result& record);

}  // namespace iolab::harness
