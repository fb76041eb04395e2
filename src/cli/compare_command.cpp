// `iolab compare A.json B.json [--markdown]`: the same experiments in two
// runs, as ratios with their uncertainty; differences inside the noise are
// marked not significant; experiments in only one run are listed.
#include <fmt/core.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/results/record.h"
#include "iolab/report/compare.h"
#include "iolab/report/files.h"

namespace iolab::cli {

namespace {

// The same record twice in one file (concatenated runs, a copy-paste) is one
// measurement: counted once, and said so, not weighed twice.
void drop_duplicates(results::Results& r, const std::string& file) {
  std::set<std::string> seen;
  std::vector<results::Result> kept;
  kept.reserve(r.results.size());
  for (auto& x : r.results)
    if (seen.insert(results::to_json(x).dump()).second) kept.push_back(std::move(x));
  const std::size_t dropped = r.results.size() - kept.size();
  r.results = std::move(kept);
  if (dropped > 0)
    std::fprintf(stderr, "iolab: warning: %s: %zu record%s repeat%s an earlier one exactly; each is counted once\n",
                 printable(file).c_str(), dropped, dropped == 1 ? "" : "s", dropped == 1 ? "s" : "");
}

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
    action.run = [opts] {
      results::Results a = report::read_results_file(opts->a);
      results::Results b = report::read_results_file(opts->b);
      drop_duplicates(a, opts->a);
      drop_duplicates(b, opts->b);
      report::Comparison c = report::compare(a, b);
      fmt::print("{}", opts->markdown ? report::format_markdown(c, opts->a, opts->b) : report::format_text(c, opts->a, opts->b));
      return 0;
    };
  });
}

const CommandRegistration compare_registration{60, add_compare_command};

}  // namespace
}  // namespace iolab::cli
