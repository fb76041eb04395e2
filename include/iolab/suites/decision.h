// The decision table's experiment (`iolab recommend`): a designed,
// interleaved, adaptive comparison. Rows are op x packet band x flush
// policy; columns are the cache state a read starts from (warm, cold,
// O_DIRECT) and where a write's bytes end (page cache, O_DIRECT). Each cell
// declares its candidates (every file method that can do the op under the
// cell's condition, in its default form; queued methods at QD 1 and QD 32)
// and its conditions (two packet sizes per band, its edges), and measures
// every candidate at every condition in interleaved rounds (Rounds,
// runner.h) until the cell is decided (harness::decide, comparison.h) or
// its share of the budget is spent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "iolab/harness/comparison.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"

namespace iolab::suites {

struct DecisionCell {
  std::string op;      // "read", "write"
  std::string band;    // "< 64 B", "64 B..4 KiB", "4 KiB..1 MiB", ">= 1 MiB"
  std::string flush;   // "none", "end", "every-16k", "async-16k", "every" (reads: "none")
  std::string column;  // reads: "warm", "cold", "direct", "larger than memory"; writes: "buffered", "direct"
  std::vector<std::string> candidates;   // labels ("pread", "io_uring QD32", "io_uring O_DIRECT QD1")
  std::vector<io::MethodTraits> traits;  // each candidate's, in its form (what a reader decides by, not the label)
  std::vector<std::uint64_t> conditions; // packet sizes
  // [condition][candidate]: the experiment each candidate runs there.
  std::vector<std::vector<harness::FileExperiment>> experiments;
  std::string unmeasurable;  // why the cell cannot be measured here (empty: it can)
  // Its passes wait for the device (a flush policy, or O_DIRECT writes):
  // their speed swings with the device's (a flush took 1-9 ms here), so its
  // repetitions are sized with more headroom over the too-short bound
  // (kDeviceBoundMinTimeFactor x the plan's repetition time).
  bool device_bound = false;
  std::string key() const;   // "read|< 64 B|none|warm": what records carry as extra.decision_cell
};

// A device-bound cell's repetition time over the plan's: with the plan's
// 65-75 ms, a run whose device sped up after calibration left 30 records of
// such cells (12 of one cell, all its candidates) under the 50 ms a figure
// needs.
inline constexpr double kDeviceBoundMinTimeFactor = 1.5;

// The column of random reads of a file larger than memory (issue 24): one
// cell, read | 4 KiB..1 MiB, whose candidates are every file method that
// can read, through the page cache or O_DIRECT, all run in one child
// process inside one memory cgroup that gives the page cache
// `memory_room` bytes (the candidates' buffers get theirs beside it), from
// a full cache (harness::CacheState::Full) of a file kLargerThanMemoryRatio
// times the room (decision_memory.cpp). Cannot be measured where no memory
// cgroup can be made (not root, no controller): the cell says why.
inline constexpr const char* kLargerThanMemory = "larger than memory";
inline constexpr unsigned kLargerThanMemoryRatio = 4;
inline constexpr std::uint64_t kDefaultMemoryRoom = 64ull << 20;  // a 256 MiB file
// The least room (`iolab recommend --memory-limit`), the memory suite's
// least limit too: a smaller cache holds only a few 1020 KiB packets.
inline constexpr std::uint64_t kMinMemoryRoom = 32ull << 20;

// Every cell of the table. Files are at most `max_file` bytes, but for the
// larger-than-memory cell's (kLargerThanMemoryRatio x `memory_room`).
std::vector<DecisionCell> decision_design(std::uint64_t max_file, std::uint64_t memory_room = kDefaultMemoryRoom);

struct DecisionSettings {
  // The whole table's wall time, a hard bound: a repetition starts only if
  // the last one's length still fits, so the table ends within the budget
  // plus at most one repetition (and the records' teardown).
  double budget_s = 570;
  // Rounds before the first look: 6, the fewest at which a 95% paired
  // interval exists (harness::paired_ratio_interval).
  unsigned min_rounds = 6;
  unsigned max_rounds = 60;  // rounds after which a cell stops undecided whatever its share
  double margin = 1.05;      // a winner's interval lies above it; a tie's inside [1/margin, margin]
  std::uint64_t seed = 0x10AB;
  // Seconds a repetition lasts at least: the plan shrinks it down to
  // min_time_floor (above the 50 ms under which a record is too short to
  // trust) when the minimum rounds of every cell would not fit otherwise.
  double min_time = 0.075, min_time_floor = 0.065;
  // Share of what is left that the minimum rounds of the cells still to
  // run are planned into; the rest pays for rounds beyond the minimum in
  // undecided cells, and for estimates that came out short.
  double minimum_share = 0.85;
  // Beyond its minimum rounds a cell may take up to this many times its
  // equal share of that rest while its hardest pair looks resolvable in
  // the rounds it buys (Verdict::rounds_needed); one that does not stops
  // "futile" and leaves the time to the cells after it.
  double borrow = 2;
  std::function<void(const std::string& line)> progress;  // one line per cell (may be empty)
};

// The budget's view of one cell's measurement (the real one runs Rounds;
// tests drive the scheduler with synthetic ones and a fake clock).
class CellTrial {
 public:
  virtual ~CellTrial() = default;
  virtual void start() = 0;  // setup, verification, warm-up, calibration of every candidate at every condition
  // One round at every condition; `more` is asked before each repetition
  // and a false cuts the round there (returns false).
  virtual bool round(const std::function<bool()>& more) = 0;
  virtual harness::Verdict judge() = 0;                // the verdict on the rounds so far
  virtual void finish(const std::string& stop) = 0;    // CellOutcome::stop's words
};

struct ScheduledCell {
  std::size_t turns = 0;  // repetitions per round: candidates x conditions
  // Cells of one class cost alike per turn (the same op, flush policy and
  // column): the budget's cost model is calibrated per class.
  std::string cost_class;
  // The cell's trial, its repetitions lasting at least `min_time` seconds.
  std::function<std::unique_ptr<CellTrial>(double min_time)> make;
  // The cell was not run: the budget could not pay for its minimum rounds.
  std::function<void(const std::string& reason)> not_run;
};

struct CellOutcome {
  // "decided" (winner or tie), "settled" (every size settled, not alike:
  // more rounds cannot decide it), "sizes_differ" (a size still open, but
  // its answer already cannot match the others': Verdict::past_deciding),
  // "futile" (a pair whose ratio sits near the margin, or is that noisy,
  // would need more rounds than the cell may take: Verdict::rounds_needed),
  // "budget", "max_rounds", "not run: budget"
  std::string stop;
  unsigned rounds = 0;  // complete rounds
  harness::Verdict::Kind kind = harness::Verdict::Kind::Undecided;
  double min_time = 0;  // the repetition time the plan gave it
  double start_s = 0, end_s = 0;  // on the scheduler's clock, from its start
};

// The budget's plan, cell by cell in order. Before each cell it re-plans
// what is left from a cost model calibrated on the cells already run (setup
// seconds per repetition slot, a repetition's seconds per second of
// min_time): the repetition time that fits every remaining cell's minimum
// rounds into minimum_share of what is left (never below the floor); a cell
// whose minimum does not fit in what is left is not run ("not run:
// budget"). A cell runs its minimum rounds, then more while undecided, under
// max_rounds and within its equal share of the time no remaining minimum
// is planned for (cells decided early leave theirs to the later ones).
// `now` is seconds on any clock.
std::vector<CellOutcome> schedule_decision(std::vector<ScheduledCell>& cells, const DecisionSettings& settings,
                                           const std::function<double()>& now);

// Measures every cell within the budget (schedule_decision on the steady
// clock). Records carry extra "decision_cell" (DecisionCell::key),
// "decision_candidate" (label), "decision_traits" (io::trait_names of its
// method in its form), "decision_condition" (0-based),
// "decision_stop" (CellOutcome::stop's words), "decision_min_time"
// (seconds a repetition lasted at least, as the plan gave it) and the round
// fields of Rounds::finish; a cell that cannot be measured, or that the
// budget could not pay for ("not run: budget ..."), gives one skipped record
// with the reason and extra "decision_candidates" and "decision_conditions".
// The larger-than-memory cell runs its rounds in a child inside a memory
// cgroup, paced by this process's schedule as any other cell (its records
// add the memory fields: decision_memory.cpp).
std::vector<harness::Result> run_decision(harness::Runner& runner, const std::vector<DecisionCell>& design,
                                          const DecisionSettings& settings);

}  // namespace iolab::suites
