// Internal: the commit log's per-second series (issue 12) as a chart panel:
// throughput and p99 append latency in each second of a run, one line per
// design, so a flush stall shows as a dip rather than averaged away.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "model.h"

namespace iolab::report {

// Adds the panel to `spec` (a family's chart from chart_spec) when the
// family's records carry extra.per_second (docs/results-format.md); leaves
// it unchanged otherwise. Malformed series entries are skipped, never trusted.
void add_per_second_panel(const Family& f, const std::vector<PointFacts>& points, nlohmann::json& spec);

}  // namespace iolab::report
