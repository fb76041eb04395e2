// The HTML report: one self-contained file (chart bundles inlined, no
// network) with, per suite, throughput vs block size per method, latency
// percentiles, CPU per GiB, the seeds' published figures, explanations
// generated from the data, warnings, the environment, and the decision table.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report {

struct ReportOptions {
  // A name per results file (e.g. its file name), shown in the report and used
  // to tell lines apart when several files are charted together. Missing
  // names become "run 1", "run 2", ...
  std::vector<std::string> source_names;
  std::string title = "iolab report";
};

// The whole page as text. Every string that comes from the results is escaped.
std::string render_html_report(const std::vector<results::Results>& runs, const ReportOptions& options = {});

// Renders and writes `out` atomically (write_file_atomically: a temporary file
// synced and renamed; parent directories created). Throws Error on I/O failure,
// leaving `out` as it was.
void write_html_report(const std::vector<results::Results>& runs, const std::filesystem::path& out,
                       const ReportOptions& options = {});

// The chart library's bundled JavaScript (Vega, Vega-Lite, vega-embed),
// embedded at build time from node_modules (see docs/report.md).
struct ChartBundle {
  std::string_view name;  // "vega", "vega-lite", "vega-embed"
  std::string_view text;
};
std::vector<ChartBundle> chart_bundles();

}  // namespace iolab::report
