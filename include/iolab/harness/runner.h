// The runner: what the suites and the CLI call to measure an experiment.
// It turns an experiment into a Workload and has the engine (engine.h)
// measure it, with the run's settings (repetitions, min time, latency).
//
// Two kinds of experiment:
//  - FileExperiment: the generic workload, a method reading or writing a
//    file in blocks (seq or rand), described entirely by data;
//  - any other Workload (copies, allocation, the record store, parallel
//    regions), or a CustomExperiment of callbacks for the simplest ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/harness/engine.h"
#include "iolab/results/kinds.h"
#include "iolab/results/record.h"
#include "iolab/harness/usage.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {

class MemoryCgroup;  // memory_cgroup.h

struct FileExperiment {
  std::string suite, experiment;  // labels in results
  std::string method;             // a file method name (io::find_file_method)
  // The method itself, when it is not in the registry (tests, embedders);
  // `method` then only names it in results.
  const io::Method* method_object = nullptr;
  std::string method_label;       // name in results when not `method` (e.g. "stdio-unbuffered")
  io::FileOptions options;
  results::Op op = results::Op::Read;               // Read or Write
  results::AccessPattern pattern = results::AccessPattern::Seq;
  std::uint64_t block_size = 4096;
  std::uint64_t file_size = 0;
  std::uint64_t ops = 0;  // calls per pass; 0 = file_size / block_size (rounded up)
  // Random reads: a pass reads every block this many times, a fresh
  // permutation each round (the verification pass checks each block once).
  unsigned rounds = 1;
  // Random reads: a pass (the verification pass too) ends at the first call
  // after this turns true: a time bound another thread keeps (the memory
  // suite's). The record's bytes and ops are what the pass read.
  const std::atomic<bool>* stop = nullptr;
  // Reads: a file already holding the pattern (write_pattern_file with the
  // run's seed, at least file_length() bytes) that the caller owns and
  // removes; the experiment reads it instead of writing its own, so
  // candidates compared at one condition read the same file. Empty: its own.
  std::filesystem::path prepared_file;
  // Random reads in windows: a pass reads the next `pass_blocks` blocks of
  // one permutation of all the file's blocks (seeded with `order_seed`, or
  // the run's seed when 0), going on where the previous pass stopped, so a
  // pass never re-reads what the passes before it just brought in and the
  // file need not be read whole per pass; the verification pass checks the
  // next `verify_blocks` of it (every byte), a sample the record states.
  // 0: a pass reads every block (`rounds` times).
  std::uint64_t pass_blocks = 0, verify_blocks = 0;
  std::uint64_t order_seed = 0;
  // CacheState::Full: the memory cgroup the experiment runs in (a process
  // placed in it: run_in_child, ChildSession) and the page cache's room in
  // it. Before every pass the group's limit is set to the room plus the
  // group's other memory (plus thresholds::kFullCacheMarginBytes), and the
  // cache must fill the room; the file must be larger than the room.
  MemoryCgroup* memory_group = nullptr;
  std::uint64_t cache_room = 0;
  // Heap or aligned; nullopt = aligned when the method needs alignment
  // (O_DIRECT), heap otherwise.
  std::optional<io::BufferKind> buffer;
  results::CacheState cache = results::CacheState::Warm;  // reads; writes always go to a fresh file
  results::Eviction eviction = results::Eviction::PerFile;
  io::FlushPolicy sync;                      // writes
  bool latency = true;                  // run the latency pass
  std::optional<results::Reference> reference;   // the seed's published figure for this experiment
};
// What the runner does with these fields (docs/results-format.md has more):
//  - Reads: the file holds io::fill_pattern(config.seed) bytes, written untimed
//    with pwrite + fdatasync. The verification pass reads it through the same
//    method, options and queue as the timed passes and checks every byte;
//    every timed pass checks each call's byte count.
//  - Writes: each pass writes a fresh file (removed afterwards) from a
//    WriteSource (pattern bytes generated before timing), read back untimed
//    with pread and compared after every pass.
//  - Cold: the file is evicted before every pass and proven cold (mincore);
//    one that stays resident is evicted again, then replaced by a fresh
//    copy, then skipped. Warm: proven resident before every pass. Full:
//    the group's limit set to the cache's room plus its other memory, and
//    its page cache proven full before every pass (read into from the file
//    until it is, or skipped), nothing evicted (kinds.h).
//  - Queued methods (MethodTraits::queued): requests stream through
//    File::stream with options.queue_depth in flight, one read slot each.

// The callbacks of a simple custom workload (one worker).
struct Repetition {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  std::uint64_t io_calls = 0;  // 0 = take the kernel's count from /proc/self/io
};

struct CustomExperiment {
  results::Result labels;  // suite, experiment, method, op, sizes, buffer, cache, sync, reference... (figures are filled in)
  std::function<void()> prepare;     // untimed, before every pass
  std::function<Repetition()> timed; // the timed region: the workload once
  // Untimed, once before the warm-up (the engine's verification pass,
  // engine.h): the timed region's work on the same path with all it
  // produces checked, where a timed pass checks less to stay bare; false =
  // data did not verify. Empty: no verification pass.
  std::function<bool()> verification;
  std::function<bool()> verify;      // untimed, after the last pass; false = data did not verify
  std::function<void(DataCheck)> cleanup;  // untimed, after each pass: checks its data as asked (engine.h)
};

struct RunConfig {
  unsigned reps = 5;
  unsigned warmup = 1;  // clocked passes before the repetitions (they also size them)
  std::uint64_t seed = 0x10AB;
  double min_time = 0.100;  // seconds a repetition aims at (--min-time; 0 = one pass each)
  double max_time = 3.0;    // wall seconds one experiment may take when lengthened (EngineSettings::max_time)
  unsigned calibration_reps = 1;  // interleaved rounds: repetitions that size the passes (EngineSettings::calibration_reps)
  bool latency = true;      // the latency pass (--no-latency skips it)
  bool show_progress = false;  // progress bar on stderr
  // Replaces every experiment's eviction (iolab run --evict drop_caches).
  std::optional<results::Eviction> eviction;
  // Called after each experiment (tables, progress); may be empty.
  std::function<void(const results::Result&)> on_result;
  // Called when an experiment starts, and after each of its passes (progress bars).
  std::function<void(const std::string& label)> on_experiment;
  std::function<void(unsigned done, unsigned total)> on_pass;
  // Around every pass (EngineSettings::on_pass_begin/on_pass_end).
  std::function<void(PassKind)> on_pass_begin, on_pass_end;
};

class Runner {
 public:
  Runner(RunConfig config, io::ScratchDir& scratch);
  ~Runner();

  // Never throws for "cannot run here": returns a Result with `skipped` set.
  // Throws Error for real failures (I/O errors, data that does not verify).
  results::Result run(const FileExperiment& e);
  results::Result run(const CustomExperiment& e);
  // Measures `workload` on `team` with `labels`; reports it like the others.
  results::Result run(Workload& workload, results::Result labels, Team& team);
  results::Result run(Workload& workload, results::Result labels);  // one worker
  // A record for an experiment that cannot run here, reported like the others.
  results::Result skip(results::Result labels, std::string reason);
  // A record this runner's engine measured in another process (a child
  // under a memory limit, harness/memory_cgroup.h), reported like the others.
  results::Result report(results::Result measured);

  const RunConfig& config() const noexcept { return config_; }
  io::ScratchDir& scratch() noexcept { return scratch_; }
  EngineSettings settings() const;

 private:
  RunConfig config_;
  io::ScratchDir& scratch_;
};

// The options experiment `e` opens its file with: O_DIRECT for cache
// 'direct' where the method can choose, and a queued method's default batch
// (submit_batch 0): a queue that bypasses the page cache hands each freed
// slot over as its completion is taken (batch 1, fio's default loop, which
// kept more IOPS than refilling every freed slot in one call: the figures
// are in docs/performance.md), one reading
// the page cache refills every free slot per call (its reads complete inside
// the call, so one call serves the queue). A batch set explicitly is kept.
io::FileOptions experiment_options(const io::Method& method, const FileExperiment& e);

// Candidates measured in interleaved rounds: each round runs one timed
// repetition of every candidate still in, and the repetitions alternate a
// few passes at a time: the round is cut into parts (as many as the
// candidate with the most passes has, at most 24), each candidate's passes
// are spread evenly over them, and in each part the candidates take turns
// in round_order(n, seed, round * 24 + part) (comparison.h). So a machine
// whose speed changes within a round (it does here, faster than a round)
// affects every candidate alike, and the per-round ratio of two candidates
// drops the change. The engine times every pass (Measurement, engine.h);
// nothing here reads a clock.
// A candidate of Rounds that is any workload (a replayed trace, ...): its
// record's labels and how to make the workload, at start(). `make` writes
// what the workload learns into `record` (which outlives the workload); it
// returns nullptr, with record.skipped set, for a candidate that cannot
// run here.
struct WorkloadCandidate {
  results::Result labels;
  std::function<std::unique_ptr<Workload>(results::Result& record)> make;
  bool latency = true;  // run its latency pass (when the run's settings do)
};

class Rounds {
 public:
  // `min_rounds` sizes each candidate's passes within the run's max_time.
  Rounds(Runner& runner, std::vector<FileExperiment> candidates, std::uint64_t seed, unsigned min_rounds = 5);
  Rounds(Runner& runner, std::vector<WorkloadCandidate> candidates, std::uint64_t seed, unsigned min_rounds = 5);
  ~Rounds();
  Rounds(const Rounds&) = delete;
  Rounds& operator=(const Rounds&) = delete;
  // Setup, verification, warm-up and calibration of every candidate, in
  // order; one that cannot run here is skipped (its record says why) and
  // takes no turns.
  void start();
  // One more round. `more`, when given, is asked before each turn: false
  // ends the round there (a candidate whose repetition finished keeps it,
  // one under way drops it, the rest have one sample fewer) and round()
  // returns false, so a caller's deadline is overrun by at most the turn
  // under way. `rounds()` counts complete rounds.
  bool round(const std::function<bool()>& more = {});
  // Takes `candidate` out of the rounds still to come (it was beaten: more
  // of its repetitions cannot change the verdict); its repetitions so far
  // stay, and its record says after how many rounds and `why`.
  void retire(std::size_t candidate, std::string why);
  bool retired(std::size_t candidate) const;
  // Some candidate still takes turns (running and not retired).
  bool active() const;
  unsigned rounds() const noexcept { return rounds_; }
  std::uint64_t seed() const noexcept { return seed_; }
  // Each candidate's rates so far (bytes or operations per second, one per
  // round, in round order); empty for a skipped one.
  std::vector<std::vector<double>> rates() const;
  // Why the candidate does not run (skipped at start, or stopped by an
  // error since), or nullopt while it runs.
  std::optional<std::string> not_running(std::size_t candidate) const;
  // The candidate's record as it would read if the rounds finished now
  // (Measurement::provisional), with the extra fields set so far.
  results::Result provisional(std::size_t candidate) const;
  // An extra field of the candidate's record (kept in finish()'s record).
  void set_extra(std::size_t candidate, const std::string& key, nlohmann::json value);
  // One record per candidate, in the candidates' order: samples in round
  // order, extra "round_seed", "rounds", "round_parts" (the most parts a
  // round was cut into) and "round_positions" (the candidate's 0-based turn
  // in the first part of each round in which it ran: its place in that
  // part's order, retired candidates counted), and for a retired one
  // "retired_after_rounds" and "retired_because".
  std::vector<results::Result> finish();

 private:
  struct Candidate;
  Runner& runner_;
  std::vector<std::unique_ptr<Candidate>> candidates_;
  std::uint64_t seed_;
  unsigned min_rounds_, rounds_ = 0, parts_ = 0;
};

// Runs a table of file experiments as comparisons are run: consecutive
// experiments of one kind (operation, cache state, flush policy) together
// in interleaved rounds (Rounds above, config().reps rounds), as many at a
// time as `group` allows, so that the machine's drift over the minutes a
// table takes falls on all of a kind's records alike (every method, every
// size) instead of on whichever record ran at that moment. A group's files
// exist at once: its experiments' files are at most `group.file_bytes` and a
// quarter of the scratch filesystem's free space, their buffers at most a
// quarter of the memory; an experiment larger than that runs alone.
// Records come back in table order; each carries the Rounds extras.
struct InterleaveLimits {
  std::uint64_t file_bytes = std::uint64_t{1} << 30;
};
std::vector<results::Result> run_interleaved(Runner& runner, const std::vector<FileExperiment>& table,
                                             InterleaveLimits group = {});

// Labels of a file experiment's record (before it runs).
results::Result labels_of(const FileExperiment& e);

// The experiment's file: file_size, or ops x block_size (UINT64_MAX when
// that overflows).
std::uint64_t file_length(const FileExperiment& e);
// The memory `e` allocates for its passes (read slots, or a write source's
// blocks; a random plan's offsets): what a memory cgroup it runs in must
// leave room for beside its page cache.
long double experiment_memory(const FileExperiment& e);
// Why `e` cannot run here, or nullopt: its file must fit in the free space
// of `scratch_dir`'s filesystem, its buffers (and a random plan's offsets)
// in half of the memory. The runner skips such an experiment before
// allocating anything; `iolab run` refuses it before any work starts.
std::optional<std::string> resource_problem(const FileExperiment& e, const std::filesystem::path& scratch_dir);
// The file a read experiment reads: io::fill_pattern(seed) bytes written
// with pwrite and made durable (untimed preparation); `file` exists.
void write_pattern_file(const std::filesystem::path& file, std::uint64_t size, std::uint64_t seed);

// Cache control, usable on its own (tests, custom workloads).
// Fraction of the file's pages resident in the page cache (mincore).
double resident_fraction(const std::filesystem::path& file);
// Reads the whole file once so it is resident.
void make_warm(const std::filesystem::path& file);
// Reads up to `bytes` of the file from `offset` with 1 MiB preads, stopping
// at its end, so they are resident (what fits); returns the bytes read.
std::uint64_t read_into_cache(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t bytes);
// A file just written keeps the pages its writes made, and reads from them
// are slower (up to 30% for 4 KiB preads here, kernel 6.18 on ext4) and
// uneven from file to file. This writes it back, evicts it and reads it
// once, so the page cache holds it as a file a program read before: how
// every warm read experiment (and crosscheck's fio file) starts.
void make_warm_from_disk(const std::filesystem::path& file);
// Evicts the file the way `how` says; throws Error(EPERM) when DropCaches is
// asked for without root. Returns how it was done ("fadvise", "drop_caches").
std::string make_cold(const std::filesystem::path& file, results::Eviction how = results::Eviction::PerFile);
// Whether this process may write /proc/sys/vm/drop_caches.
bool can_drop_caches();

}  // namespace iolab::harness
