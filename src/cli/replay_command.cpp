// `iolab replay TRACE [--method LIST] [--timing]`: a recorded program's file
// I/O (a trace, docs/trace-format.md) replayed through each method that can
// express it, in interleaved rounds on the common engine, every read and
// every file verified (docs/replay.md). `recommend --trace` judges the same
// replays with the decision's selection (replay_run.h).
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/replay/replay.h"
#include "iolab/report/exporter.h"
#include "iolab/report/output_files.h"
#include "iolab/results/console.h"
#include "replay_run.h"

namespace iolab::cli {

namespace {

struct ReplayOptions {
  std::string trace;
  std::string method;
  bool timing = false, no_latency = false;
  unsigned rounds = 5;
  double min_time = 0.2, max_time = 10;
  std::string dir, out;
  std::uint64_t seed = 0x10AB;
};

void recheck_replay(const ReplayOptions& o) {
  if (o.trace.empty()) throw UsageError("iolab replay", "name the trace to replay (iolab trace records one)");
  methods_named(o.method);
  if (o.rounds < 1 || o.rounds > 10000) throw UsageError("--rounds", "from 1 to 10000");
  if (!(o.min_time >= 0 && o.min_time <= 3600)) throw UsageError("--min-time", "from 0 to 3600 seconds");
  if (!(o.max_time > 0 && o.max_time <= 86400)) throw UsageError("--max-time", "above 0, at most 86400 seconds");
}

int run_replay(const ReplayOptions& o) {
  const replay::Trace t = replay::read_trace(o.trace);
  const std::vector<const io::Method*> methods = methods_named(o.method);
  std::unique_ptr<report::OutputFiles> out;
  if (!o.out.empty()) {
    out = std::make_unique<report::OutputFiles>(report::results_request(o.out, o.trace, "the trace"));
    out->prepare();
  }
  // The hook before the scratch directory: a signal handled once the directory exists says what it did.
  io::InterruptHook say_interrupted([](int sig) {
    std::fprintf(stderr, "iolab: replay interrupted by %s; scratch files removed, nothing written\n",
                 io::signal_name(sig).c_str());
  });
  io::ScratchDir scratch(o.dir);
  results::Results results;
  results.environment = harness::collect_environment(scratch.path());
  results.environment.command = command_line();
  harness::RunConfig config;
  config.min_time = o.min_time;
  config.max_time = o.max_time;
  config.latency = !o.no_latency;
  harness::Runner runner(config, scratch);
  replay::Settings settings;
  settings.seed = o.seed;
  settings.timing = o.timing;
  std::fprintf(stderr, "%s\n", trace_summary(t, methods.size()).c_str());
  results.results = replay::replay_methods(runner, t, methods, settings, o.rounds);
  fmt::print("{}", results::format_tables(results.results, results::use_color(stdout)));
  fmt::print("{}", latency_by_kind_text(results.results));
  if (!out) return 0;
  const auto p =
      report::publish_results(*out, results, report::results_exporters(), io::ScratchDir::parent_for(o.dir));
  std::fprintf(stderr, "results: %s\n", printable(p.files.front().string()).c_str());
  if (p.problem) {
    std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
    return 1;
  }
  return 0;
}

void add_replay_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReplayOptions>();
  auto* cmd = app.add_subcommand(
      "replay", "Replay a trace (iolab trace) through each access method that can express it, in interleaved rounds, "
                "every read and file verified");
  cmd->add_option("trace", opts->trace, "The trace to replay (.iotrace, written by iolab trace)");
  cmd->add_option("--method", opts->method, "Only these methods, e.g. pread,mmap,io_uring (default: every method)");
  cmd->add_flag("--timing", opts->timing,
                "Keep the recorded gaps between operations (default: as fast as possible); the timed figure then "
                "includes them");
  cmd->add_option("--rounds", opts->rounds, "Rounds of every method, interleaved (default 5)");
  cmd->add_option("--min-time", opts->min_time,
                  "Seconds each repetition lasts at least, by replaying the trace several times (default 0.2)");
  cmd->add_option("--max-time", opts->max_time,
                  "Wall seconds one method's replays may take when repeated to reach --min-time, the untimed work "
                  "between passes (fresh files, checks) included (default 10: a trace of many files takes time to "
                  "make again before every pass)");
  cmd->add_flag("--no-latency", opts->no_latency, "Skip the pass that times every operation alone (p50/p99 per kind)");
  cmd->add_option("--seed", opts->seed, "Seed of the write pattern and the rounds' orders (default 4267)");
  cmd->add_option("--dir", opts->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->add_option("--out", opts->out,
                  "Also write the records to this JSON file (with .csv and .html beside it), for iolab report");
  cmd->footer("Examples:\n  iolab replay examples/traces/sqlite-insert.iotrace\n"
              "  iolab replay app.iotrace --method pread,mmap,io_uring --out replay.json\n"
              "  iolab recommend --trace app.iotrace   # the method to use for it, with a guarantee");
  act_on(cmd, action, opts, recheck_replay, run_replay);
}

const CommandRegistration replay_registration{67, add_replay_command};

}  // namespace
}  // namespace iolab::cli
