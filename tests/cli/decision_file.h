// A results file holding a decision, as `iolab recommend --save` writes
// one: a warm-read row at 64 B and 4 KiB and a buffered write at 4 KiB,
// each condition's records from the real selection on seeded rates
// (tests/decision/synthetic_decision.h). What the CLI tests replay.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "decision/synthetic_decision.h"
#include "iolab/results/record.h"

namespace iolab::testing {

inline void write_decision_file(const std::filesystem::path& path, const std::string& mmap_label = "mmap") {
  using decision::Column;
  using decision::Condition;
  using decision::Row;
  const std::vector<std::string> mapped{"maps_file", "positional"}, positional{"positional"},
      buffered{"user_space_buffer", "positional", "library_calls"};
  results::Results rs;
  rs.environment.hostname = "h";
  rs.environment.created = "2026-12-04T18:00:00Z";
  rs.environment.command = "iolab recommend --op read,write --bs 64,4k";
  auto add = [&](const Condition& c, double mmap, double pread, double stdio, std::uint64_t seed) {
    auto records = testing::synthetic_condition(
        c, {{mmap_label, mapped, mmap}, {"pread", positional, pread}, {"stdio", buffered, stdio}}, 0.02, seed);
    rs.results.insert(rs.results.end(), records.begin(), records.end());
  };
  add({Row{results::Op::Read, "none", Column::Warm}, 64}, 3000, 1000, 900, 1);
  add({Row{results::Op::Read, "none", Column::Warm}, 4096}, 3000, 1500, 900, 2);
  add({Row{results::Op::Write, "none", Column::Buffered}, 4096}, 500, 1200, 1000, 3);
  std::ofstream(path) << results::to_json(rs).dump();
}

}  // namespace iolab::testing
