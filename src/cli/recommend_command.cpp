// `iolab recommend [RESULTS.json] [--json]`: this machine's decision, per
// condition (op, packet size, flush policy, cache column) the method to
// use, with its guarantee. Without a results file it measures (the whole
// map within --budget, or exactly the conditions --op/--bs/--flush/--cache
// name); with one saved by `recommend --save` it replays the same decision
// from its records. A file of other records holds no decision: nothing is
// ranked from records that were never measured side by side. With --trace
// it decides for a recorded program instead: the trace replayed through
// each method, the same selection and guarantee (suites/trace_decision.h).
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>

#include "app.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/decision/design.h"
#include "iolab/decision/seed_rules.h"
#include "iolab/decision/verdict.h"
#include "iolab/results/record.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/memory_cgroup.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/report/decision_prediction.h"
#include "iolab/report/decision_text.h"
#include "iolab/report/workload_text.h"
#include "iolab/report/exporter.h"
#include "iolab/report/files.h"
#include "iolab/report/output_files.h"
#include "iolab/suites/decision.h"
#include "iolab/suites/trace_decision.h"
#include "replay_run.h"

namespace iolab::cli {

namespace {

struct RecommendOptions {
  std::string input;
  bool json = false, explain = false;
  std::string dir;
  std::string max_file = "32m";
  std::string memory_limit = "64m";  // the past-memory columns' page-cache room
  std::string save;
  std::string evict = "per-file";
  std::string op, bs, flush, cache;  // the user's own conditions (lists)
  std::string trace, method;         // --trace: a recorded program's I/O, replayed through these methods
  bool timing = false;
  double indifference = decision::Guarantee{}.indifference, confidence = decision::Guarantee{}.confidence;
  double min_time = 0.075;
  bool min_time_given = false;  // --trace's default is its own (kTraceMinTime)
  double budget = 570;
  unsigned first_stage = decision::kFirstStage, max_rounds = 400;
  std::uint64_t seed = 0x10AB;
};

// What the options ask to measure; throws UsageError naming the option.
decision::DesignRequest request_of(const RecommendOptions& o) {
  decision::DesignRequest r;
  r.max_file = parse_size(o.max_file, "--max-file");
  if (r.max_file < 4096) throw UsageError("--max-file " + o.max_file, "must be at least 4k");
  r.memory_room = parse_size(o.memory_limit, "--memory-limit");
  harness::check_memory_limit(r.memory_room, decision::kMinMemoryRoom, "--memory-limit " + o.memory_limit,
                              "the past-memory columns need that much page cache to be measured against");
  if (!o.op.empty())
    for (const auto& s : harness::split_list(o.op, "--op")) r.ops.push_back(results::parse_op(s));
  if (!o.bs.empty())
    for (const auto& s : harness::split_list(o.bs, "--bs")) {
      const std::uint64_t b = parse_size(s, "--bs");
      if (b == 0 || b > (std::uint64_t{1} << 30)) throw UsageError("--bs " + s, "a packet from 1 byte to 1g");
      r.sizes.push_back(b);
    }
  if (!o.flush.empty())
    for (const auto& s : harness::split_list(o.flush, "--flush")) {
      if (std::find(std::begin(decision::kFlushes), std::end(decision::kFlushes), s) == std::end(decision::kFlushes))
        throw UsageError("--flush " + s, "expected none, end, every-16k, async-16k or every");
      r.flushes.push_back(s);
    }
  if (!o.cache.empty())
    for (const auto& s : harness::split_list(o.cache, "--cache")) {
      auto c = decision::column_named(s);
      if (!c)
        throw UsageError("--cache " + s,
                         "expected warm, cold, direct, past-memory, past-memory-direct (reads) or buffered, direct (writes)");
      r.columns.push_back(*c);
    }
  if (decision::rows(r).empty())
    throw UsageError("--op, --flush, --cache", "they name no condition together (reads have no flush policy but none; "
                                               "writes go to the buffered or direct column)");
  return r;
}

decision::Guarantee guarantee_of(const RecommendOptions& o) {
  decision::Guarantee g{o.indifference, o.confidence};
  if (auto problem = decision::guarantee_problem(g))
    throw UsageError(fmt::format("--indifference {}, --confidence {}", o.indifference, o.confidence), *problem);
  return g;
}

// The rules measure() relies on, from the parsed values (Action::recheck).
void recheck_recommend(const RecommendOptions& o) {
  request_of(o);
  guarantee_of(o);
  if (!o.input.empty() && !o.save.empty()) throw UsageError("--save", "only applies when measuring (no results file given)");
  if (!o.trace.empty()) {
    if (!o.input.empty()) throw UsageError("--trace", "measures now; it takes no results file");
    if (!o.op.empty() || !o.bs.empty() || !o.flush.empty() || !o.cache.empty())
      throw UsageError("--trace", "the trace's own operations are the workload: --op, --bs, --flush and --cache do not apply");
    methods_named(o.method);
  } else if (!o.method.empty() || o.timing) {
    throw UsageError(o.timing ? "--timing" : "--method", "applies with --trace");
  }
  if (!(o.budget >= 1 && o.budget <= 86400)) throw UsageError("--budget", "from 1 to 86400 seconds");
  if (!(o.min_time >= 0 && o.min_time <= 3600)) throw UsageError("--min-time", "from 0 to 3600 seconds");
  if (o.first_stage < 2 || o.first_stage > 100) throw UsageError("--first-stage", "from 2 to 100 rounds");
  if (o.max_rounds < o.first_stage || o.max_rounds > 100000)
    throw UsageError("--max-rounds", "from --first-stage to 100000");
}

results::Results measure(const RecommendOptions& o, const decision::DesignRequest& request,
                         results::Eviction eviction, const std::string& command) {
  io::ScratchDir scratch(o.dir);
  results::Results out;
  out.environment = harness::collect_environment(scratch.path());
  out.environment.command = command;
  harness::RunConfig config;
  config.min_time = o.min_time;
  config.latency = false;
  config.eviction = eviction;
  harness::Runner runner(config, scratch);
  decision::ScheduleSettings settings;
  settings.budget_s = o.budget;
  settings.guarantee = guarantee_of(o);
  settings.first_stage = o.first_stage;
  settings.max_rounds = o.max_rounds;
  settings.min_time = o.min_time;
  settings.min_time_floor = std::min(o.min_time, settings.min_time_floor);
  const bool tty = ::isatty(2) == 1;
  const std::uint64_t begin = steady_ns();
  settings.progress = [tty, begin](const std::string& line) {
    // The plan always (it says what will be measured); a line per condition on a terminal.
    if (tty || line.starts_with("plan:"))
      std::fprintf(stderr, "[%4.0f s] %s\n", static_cast<double>(steady_ns() - begin) / 1e9, line.c_str());
  };
  // On a plan's sizes (not the user's own), one more condition where the
  // cost model puts two picks' crossing between measured sizes, on the time left.
  suites::ExtraConditions extra;
  if (request.sizes.empty()) extra = [](const std::vector<results::Result>& r) { return report::crossing_conditions(r); };
  out.results = suites::run_decision(runner, request, settings, o.seed, extra).records;
  return out;
}

// A replayed trace's repetitions last at least this by default: a whole
// trace per pass, its syncs waiting for a device whose speed swings, needs
// more headroom over the 50 ms too-short bound than a condition's calls.
constexpr double kTraceMinTime = 0.2;
double trace_min_time(const RecommendOptions& o) { return o.min_time_given ? o.min_time : kTraceMinTime; }

// --trace: the trace's replays through each method, judged by the decision's selection.
results::Results measure_trace(const RecommendOptions& o, const std::string& command) {
  const replay::Trace t = replay::read_trace(o.trace);
  const std::vector<const io::Method*> methods = methods_named(o.method);
  io::ScratchDir scratch(o.dir);
  results::Results out;
  out.environment = harness::collect_environment(scratch.path());
  out.environment.command = command;
  harness::RunConfig config;
  config.min_time = trace_min_time(o);
  config.max_time = 10;  // as iolab replay's: a trace's files are made again before every pass
  harness::Runner runner(config, scratch);
  suites::TraceDecisionSettings settings;
  settings.guarantee = guarantee_of(o);
  settings.first_stage = o.first_stage;
  settings.max_rounds = o.max_rounds;
  settings.budget_s = o.budget;
  settings.seed = o.seed;
  const std::uint64_t begin = steady_ns();
  settings.progress = [begin](const std::string& line) {
    std::fprintf(stderr, "[%4.0f s] %s\n", static_cast<double>(steady_ns() - begin) / 1e9, line.c_str());
  };
  replay::Settings replay;
  replay.seed = o.seed;
  replay.timing = o.timing;
  std::fprintf(stderr, "%s\n", trace_summary(t, methods.size()).c_str());
  out.results = suites::decide_trace(runner, t, methods, replay, settings);
  return out;
}

// What the records decided: the design's conditions (the map), and each workload's verdict (a replayed trace).
void print_decision(const RecommendOptions& o, const results::Results& results) {
  const decision::Decision d = decision::decision_from_records(results.results);
  const bool map = !d.conditions.empty() || d.workloads.empty();
  // The cost model between the measured sizes: predicted, marked, never counted as measured.
  const report::DecisionPredictions predicted =
      d.conditions.empty() ? report::DecisionPredictions{} : report::predict_decision(d, results.results);
  if (o.json) {
    nlohmann::json j;
    if (!o.trace.empty() && d.workloads.size() == 1) {
      j = report::workload_json(d.workloads.front(), results.results);  // scripts read pick, within, stop, methods
    } else {
      j = decision::to_json(d);
      report::add_predictions(j, predicted);
      if (map) j["seed_rules"] = decision::to_json(decision::seed_rules(d));
      nlohmann::json w = nlohmann::json::array();
      for (const auto& v : d.workloads) w.push_back(report::workload_json(v, results.results));
      if (!w.empty()) j["workloads"] = std::move(w);
    }
    j["source"] = o.input.empty() ? nlohmann::json("measured now") : nlohmann::json(o.input);
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  if (map) fmt::print("{}{}", report::format_text(d, o.explain, &predicted), report::format_text(decision::seed_rules(d)));
  for (const auto& v : d.workloads) fmt::print("{}{}", map ? "\n" : "", report::format_workload_text(v, results.results));
}

void add_recommend_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RecommendOptions>();
  auto* cmd = app.add_subcommand(
      "recommend", "Print this machine's decision: per op, packet size, flush policy and cache column, the method to "
                   "use, picked by a sequential selection with a stated guarantee from interleaved rounds");
  cmd->add_option("results", opts->input,
                  "Results file saved by `iolab recommend --save` to replay the decision from; without one, measure now");
  cmd->add_flag("--json", opts->json, "Print the decision as JSON (conditions, rows, the seeds' rules)");
  cmd->add_flag("--explain", opts->explain, "Add a line of why per condition: the counters, the best method ruled out");
  cmd->add_option("--op", opts->op, "When measuring: only these ops (read,write)");
  cmd->add_option("--bs", opts->bs,
                  "When measuring: exactly these packet sizes (e.g. 700,64k) instead of the planned grid");
  cmd->add_option("--flush", opts->flush, "When measuring: only these flush policies of writes (none,end,every-16k,async-16k,every)");
  cmd->add_option("--cache", opts->cache,
                  "When measuring: only these columns (reads: warm,cold,direct,past-memory,past-memory-direct; writes: "
                  "buffered,direct)");
  cmd->add_option("--indifference", opts->indifference,
                  "The difference not worth telling apart, as a ratio of rates (default 1.05: the pick is within 5% of "
                  "the best); the budget may widen it to 1.10 for a row whose rounds it cannot pay, and says so");
  cmd->add_option("--confidence", opts->confidence,
                  "The probability that the pick is within the indifference of the best (default 0.95)");
  cmd->add_option("--dir", opts->dir, "When measuring: parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->add_option("--budget", opts->budget,
                  "When measuring: seconds for the whole decision, a hard bound (default 570, so a run ends within 10 "
                  "minutes): the plan thins the sizes (every 4x, 16x or 64x) to what this machine can measure in it");
  cmd->add_option("--first-stage", opts->first_stage,
                  "When measuring: rounds of every candidate before the first elimination (default 6)");
  cmd->add_option("--max-rounds", opts->max_rounds, "When measuring: rounds after which a condition stops (default 400)");
  cmd->add_option("--seed", opts->seed, "When measuring: seed of the rounds' orders (default 4267, recorded)");
  cmd->add_option("--max-file", opts->max_file, "When measuring: largest file per experiment (default 32m)");
  cmd->add_option("--memory-limit", opts->memory_limit,
                  "When measuring: the page cache the past-memory columns' memory cgroup leaves their file, which is 4 "
                  "times that (default 64m, at least 32m); the group's limit adds what the candidates' buffers take");
  auto* min_time = cmd->add_option("--min-time", opts->min_time,
                  "When measuring: seconds each repetition lasts at least, by repeating short passes (default 0.075, "
                  "above the 50 ms under which a repetition is too short to trust); the plan may shorten it to 0.065 s. "
                  "With --trace: default 0.2, a whole trace per pass");
  cmd->add_option("--evict", opts->evict, std::string("When measuring: how cold reads are made: ") + kEvictChoices);
  cmd->add_option("--save", opts->save, "When measuring: also write the measured records to this JSON file");
  cmd->add_option("--trace", opts->trace,
                  "Decide for a recorded program (iolab trace): its trace replayed through each method that can "
                  "express it, the best picked with the same guarantee");
  cmd->add_option("--method", opts->method, "With --trace: only these methods (default: every method)");
  cmd->add_flag("--timing", opts->timing, "With --trace: keep the trace's recorded gaps between operations");
  cmd->footer("Examples:\n  iolab recommend --save decision.json\n  iolab recommend --op write --bs 700,64k --flush every-16k\n"
              "  iolab recommend decision.json --json --explain\n  iolab recommend --trace app.iotrace --json");
  cmd->callback([opts, &action, min_time] {
    opts->min_time_given = min_time->count() > 0;
    const decision::DesignRequest request = request_of(*opts);
    const results::Eviction eviction = results::parse_eviction(opts->evict);
    recheck_recommend(*opts);
    action.recheck = [opts] { recheck_recommend(*opts); };
    action.run = [opts, request, eviction] {
      // --save: iolab run --out's rules (report/output_files.h), checked first, before measuring.
      std::shared_ptr<report::OutputFiles> save;
      if (!opts->save.empty()) {
        report::OutputRequest out;
        out.option = "--save";
        out.given = opts->save;
        out.kinds = report::output_kinds({&report::json_exporter()});
        save = std::make_shared<report::OutputFiles>(std::move(out));
      }
      int exit_code = 0;
      results::Results results;
      if (!opts->input.empty()) {
        results = report::read_results_file(opts->input);
        if (!decision::holds_decision(results.results))
          throw UsageError(opts->input, "holds no decision: its records were not measured side by side as candidates "
                                        "(`iolab run` measures experiments; `iolab recommend --save FILE` measures a "
                                        "decision and keeps it)");
      } else {
        if (save) save->prepare();
        // A signal mid-measurement (io/scratch.h): the scratch directory and
        // --save's lock go, and this says so rather than end in silence.
        io::InterruptHook say_interrupted([saving = save != nullptr](int sig) {
          std::fprintf(stderr, "iolab: recommend interrupted by %s before the decision was made; scratch files removed, "
                               "no decision printed%s\n",
                       io::signal_name(sig).c_str(), saving ? " and nothing saved (--save is written once the decision is made)" : "");
        });
        results = !opts->trace.empty()
                      ? measure_trace(*opts, fmt::format("iolab recommend --trace {} --budget {} --indifference {} "
                                                         "--confidence {} --first-stage {} --max-rounds {} --seed {} "
                                                         "--min-time {}{}{}",
                                                         opts->trace, opts->budget, opts->indifference,
                                                         opts->confidence, opts->first_stage, opts->max_rounds,
                                                         opts->seed, trace_min_time(*opts),
                                                         opts->method.empty() ? "" : " --method " + opts->method,
                                                         opts->timing ? " --timing" : ""))
                      : measure(*opts, request, eviction,
                          fmt::format("iolab recommend --budget {} --indifference {} --confidence {} --first-stage {} "
                                      "--max-rounds {} --seed {} --min-time {} --max-file {} --memory-limit {} --evict {}{}{}{}{}",
                                      opts->budget, opts->indifference, opts->confidence, opts->first_stage,
                                      opts->max_rounds, opts->seed, opts->min_time, opts->max_file, opts->memory_limit,
                                      opts->evict, opts->op.empty() ? "" : " --op " + opts->op,
                                      opts->bs.empty() ? "" : " --bs " + opts->bs,
                                      opts->flush.empty() ? "" : " --flush " + opts->flush,
                                      opts->cache.empty() ? "" : " --cache " + opts->cache));
        if (save) {
          const auto p = report::publish_results(*save, results, {&report::json_exporter()},
                                                 io::ScratchDir::parent_for(opts->dir));
          std::fprintf(stderr, "measured results: %s\n", printable(p.files.front().string()).c_str());
          if (p.problem) {
            std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
            exit_code = 1;  // the decision is still printed: the measurement is not lost
          }
        }
      }
      print_decision(*opts, results);
      return exit_code;
    };
  });
}

const CommandRegistration recommend_registration{50, add_recommend_command};

}  // namespace
}  // namespace iolab::cli
