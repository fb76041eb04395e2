// The decision (decision/verdict.h) as text: the map of picks (rows: op,
// flush policy, column; columns: packet sizes) with its marks and legend,
// the safe choice per row and band, the seeds' rules, and with `explain`
// one line of why per condition from the counters.
#pragma once

#include <string>
#include <vector>

#include "iolab/decision/seed_rules.h"
#include "iolab/decision/verdict.h"
#include "iolab/report/decision_prediction.h"

namespace iolab::report {

// A method's label in the map's cells ("io_uring O_DIRECT QD32" -> "uring/D@32").
std::string short_label(const std::string& label);

// With `predicted`, the model's predicted cells in the map between the
// measured sizes, marked, and with `explain` their why lines.
std::string format_text(const decision::Decision& d, bool explain, const DecisionPredictions* predicted = nullptr);
// A row's name in the map ("read - warm", "write every-16k buffered").
std::string row_label(const decision::Row& r);
std::string format_text(const std::vector<decision::SeedRuleRow>& rules);
// The map as a Markdown table (README, docs).
std::string format_markdown(const decision::Decision& d);
// The procedure and its guarantee in one paragraph (console, report).
std::string procedure_text(const decision::Decision& d);


}  // namespace iolab::report
