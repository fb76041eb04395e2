// Internal: the commit log's per-second series (issue 12) as a chart panel:
// throughput and p99 append latency in each second of a run, one line per
// design, so a flush stall shows as a dip rather than averaged away.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "model.h"

namespace iolab::report {

// One field of a per-second series entry as a drawn row holds it: a series
// longer than the page draws is shown as equal runs of seconds, each one row.
struct SecondField {
  const char* key;  // in the series entry
  const char* as;   // in the row
  enum class Over { Mean, Max, Last } over;  // over a run: the mean of the entries that have it,
                                             // the largest (null unless > 0), the last entry's
};
// The rows of one record's series (extra.per_second), appended to `rows`:
// an entry counts when its "t" and `required` are finite non-negative
// numbers; each row is `base` plus "t", each field (null when no entry of
// its run has it) and, for a run of several seconds, "seconds". At most
// 600 rows per record, and none past 20,000 in `rows`, so a long series
// cannot make the page huge (the JSON keeps every second). The commit log's
// panel and the memory suite's charts (charts_memory.cpp) both draw theirs so.
void append_per_second_rows(const nlohmann::json& series, const char* required, const std::vector<SecondField>& fields,
                            const nlohmann::json& base, nlohmann::json& rows);

// Adds the panel to `spec` (a family's chart from chart_spec) when the
// family's records carry extra.per_second (docs/results-format.md); leaves
// it unchanged otherwise. Malformed series entries are skipped, never trusted.
void add_per_second_panel(const Family& f, const std::vector<PointFacts>& points, nlohmann::json& spec);

}  // namespace iolab::report
