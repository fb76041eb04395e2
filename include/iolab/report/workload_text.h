// A decision over a workload (`recommend --trace`: a replayed trace, one of
// decision::Decision::workloads) with the records it was judged from: the
// pick, the methods within the zone, how it stopped, and per method its
// rate, the pick over it, p50/p99 per operation kind, CPU and device bytes
// per operation, verified, or skipped with the reason. One model of the
// rows (workload_methods) for the console, the JSON and the HTML report.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/decision/verdict.h"
#include "iolab/harness/comparison.h"
#include "iolab/results/record.h"

namespace iolab::report {

struct WorkloadMethod {
  std::string method;
  bool pick = false;
  std::string skipped;    // why it could not replay the trace (then nothing else is set)
  std::string withdrawn;  // why its figures stopped counting, from which round
  std::string ruled_out;  // "out after 7 rounds, behind pread"
  bool verified = false;
  unsigned rounds = 0;    // trusted rounds
  unsigned queue_depth = 0;  // requests it kept in flight at most (the record's queue_depth); 0: not recorded
  // From the selection's rate (geometric mean over its rounds): every
  // method's pass does the same operations and moves the same bytes.
  double ops_per_s = 0, bytes_per_s = 0;
  double cpu_us_per_op = -1, device_bytes_per_op = -1;  // negative: not recorded
  std::optional<harness::RatioInterval> pick_over;      // the pick's rate over its
  nlohmann::json latency_by_kind = nlohmann::json::object();  // kind -> {p50_ns, p99_ns, samples}
};
std::vector<WorkloadMethod> workload_methods(const decision::ConditionVerdict& w,
                                             std::span<const results::Result> records);

// Two lines: "trace t: use pread (or stdio: within 1.05x of it, not told
// apart)" and how it stopped, with the guarantee asked.
std::string workload_summary(const decision::ConditionVerdict& w);

// The summary and a table of the methods.
std::string format_workload_text(const decision::ConditionVerdict& w, std::span<const results::Result> records);

// {"format": "iolab-trace-decision", "trace", "pick", "within" (the pick
// first), "stop", "methods": [{"method", "ops_per_s", "verified", ...} or
// {"method", "skipped"}], ...} (docs/replay.md).
nlohmann::json workload_json(const decision::ConditionVerdict& w, std::span<const results::Result> records);

}  // namespace iolab::report
