// The seeds' stated rules beside this machine's picks, size by size: each
// rule a seed document states (../shared/SEEDS.md digests them: 004's
// packet-size table, 001's and 002's conclusions; and the published
// larger-than-memory result issue 24 reproduces) names a row and a range
// of packet sizes, and is judged at every measured size in it by the kind
// of method picked there (its traits, never its label).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/decision/verdict.h"

namespace iolab::decision {

struct SeedRuleRow {
  std::string seed;     // "004"
  std::string says;     // the seed's rule, in its terms mapped to the methods here
  std::string row;      // the row's key ("read|none|cold"); empty when no row asks it
  std::string sizes;    // the range judged ("8 B..4095 B")
  std::string expects;  // "a memory-mapped method is picked", "the pick is not a memory-mapped method"
  std::string machine;  // per size: "at 8 B: mmap; at 512 B: pread (mmap 1.3x behind)"
  std::string agrees;   // "yes", "no", "partly", "cannot say", "not in this table"
};

std::vector<SeedRuleRow> seed_rules(const Decision& d);
nlohmann::json to_json(const std::vector<SeedRuleRow>& rows);

}  // namespace iolab::decision
