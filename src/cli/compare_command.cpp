// `iolab compare A.json B.json [--markdown]`: the same experiments in two
// runs, as ratios with their uncertainty; differences inside the noise are
// marked not significant; experiments in only one run are listed.
#include <fmt/core.h>

#include "app.h"
#include "iolab/harness/result.h"
#include "iolab/report/compare.h"
#include "iolab/report/files.h"

namespace iolab::cli {

namespace {

void add_compare_command(CLI::App& app, Action& action) {
  struct Options {
    std::string a, b;
    bool markdown = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("compare", "Compare two results files: ratios with uncertainty, hyperfine-style");
  cmd->add_option("A", opts->a, "Baseline results file (JSON)")->required();
  cmd->add_option("B", opts->b, "Results file compared with A (JSON)")->required();
  cmd->add_flag("--markdown", opts->markdown, "Print a Markdown table");
  cmd->footer("Example:\n  iolab compare before.json after.json --markdown");
  cmd->callback([opts, &action] {
    action = [opts] {
      harness::Results a = report::read_results_file(opts->a);
      harness::Results b = report::read_results_file(opts->b);
      report::Comparison c = report::compare(a, b);
      fmt::print("{}", opts->markdown ? report::format_markdown(c, opts->a, opts->b) : report::format_text(c, opts->a, opts->b));
      return 0;
    };
  });
}

const CommandRegistration compare_registration{60, add_compare_command};

}  // namespace
}  // namespace iolab::cli
