// The trials run_decision makes per cell (decision.h): interleaved rounds in
// this process (RoundsTrial, decision.cpp), or, for the larger-than-memory
// cell, the same rounds in a child inside a memory cgroup, paced from here
// (decision_memory.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/decision.h"

namespace iolab::suites {

// The cell's candidates at every condition, in interleaved rounds on
// `scratch` (decision.cpp's RoundsTrial): its records go to `out`.
std::unique_ptr<CellTrial> make_rounds_trial(const harness::RunConfig& config, io::ScratchDir& scratch,
                                             const DecisionCell& cell, std::size_t index, const DecisionSettings& settings,
                                             double min_time, std::vector<harness::Result>& out);

// The larger-than-memory cell (decision.h, kLargerThanMemory), its
// experiments shaped by shape_larger_than_memory.
DecisionCell larger_than_memory_cell(std::uint64_t memory_room);
// Why that cell cannot be measured here (no memory cgroup can be made), or "".
std::string larger_than_memory_problem();
// Candidate `index`'s read of that cell: random packets in windows of a
// permutation of its own, from a full cache of `memory_room` bytes.
void shape_larger_than_memory(harness::FileExperiment& e, std::uint64_t memory_room, std::size_t index);
// The same rounds (make_rounds_trial) in a child process inside one memory
// cgroup for the whole cell: its start, each round, each judgement and its
// finish are messages to the child, which asks this process before each
// repetition whether the budget still allows it (CellTrial::round's `more`).
std::unique_ptr<CellTrial> make_memory_cell_trial(harness::Runner& runner, const DecisionCell& cell, std::size_t index,
                                                  const DecisionSettings& settings, double min_time,
                                                  std::vector<harness::Result>& out);

}  // namespace iolab::suites
