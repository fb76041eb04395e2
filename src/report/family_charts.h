// Internal: families that have a chart of their own. Each entry claims its
// records out of the generic grouping (block size, threads or work per pass
// on x, one line per contender) and draws them its way. One family, one
// file (qd_chart.cpp: the queue-depth curve); a new family adds its entry to
// family_charts() in family_charts.cpp, nothing else changes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "iolab/results/record.h"
#include "model.h"

namespace iolab::report {

struct FamilyChart {
  // Whether a measured record belongs to this family. Claimed records of one
  // suite are grouped by experiment (and op, pattern, cache, flush policy):
  // one chart each.
  bool (*claims)(const results::Result& r);
  Axis axis;  // x of a point: families.cpp x_of()
  // The line a record is on, before the results file is added (several files).
  std::string (*series)(const results::Result& r);
  bool bytes_metric;  // the figures' unit: MiB/s, or operations per second
  // The Vega-Lite spec; every string in it goes through visible() (stacked_spec or make_visible, charts.h).
  nlohmann::json (*spec)(const Family& f, const std::vector<PointFacts>& points);
  // What joins records into one chart instead of their experiment (the
  // memory suite: every working set of one workload); null: the experiment.
  std::string (*group)(const results::Result& r) = nullptr;
  // The sentences under the chart instead of explain.h's; null: those.
  std::vector<std::string> (*explain)(const Family& f) = nullptr;
};

// The queue-depth curve of the direct suite (experiments whose records carry
// extra.total_depth): IOPS and latency against requests in flight.
extern const FamilyChart kQueueDepthCurve;

// The memory suite's workloads (records carrying extra.working_set_ratio):
// throughput against working set / memory limit, and over time from
// extra.per_second, with the counters that say why (charts_memory.cpp).
extern const FamilyChart kMemoryCurve;

// Every family with a chart of its own, in the order they are asked.
const std::vector<const FamilyChart*>& family_charts();

}  // namespace iolab::report
