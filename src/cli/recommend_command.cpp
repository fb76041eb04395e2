// `iolab recommend [RESULTS.json] [--json]`: this machine's decision table
// (op x packet band x flush policy x column -> winner, tie or undecided).
// Without a results file it runs the designed experiment (suites/decision.h)
// within --budget; with one it rebuilds the table from its records: the
// designed table when they came from `iolab recommend --save`, else the
// older table from whatever the run measured, marked as not designed.
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>

#include "app.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/report/exporter.h"
#include "iolab/report/decision_seeds.h"
#include "iolab/report/decision_table.h"
#include "iolab/report/files.h"
#include "iolab/report/output_files.h"
#include "iolab/report/recommend.h"
#include "iolab/suites/decision.h"

namespace iolab::cli {

namespace {

struct RecommendOptions {
  std::string input;
  bool json = false;
  std::string dir;
  std::string max_file = "32m";
  std::string memory_limit = "64m";  // the larger-than-memory column's page-cache room
  std::string save;
  std::string evict = "per-file";
  double min_time = 0.075;
  double budget = 570;
  unsigned min_rounds = 6, max_rounds = 60;
  std::uint64_t seed = 0x10AB;
};

harness::Results measure(const RecommendOptions& o, std::uint64_t max_file, std::uint64_t memory_room,
                         harness::Eviction eviction, const std::string& command) {
  io::ScratchDir scratch(o.dir);
  harness::Results out;
  out.environment = harness::collect_environment(scratch.path());
  out.environment.command = command;
  harness::RunConfig config;
  config.min_time = o.min_time;
  config.latency = false;
  config.eviction = eviction;
  harness::Runner runner(config, scratch);
  suites::DecisionSettings settings;
  settings.budget_s = o.budget;
  settings.min_rounds = o.min_rounds;
  settings.max_rounds = o.max_rounds;
  settings.seed = o.seed;
  settings.min_time = o.min_time;
  settings.min_time_floor = std::min(o.min_time, settings.min_time_floor);
  const bool tty = ::isatty(2) == 1;
  const std::uint64_t begin = steady_ns();
  settings.progress = [tty, begin](const std::string& line) {
    if (tty) std::fprintf(stderr, "[%4.0f s] %s\n", static_cast<double>(steady_ns() - begin) / 1e9, line.c_str());
  };
  out.results = suites::run_decision(runner, suites::decision_design(max_file, memory_room), settings);
  return out;
}

// The rules measure() relies on, from the parsed values (Action::recheck).
void recheck_recommend(const RecommendOptions& o, std::uint64_t max_file, std::uint64_t memory_room) {
  if (max_file < 4096) throw UsageError("--max-file " + o.max_file, "must be at least 4k");
  if (memory_room < suites::kMinMemoryRoom)
    throw UsageError("--memory-limit " + o.memory_limit, "must be at least " + size_label(suites::kMinMemoryRoom));
  if (!o.input.empty() && !o.save.empty()) throw UsageError("--save", "only applies when measuring (no results file given)");
  if (!(o.budget >= 1 && o.budget <= 86400)) throw UsageError("--budget", "from 1 to 86400 seconds");
  if (!(o.min_time >= 0 && o.min_time <= 3600)) throw UsageError("--min-time", "from 0 to 3600 seconds");
  if (o.min_rounds < 6 || o.max_rounds > 1000 || o.max_rounds < o.min_rounds)
    throw UsageError("--min-rounds, --max-rounds", "from 6 to 1000, --max-rounds at least --min-rounds");
}

void add_recommend_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RecommendOptions>();
  auto* cmd = app.add_subcommand(
      "recommend", "Print this machine's decision table: per op, packet band, flush policy and cache, the winning method, "
                   "a tie, or undecided, from interleaved rounds");
  cmd->add_option("results", opts->input,
                  "Results file (JSON) to decide from; without one, run the designed experiment now");
  cmd->add_flag("--json", opts->json, "Print the table as JSON");
  cmd->add_option("--dir", opts->dir, "When measuring: parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->add_option("--budget", opts->budget,
                  "When measuring: seconds for the whole table, a hard bound (default 570, so the run ends within 10 "
                  "minutes here): the plan shortens repetitions (down to 0.065 s) and leaves out cells whose minimum "
                  "rounds do not fit (\"not run: budget\"); time left over buys rounds for undecided cells")
      ->check(CLI::Range(1.0, 86400.0));  // a zero budget would measure nothing
  cmd->add_option("--min-rounds", opts->min_rounds,
                  "When measuring: rounds before a cell is first judged (default 6, the fewest with a 95% paired interval)")
      ->check(CLI::Range(6u, 1000u));
  cmd->add_option("--max-rounds", opts->max_rounds, "When measuring: rounds after which a cell stops undecided (default 60)")
      ->check(CLI::Range(6u, 1000u));
  cmd->add_option("--seed", opts->seed, "When measuring: seed of the rounds' orders (default 4267, recorded)");
  cmd->add_option("--max-file", opts->max_file, "When measuring: largest file per experiment (default 32m)");
  cmd->add_option("--memory-limit", opts->memory_limit,
                  "When measuring: the page cache the \"larger than memory\" column's memory cgroup leaves its file, "
                  "which is 4 times that (default 64m, at least 32m); the group's limit adds what the candidates' "
                  "buffers take");
  cmd->add_option("--min-time", opts->min_time,
                  "When measuring: seconds each repetition lasts at least, by repeating short passes (default 0.075, above the 50 ms under which a repetition is too short to trust); the budget's plan may shorten it to 0.065 s")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--evict", opts->evict,
                  "When measuring: how cold reads are made: per-file (default: fdatasync + fadvise of the file alone) or "
                  "drop_caches (root; empties the whole machine's page cache)");
  cmd->add_option("--save", opts->save, "When measuring: also write the measured results to this JSON file");
  cmd->footer("Examples:\n  iolab recommend --budget 300 --save table-run.json\n  iolab recommend table-run.json --json\n"
              "  iolab recommend results/run.json   (a run that was not designed: the older table, marked so)");
  cmd->callback([opts, &action] {
    std::uint64_t max_file = parse_size(opts->max_file);
    if (max_file < 4096) throw UsageError("--max-file " + opts->max_file, "must be at least 4k");
    const std::uint64_t memory_room = parse_size(opts->memory_limit);
    if (memory_room < suites::kMinMemoryRoom)
      throw UsageError("--memory-limit " + opts->memory_limit, "must be at least " + size_label(suites::kMinMemoryRoom));
    harness::Eviction eviction = harness::parse_eviction(opts->evict);
    if (!opts->input.empty() && !opts->save.empty()) throw UsageError("--save", "only applies when measuring (no results file given)");
    if (opts->max_rounds < opts->min_rounds) throw UsageError("--max-rounds", "must be at least --min-rounds");
    action.recheck = [opts, max_file, memory_room] { recheck_recommend(*opts, max_file, memory_room); };
    action.run = [opts, max_file, memory_room, eviction] {
      // --save: iolab run --out's rules (report/output_files.h), checked first, before measuring.
      std::shared_ptr<report::OutputFiles> save;
      if (!opts->save.empty()) {
        report::OutputRequest request;
        request.option = "--save";
        request.given = opts->save;
        request.kinds = report::output_kinds({&report::json_exporter()});
        save = std::make_shared<report::OutputFiles>(std::move(request));
      }
      int exit_code = 0;
      harness::Results results;
      if (!opts->input.empty()) {
        results = report::read_results_file(opts->input);
      } else {
        if (save) save->prepare();
        results = measure(*opts, max_file, memory_room, eviction,
                          fmt::format("iolab recommend --budget {} --min-rounds {} --max-rounds {} --seed {} "
                                      "--min-time {} --max-file {} --memory-limit {} --evict {}",
                                      opts->budget, opts->min_rounds, opts->max_rounds, opts->seed, opts->min_time,
                                      opts->max_file, opts->memory_limit, opts->evict));
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
      nlohmann::json j;
      std::string text;
      if (report::is_designed(results.results)) {
        report::DesignedTable table = report::designed_table(results.results);
        j = report::to_json(table);
        text = report::format_text(table);
        // The seeds' rules beside this machine's verdicts.
        std::vector<report::SeedRuleRow> rules = report::seed_rules(table);
        j["seed_rules"] = report::to_json(rules);
        text += report::format_text(rules);
      } else {
        report::DecisionTable table = report::decide(results.results);
        j = report::to_json(table);
        j["designed"] = false;
        text = "Not a designed comparison: these records were not measured side by side in interleaved rounds (run "
               "`iolab recommend` for that); the table below ranks what the run happened to measure.\n\n" +
               report::format_text(table);
      }
      if (opts->json) {
        j["source"] = opts->input.empty() ? nlohmann::json("measured now") : nlohmann::json(opts->input);
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        fmt::print("{}", text);
      }
      return exit_code;
    };
  });
}

const CommandRegistration recommend_registration{50, add_recommend_command};

}  // namespace
}  // namespace iolab::cli
