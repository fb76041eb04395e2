// Internal: the Vega-Lite spec of one family's chart: throughput (log-log)
// with the spread over repetitions and the seeds' published figures, then
// latency percentiles and CPU per unit of work. Every string in it has its
// control characters and U+2028/U+2029 made visible: the chart library's
// expression parser rejects a raw line separator in a string.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "model.h"

namespace iolab::report {

nlohmann::json chart_spec(const Family& f, const std::vector<PointFacts>& points);

}  // namespace iolab::report
