// `iolab report RESULTS.json... -o report.html`: one self-contained HTML page
// (charts inlined, opens offline) from one or more results files.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/results/record.h"
#include "iolab/report/exporter.h"
#include "iolab/report/files.h"
#include "iolab/report/html.h"

namespace iolab::cli {

namespace {

void add_report_command(CLI::App& app, Action& action) {
  struct Options {
    std::vector<std::string> inputs;
    std::string out = "report.html";
    std::string title = "iolab report";
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("report", "Write a self-contained HTML report (charts, explanations, decision table) from results files");
  cmd->add_option("results", opts->inputs, "Results files written by `iolab run` (JSON)")->required();
  cmd->add_option("-o,--out", opts->out,
                  "HTML page to write (default report.html), or a Markdown table (.md); not an input; replaces only a "
                  "report iolab wrote, atomically");
  cmd->add_option("--title", opts->title, "Page title");
  cmd->footer("Example:\n  iolab report results/run.json -o report.html\n  iolab report laptop.json server.json -o both.html");
  cmd->callback([opts, &action] {
    // Parsing: the name's own rule (.html or .md); the runner checks it against the inputs on disk.
    report::check_report_output(opts->out, {});
    action.recheck = [opts] { report::check_report_output(opts->out, {}); };
    action.run = [opts] {
      report::check_report_output(opts->out, {opts->inputs.begin(), opts->inputs.end()});
      std::vector<results::Results> runs;
      report::ReportOptions options;
      options.title = opts->title;
      for (const auto& in : opts->inputs) {
        runs.push_back(report::read_results_file(in));
        options.source_names.push_back(std::filesystem::path(in).filename().string());
      }
      std::string ext = std::filesystem::path(opts->out).extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (ext == ".md") {  // a table per results file, through the Markdown exporter
        std::string text;
        for (std::size_t i = 0; i < runs.size(); ++i)
          text += (i ? "\n" : "") + report::markdown_exporter().render(runs[i], report::ExportContext{opts->inputs[i], "", false});
        report::write_file_atomically(opts->out, text, report::markdown_exporter());
      } else {
        report::write_html_report(runs, opts->out, options);
      }
      fmt::print("wrote {}\n", opts->out);
      return 0;
    };
  });
}

const CommandRegistration report_registration{40, add_report_command};

}  // namespace
}  // namespace iolab::cli
