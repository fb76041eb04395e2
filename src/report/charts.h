// Internal: the Vega-Lite spec of one family's chart: throughput (log-log)
// with the spread over repetitions and the seeds' published figures, then
// latency percentiles and CPU per unit of work. Every string in it has its
// control characters and U+2028/U+2029 made visible: the chart library's
// expression parser rejects a raw line separator in a string.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "model.h"

namespace iolab::report {

// A chart's spec and its data rows, which a generic chart writes straight to
// JSON text (`values`, already through visible()) instead of building them as
// a tree: a report of 100,000 records has as many rows (issue 29 item 8).
// `spec`'s data.values is then an empty array; `values` empty: the rows are in `spec`.
struct ChartSpec {
  nlohmann::json spec;
  std::string values;
};
ChartSpec chart_spec(const Family& f, const std::vector<PointFacts>& points);
// The chart as script_json() writes its whole spec, data.values included.
std::string chart_script_json(const ChartSpec& chart);

// Pieces the family charts (family_charts.h) share with it.
// x of a family at the measured values `xs` (sorted): log scale, ticks at the measured values.
nlohmann::json x_encoding(const Family& f, const std::vector<double>& xs);
// The colour of a family's lines: one per contender, titled "method", in the family's order.
nlohmann::json series_color(const Family& f);
// A tooltip of datum fields, each shown under its title: {{"field", "title"}, ...}.
nlohmann::json field_tooltip(std::initializer_list<std::pair<const char*, const char*>> fields);
// A log axis of nanoseconds labelled as durations.
nlohmann::json duration_axis();
// Every string in `j` through visible().
void make_visible(nlohmann::json& j);
// A spec of `parts` stacked vertically over the data `rows`, in the page's
// chart style, every string through visible().
nlohmann::json stacked_spec(nlohmann::json rows, nlohmann::json parts);

}  // namespace iolab::report
