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
#include <string>
#include <vector>

#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"

namespace iolab::suites {

struct DecisionCell {
  std::string op;      // "read", "write"
  std::string band;    // "< 64 B", "64 B..4 KiB", "4 KiB..1 MiB", ">= 1 MiB"
  std::string flush;   // "none", "end", "every-16k", "async-16k", "every" (reads: "none")
  std::string column;  // reads: "warm", "cold", "direct"; writes: "buffered", "direct"
  std::vector<std::string> candidates;   // labels ("pread", "io_uring QD32", "io_uring O_DIRECT QD1")
  std::vector<std::uint64_t> conditions; // packet sizes
  // [condition][candidate]: the experiment each candidate runs there.
  std::vector<std::vector<harness::FileExperiment>> experiments;
  std::string unmeasurable;  // why the cell cannot be measured here (empty: it can)
  std::string key() const;   // "read|< 64 B|none|warm": what records carry as extra.decision_cell
};

// Every cell of the table. Files are at most `max_file` bytes.
std::vector<DecisionCell> decision_design(std::uint64_t max_file);

struct DecisionSettings {
  double budget_s = 480;     // the whole table's time: each cell gets an equal share of what is left
  unsigned min_rounds = 5;   // rounds before the first look
  unsigned max_rounds = 30;  // rounds after which a cell stops undecided whatever its share
  double margin = 1.05;      // a winner's interval lies above it; a tie's inside [1/margin, margin]
  std::uint64_t seed = 0x10AB;
  std::function<void(const std::string& line)> progress;  // one line per cell (may be empty)
};

// Measures every cell. Records carry extra "decision_cell" (DecisionCell::key),
// "decision_candidate" (label), "decision_condition" (0-based), "decision_stop"
// ("decided", "budget", "max_rounds") and the round fields of Rounds::finish;
// a cell that cannot be measured gives one skipped record with the reason
// and extra "decision_candidates" and "decision_conditions" (what it declares).
std::vector<harness::Result> run_decision(harness::Runner& runner, const std::vector<DecisionCell>& design,
                                          const DecisionSettings& settings);

}  // namespace iolab::suites
