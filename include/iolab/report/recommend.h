// This machine's decision table, in the spirit of seed 004's ("read with
// mmap, write with FileChannel, avoid force with mmap"), from measured data:
// op x packet-size band x flush policy x cache state -> the best method, its
// margin over the runner-up, and whether it won everywhere beyond the noise.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/harness/result.h"

namespace iolab::report {

enum class Band { Under64, To4K, To1M, Over1M };  // < 64 B, 64 B..4 KiB, 4 KiB..1 MiB, >= 1 MiB
std::string_view to_string(Band band);            // "< 64 B", "64 B..4 KiB", ...
Band band_of(std::uint64_t block_size);

struct Cell {
  std::string op;     // "read", "write"
  Band band = Band::Under64;
  std::string flush;  // "none", "end", "every-16k", "async-16k", "every" (reads: "none")
  std::string cache;  // "warm", "cold" (cold includes O_DIRECT)

  std::vector<std::string> methods;          // every method measured in this cell (with or without warnings)
  // Methods that usually compete for this cell (the table's own experiments
  // measure them) of which the results hold no record: a verdict is only
  // "of" the methods that ran.
  std::vector<std::string> absent_methods;
  std::vector<std::uint64_t> block_sizes;    // packet sizes measured in this cell
  // Records left out because their figures carry warnings (distrust():
  // too_short, outliers, not_warm, not_cold), by kind.
  std::map<std::string, std::size_t> left_out;
  std::size_t left_out_records = 0;
  // Records left out because their data was not verified (verified: false).
  std::size_t unverified_records = 0;
  // Among the records kept: best is ahead (geometric mean of median-rate
  // ratios where they met) of every method it met, else the best overall
  // score; runner_up is its closest head-to-head competitor.
  std::string best, runner_up;               // empty when fewer than two methods were compared
  bool ahead_of_all = false;                 // best is ahead of every method it met
  double margin = 0;                         // best's median rate / runner-up's, geometric mean over shared conditions
  std::size_t shared = 0;                    // conditions (suite, pattern, size, file, flush) where best and runner-up both ran
  std::size_t contested = 0;                 // conditions where at least two methods ran (with or without warnings)
  std::size_t won = 0;                       // ... where best ran and clearly beat every other method there
  std::size_t absent = 0;                    // ... where best did not run
  // best's slowest repetition / the fastest repetition of any other method,
  // at the least favourable contested condition; against whom, at what size.
  double worst_ratio = 0;
  std::string worst_against;
  std::uint64_t worst_block = 0;
  // Records left out for warnings that best could not be shown to beat (a
  // wrong cache state, or a fastest repetition not clearly behind best's
  // slowest): each stops a clear verdict at its condition. The first one's method and size.
  std::size_t unresolved = 0;
  std::string unresolved_by;
  std::uint64_t unresolved_block = 0;
  bool noise_known = false;                  // every record compared had >= 2 repetitions
  // The clear-winner rule: best ran at every contested condition, and at each
  // its slowest repetition beat the fastest of every other method there by a
  // median ratio above thresholds::kTieRatio (clearly_faster), noise known;
  // methods left out for warnings there included (unresolved == 0).
  bool clear = false;

  // "mmap", "no clear winner", "only pread measured", "no data".
  std::string verdict() const;
  // One line: verdict with margin, e.g. "mmap: 3.10x over pread at 2 conditions (at worst 2.71x)".
  // Method names from the results are shown with control characters escaped.
  std::string summary() const;
};

struct DecisionTable {
  std::vector<Cell> cells;  // read rows first, then write; bands ascending
  const Cell* find(std::string_view op, Band band, std::string_view flush, std::string_view cache) const;
};

// Builds the table from single-thread read and write records; other records are ignored.
DecisionTable decide(std::span<const harness::Result> results);

std::string format_text(const DecisionTable& table);
std::string format_markdown(const DecisionTable& table);
nlohmann::json to_json(const DecisionTable& table);

}  // namespace iolab::report
