// `iolab model RESULTS.json... [--json]`: why, as a model (issue 42): per
// method, op, cache column and flush policy, the cost of a call, a byte, a
// page fault and a flush fitted from the sweeps' records, with intervals,
// the sizes where methods cross, and how well each fit predicts a size it
// did not see (report/cost_model.h, docs/model.md).
#include <fmt/core.h>

#include <string>
#include <vector>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/report/cost_model.h"
#include "iolab/report/files.h"
#include "iolab/results/record.h"

namespace iolab::cli {

namespace {

void add_model_command(CLI::App& app, Action& action) {
  struct Options {
    std::vector<std::string> inputs;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "model", "Fit per-call, per-byte, per-fault and per-flush costs of each method from sweeps; crossovers, validation");
  cmd->add_option("results", opts->inputs, "Results files (JSON) holding sweeps (packet-sweep, seq-read, write-path)")
      ->required();
  cmd->add_flag("--json", opts->json,
                "Print the model as JSON: coefficients with intervals, loo_median_abs_error, loo_p90_abs_error, validation");
  cmd->footer("Examples:\n  iolab run packet-sweep --quick --out sweep.json && iolab model sweep.json\n"
              "  iolab model sweep.json --json");
  cmd->callback([opts, &action] {
    action.run = [opts] {
      std::vector<harness::Result> records;
      std::string names;
      for (const auto& in : opts->inputs) {
        harness::Results r = report::read_results_file(in);
        for (auto& x : r.results) records.push_back(std::move(x));
        names += (names.empty() ? "" : ", ") + in;
      }
      const report::CostModel m = report::fit_cost_model(records);
      if (m.fits.empty())
        throw UsageError(names, "holds no sweep records: no method was measured at 3 or more block sizes with the same "
                                "op, cache state and flush policy (`iolab run packet-sweep`, `seq-read` or `write-path` "
                                "measures such sweeps)");
      if (opts->json) {
        nlohmann::json j = report::to_json(m);
        j["sources"] = opts->inputs;
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        fmt::print("{}", report::format_text(m));
      }
      return 0;
    };
  });
}

const CommandRegistration model_registration{62, add_model_command};

}  // namespace
}  // namespace iolab::cli
