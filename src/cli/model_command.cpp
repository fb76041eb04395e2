// `iolab model RESULTS.json... [--json] [--save [FILE]]`: why, as a model
// (issue 42): per method, op, cache column and flush policy, the cost of a
// call, a byte, a page fault, a flush and a system call fitted from the
// sweeps' records, with intervals, the sizes where methods cross, and how
// well each fit predicts a size it did not see (report/cost_model.h,
// docs/model.md). --save keeps it as this machine's profile.
#include <fmt/core.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/decision/verdict.h"
#include "iolab/report/cost_model.h"
#include "iolab/report/files.h"
#include "iolab/report/output_files.h"
#include "iolab/results/record.h"
#include "iolab/version.h"

namespace iolab::cli {

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

void add_model_command(CLI::App& app, Action& action) {
  struct Options {
    std::vector<std::string> inputs;
    bool json = false;
    std::string save;
    bool save_given = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "model", "Fit per-call, per-byte, per-fault, per-flush and per-system-call costs of each method from sweeps; "
                "crossovers, validation; --save: this machine's profile");
  cmd->add_option("results", opts->inputs, "Results files (JSON) holding sweeps (packet-sweep, seq-read, write-path)")
      ->required();
  cmd->add_flag("--json", opts->json,
                "Print the model as JSON: coefficients with intervals, loo_median_abs_error, loo_p90_abs_error, validation");
  auto* save = cmd->add_option("--save", opts->save,
                               "Also write the model as this machine's profile (JSON; without FILE: "
                               "results/model-<UTC time>-<pid>.json); an existing file is replaced only if it is a profile")
                   ->expected(0, 1);
  cmd->footer("Examples:\n  iolab run packet-sweep --quick --out sweep.json && iolab model sweep.json\n"
              "  iolab model sweep.json --json\n  iolab model sweep.json --save this-machine.json");
  cmd->callback([opts, save, &action] {
    opts->save_given = save->count() > 0;
    action.run = [opts] {
      // --save: `run --out`'s rules (report/output_files.h), checked before any fitting.
      std::unique_ptr<report::OutputFiles> out;
      if (opts->save_given) {
        report::OutputRequest request;
        request.option = "--save";
        request.given = opts->save;
        request.program = "model";
        request.kinds = {{".json", [](std::string_view head) { return report::is_model_profile(head); }}};
        for (const auto& in : opts->inputs) request.inputs.emplace_back(in);
        request.input_kind = "a results file it is fitted from";
        out = std::make_unique<report::OutputFiles>(std::move(request));
        out->prepare();
      }
      std::vector<results::Results> files;
      std::vector<results::Result> records;
      std::string names;
      for (const auto& in : opts->inputs) {
        files.push_back(report::read_results_file(in));
        for (const auto& x : files.back().results) records.push_back(x);
        names += (names.empty() ? "" : ", ") + in;
      }
      const report::CostModel m = report::fit_cost_model(records);
      if (m.fits.empty())
        throw UsageError(names, "holds no sweep records: no method was measured at 3 or more block sizes with the same "
                                "op, cache state and flush policy (`iolab run packet-sweep`, `seq-read` or `write-path` "
                                "measures such sweeps)");
      std::string profile;
      if (out) {
        std::vector<report::ProfileSource> sources;
        for (std::size_t i = 0; i < files.size(); ++i) sources.push_back({opts->inputs[i], &files[i].environment});
        profile = report::profile_json(m, sources, {utc_now(), kVersion, git_commit()}).dump(2) + "\n";
      }
      // The files hold a decision too: its pick changes against the model's crossovers.
      // A decision of an older design cannot be replayed: the model still stands, the check is said not made.
      std::optional<std::vector<report::CrossoverCheck>> checks;
      std::string not_checked;
      if (decision::holds_decision(records)) try {
          checks = report::check_crossovers(m, decision::decision_from_records(records), records);
        } catch (const Error& e) {
          not_checked = one_line(e.what());
        }
      if (opts->json) {
        nlohmann::json j = report::to_json(m);
        j["sources"] = opts->inputs;
        if (checks) j["decision_check"] = report::to_json(*checks);
        if (!not_checked.empty()) j["decision_check"] = {{"not_checked", not_checked}};
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        fmt::print("{}", report::format_text(m));
        if (checks) fmt::print("\n{}", report::crossover_check_text(*checks));
        if (!not_checked.empty()) fmt::print("\nCrossovers against the decision map: not checked: {}\n", not_checked);
      }
      if (!out) return 0;
      auto p = out->publish([&](std::size_t, const std::filesystem::path&) { return profile; }, report::fallback_dirs({}));
      out->release();
      std::fflush(stdout);
      std::fprintf(stderr, "model profile: %s\n", printable(p.files.front().string()).c_str());
      if (p.problem) {
        std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
        return 1;
      }
      return 0;
    };
  });
}

const CommandRegistration model_registration{62, add_model_command};

}  // namespace
}  // namespace iolab::cli
