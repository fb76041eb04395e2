// The seeds' stated rules beside this machine's verdicts: each rule a seed
// document states (/work/shared/SEEDS.md digests them; 004's packet-size
// decision table, 001's and 002's conclusions) is tied to the designed
// table's cell that asks the same question, and a row says what the seed
// says, what this machine's cell says, and whether they agree.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/report/decision_table.h"

namespace iolab::report {

struct SeedRuleRow {
  std::string seed;     // "004"
  std::string says;     // the seed's rule, in its terms mapped to the methods here
  std::string cell;     // the cell's key ("read|< 64 B|none|cold"), empty when no cell asks it
  std::string machine;  // this machine's verdict there
  std::string agrees;   // "yes", "no", "partly", "cannot say", "not in this table"
  // What the rule expects of the cell's verdict, by the kind of method
  // (its traits): "a memory-mapped method wins", "the winner is not a
  // memory-mapped method"; empty when no cell asks it.
  std::string expects;
};

std::vector<SeedRuleRow> seed_rules(const DesignedTable& table);
std::string format_text(const std::vector<SeedRuleRow>& rows);
nlohmann::json to_json(const std::vector<SeedRuleRow>& rows);

}  // namespace iolab::report
