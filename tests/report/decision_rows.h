// A row of synthetic decision records (decision/synthetic_decision.h) whose
// candidates' rates the test gives per size: what the cost model's checks
// and predictions against the decision read.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "decision/synthetic_decision.h"

namespace iolab::testing {

// MiB/s of a method costing `call_s` per call and `byte_s` per byte at `size`-byte calls.
inline double mib_s(double size, double call_s, double byte_s) { return size / (call_s + size * byte_s) / (1 << 20); }

inline std::vector<results::Result> row_records(const decision::Row& row, const std::vector<std::uint64_t>& sizes,
                                                const std::function<std::vector<SyntheticCandidate>(double)>& cands,
                                                std::uint64_t seed) {
  std::vector<results::Result> rs;
  for (std::uint64_t size : sizes)
    for (auto& r : synthetic_condition(decision::Condition{row, size}, cands(static_cast<double>(size)), 0.01, seed++))
      rs.push_back(std::move(r));
  return rs;
}

}  // namespace iolab::testing
