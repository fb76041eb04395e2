// `iolab recommend [RESULTS.json] [--json]`: this machine's decision table
// (op x packet size x flush policy x cache -> best method, margin, noise).
// Without a results file it measures the smallest set of experiments that
// fills the table, at small sizes.
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/report/exporter.h"
#include "iolab/report/files.h"
#include "iolab/report/output_files.h"
#include "iolab/report/recommend.h"
#include "iolab/base/units.h"

namespace iolab::cli {

namespace {

harness::Results measure(const std::string& dir, unsigned reps, double min_time, std::uint64_t max_file,
                         harness::Eviction eviction, const std::string& command) {
  io::ScratchDir scratch(dir);
  harness::Results out;
  out.environment = harness::collect_environment(scratch.path());
  out.environment.command = command;
  harness::RunConfig config;
  config.reps = reps;
  config.min_time = min_time;
  harness::Runner runner(config, scratch);
  auto experiments = report::table_experiments(max_file, eviction);
  const bool tty = ::isatty(2) == 1;
  std::size_t i = 0;
  for (const auto& e : experiments) {
    if (tty) {
      std::fprintf(stderr, "\r[%zu/%zu] %-40s", ++i, experiments.size(), (e.method + " " + e.experiment).c_str());
      std::fflush(stderr);
    }
    out.results.push_back(runner.run(e));
  }
  if (tty) std::fprintf(stderr, "\r%-60s\r", "");
  return out;
}

void add_recommend_command(CLI::App& app, Action& action) {
  struct Options {
    std::string input;
    bool json = false;
    std::string dir;
    unsigned reps = 3;
    std::string max_file = "64m";
    std::string save;
    std::string evict = "per-file";
    double min_time = 0.1;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("recommend", "Print this machine's decision table: the best method per op, packet size, flush policy and cache");
  cmd->add_option("results", opts->input, "Results file (JSON) to decide from; without one, measure the table's experiments now");
  cmd->add_flag("--json", opts->json, "Print the table as JSON");
  cmd->add_option("--dir", opts->dir, "When measuring: parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->add_option("--reps", opts->reps, "When measuring: timed repetitions per experiment (default 3, at least 2 to judge noise)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--max-file", opts->max_file, "When measuring: largest file per experiment (default 64m)");
  cmd->add_option("--min-time", opts->min_time,
                  "When measuring: seconds each repetition lasts at least, by repeating short passes (default 0.1)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--evict", opts->evict,
                  "When measuring: how cold reads are made: per-file (default: fdatasync + fadvise of the file alone) or "
                  "drop_caches (root; empties the whole machine's page cache)");
  cmd->add_option("--save", opts->save, "When measuring: also write the measured results to this JSON file");
  cmd->footer("Examples:\n  iolab recommend results/run.json\n  iolab recommend --json --save table-run.json");
  cmd->callback([opts, &action] {
    std::uint64_t max_file = parse_size(opts->max_file);
    if (max_file < 4096) throw UsageError("--max-file " + opts->max_file, "must be at least 4k");
    harness::Eviction eviction = harness::parse_eviction(opts->evict);
    if (!opts->input.empty() && !opts->save.empty()) throw UsageError("--save", "only applies when measuring (no results file given)");
    // --save: iolab run --out's rules (report/output_files.h), checked now and before measuring.
    std::shared_ptr<report::OutputFiles> save;
    if (!opts->save.empty()) {
      report::OutputRequest request;
      request.option = "--save";
      request.given = opts->save;
      request.kinds = report::output_kinds({&report::json_exporter()});
      save = std::make_shared<report::OutputFiles>(std::move(request));
    }
    action = [opts, max_file, eviction, save] {
      int exit_code = 0;
      harness::Results results;
      if (!opts->input.empty()) {
        results = report::read_results_file(opts->input);
      } else {
        if (save) save->prepare();
        results = measure(opts->dir, opts->reps, opts->min_time, max_file, eviction,
                          fmt::format("iolab recommend --reps {} --min-time {} --max-file {} --evict {}", opts->reps,
                                      opts->min_time, opts->max_file, opts->evict));
        if (save) {
          auto p = save->publish(
              [&](std::size_t, const std::filesystem::path& json) {
                return report::json_exporter().render(results, report::ExportContext{json, "", false});
              },
              report::fallback_dirs(io::ScratchDir::parent_for(opts->dir)));
          save->release();
          std::fprintf(stderr, "measured results: %s\n", printable(p.files.front().string()).c_str());
          if (p.problem) {
            std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
            exit_code = 1;  // the table is still printed: the measurement is not lost
          }
        }
      }
      report::DecisionTable table = report::decide(results.results);
      if (opts->json) {
        nlohmann::json j = report::to_json(table);
        j["source"] = opts->input.empty() ? nlohmann::json("measured now") : nlohmann::json(opts->input);
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        fmt::print("{}", report::format_text(table));
      }
      return exit_code;
    };
  });
}

const CommandRegistration recommend_registration{50, add_recommend_command};

}  // namespace
}  // namespace iolab::cli
