// The bounds of every count and duration a user gives the engine, in one
// table for the command line (`iolab run`, `crosscheck`, `iolab-mpi`) and job
// files, so a job file cannot allow what the command line refuses.
#pragma once

#include <cstdint>

namespace iolab::harness {

struct CountBounds {
  std::uint64_t min, max;
};
inline constexpr CountBounds kRepsBounds{1, 100000};    // timed repetitions per experiment
inline constexpr CountBounds kWarmupBounds{0, 1000};    // untimed passes before them
inline constexpr CountBounds kQueueDepthBounds{1, 4096};  // requests in flight (io_uring's ring entries at most 4096 here)
inline constexpr CountBounds kThreadsBounds{1, 1024};   // workers of a parallel experiment

inline constexpr double kMaxMinTimeSeconds = 3600;   // --min-time: one repetition's least duration
inline constexpr double kMaxMaxTimeSeconds = 86400;  // --max-time: an experiment's budget

}  // namespace iolab::harness
