// Internal: the report as data, before any HTML: what each section shows,
// every figure already worded (plain text, not escaped), every chart as a
// Vega-Lite spec. html.cpp only lays it out.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "families.h"
#include "iolab/results/record.h"
#include "iolab/report/cost_model.h"
#include "iolab/report/decision_prediction.h"
#include "iolab/report/html.h"
#include "iolab/report/workload_text.h"
#include "iolab/decision/seed_rules.h"
#include "iolab/decision/verdict.h"

namespace iolab::report {

// Everything shown about one point of a chart: numbers for the chart, text
// for its tooltip and the figures table.
struct PointFacts {
  std::string series, x_text, experiment;
  double x = 0;
  double rate = 0, slowest = 0, fastest = 0;        // MiB/s or ops/s
  std::optional<double> p50, p99, p999;             // latency, ns
  double cpu = 0;                                   // s per GiB (bytes) or µs per op
  std::optional<double> published;                  // the seed's figure in the chart's unit
  std::optional<double> model;                      // the cost model's rate for this record's counts (block-size sweeps)
  std::string rate_t, spread_t, reps_t, latency_t, latency_source_t, cpu_t, faults_t, calls_t;
  std::string per_pass_t;     // one pass's and one operation's time (the record's seconds_per_pass, ns_per_op)
  std::string latency_kind;   // what one latency sample is: "call", "request" (queued, submission to completion), "operation"
  std::string cache_t;        // reads: cache state, how it was made, resident fraction
  std::string destination_t;  // writes: where the bytes ended (as the console says it)
  std::string flushes_t;      // writes with a flush policy: flushes per pass, bytes per flush
  std::string published_t;    // "seed 001: ... (theirs)"
  bool verified = false;
};
PointFacts facts_of(const Family& f, const Point& p);

struct FamilySection {
  std::string id;  // "chart-3"
  Family family;
  std::vector<std::string> explanation;  // sentences
  std::vector<PointFacts> points;
  bool has_reference = false, has_flushes = false;
  // The Vega-Lite spec, already serialized for the page's JSON script
  // (script_json()): kept as text, not as a JSON tree, so a report of many
  // families holds one tree at a time (issue 29 item 8).
  std::string chart_json;
};

// One record's line in a suite's warnings or skipped list.
struct RecordNote {
  std::string record;  // "pread, read 8m (read 4 KiB) [run.json]"
  std::string text;
};

struct SuiteSection {
  std::string suite;
  std::vector<FamilySection> families;
  std::vector<RecordNote> warnings, skipped;
  std::map<std::string, std::size_t> warning_kinds;  // kind -> records
  std::size_t records = 0;
};

// One replayed trace of a run (records of suite "replay", docs/replay.md):
// its timeline and, when `recommend --trace` judged it, the decision.
struct TraceSection {
  std::string name;        // the trace's name (the records' experiment)
  std::string id;          // its timeline chart's element id
  std::string chart_json;  // the timeline's Vega-Lite spec, serialized (script_json())
  std::string summary;     // the decision's two lines; empty when not judged
  std::vector<WorkloadMethod> methods;  // the decision's rows; empty when not judged
};
// The traces of a run's records, in first-seen order; `run` numbers the chart ids.
std::vector<TraceSection> trace_sections(const results::Results& results, const std::optional<decision::Decision>& d,
                                         std::size_t run);

struct RunSection {
  std::string label, created;
  // The run's decision (`iolab recommend`'s measurement), when its records hold one;
  // nothing is ranked from records that never met side by side.
  std::optional<decision::Decision> decision;
  std::string decision_problem;                   // why its decision records could not be read
  std::vector<decision::SeedRuleRow> seed_rules;  // the seeds' rules beside its picks
  DecisionPredictions predictions;                // the cost model between its measured sizes
  // The cost model of its sweeps (cost_model.h), when it holds any.
  std::optional<CostModel> cost_model;
  std::vector<std::pair<std::string, std::string>> environment;  // (what, value)
  std::optional<std::string> incomplete;
  std::vector<TraceSection> traces;
};

struct ReportModel {
  std::string title;
  std::size_t measured = 0, skipped = 0, unusable = 0;
  std::vector<SuiteSection> suites;
  std::vector<RunSection> runs;
  std::vector<std::string> bundle_names;
};

ReportModel build_model(const std::vector<results::Results>& runs, const ReportOptions& options);

}  // namespace iolab::report
