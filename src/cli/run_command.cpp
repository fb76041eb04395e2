// `iolab run`: runs suites (default: the seeds group) or a custom matrix of
// file experiments, prints a table per experiment group, and writes the
// results as JSON, CSV and an HTML report.
//
// This file declares the command and parses its options; run_execution.cpp
// runs what they say.

#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/results/console.h"
#include "iolab/fio/job.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/job.h"
#include "iolab/harness/limits.h"
#include "iolab/results/record.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/buffer.h"
#include "iolab/io/publish.h"
#include "iolab/io/scratch.h"
#include "iolab/report/exporter.h"
#include "iolab/report/output_files.h"
#include "iolab/suites/file_per_worker.h"
#include "iolab/suites/suite.h"
#include "iolab/base/units.h"
#include "run_plan.h"

namespace iolab::cli {

namespace {

// The group run when no suite is named (SuiteGroup::Seeds, suite.h).
constexpr const char* kSeedsGroup = "seeds";

// ---- parsing ---------------------------------------------------------------

Settings settings_from(const RunOptions& o) {
  Settings s;
  if (o.quick) {  // a first look: fewer and shorter repetitions, unless asked for more
    s.reps = 3;
    s.max_time = 1.0;
  }
  if (!o.reps.empty()) s.reps = static_cast<unsigned>(parse_count(o.reps, "--reps", harness::kRepsBounds.min, harness::kRepsBounds.max));
  if (!o.warmup.empty()) s.warmup = static_cast<unsigned>(parse_count(o.warmup, "--warmup", harness::kWarmupBounds.min, harness::kWarmupBounds.max));
  if (!o.seed.empty()) s.seed = parse_count(o.seed, "--seed");
  if (!o.min_time.empty()) s.min_time = parse_seconds(o.min_time, "--min-time", harness::kMaxMinTimeSeconds);
  if (!o.max_time.empty()) s.max_time = parse_seconds(o.max_time, "--max-time", harness::kMaxMaxTimeSeconds);
  return s;
}

std::vector<unsigned> thread_list(const std::string& text) {
  std::vector<unsigned> out;
  if (text.empty()) return out;
  for (const auto& item : harness::split_list(text, "--threads"))
    out.push_back(static_cast<unsigned>(parse_count(item, "--threads", harness::kThreadsBounds.min, harness::kThreadsBounds.max)));
  return out;
}

bool in_bounds(std::uint64_t n, harness::CountBounds b) { return n >= b.min && n <= b.max; }

// The rules run_plan relies on, from the parsed values (Action::recheck).
void recheck_run(const RunPlan& p) {
  const RunOptions& o = *p.given;
  const Settings& s = p.settings;
  if (!in_bounds(s.reps, harness::kRepsBounds) || !in_bounds(s.warmup, harness::kWarmupBounds))
    throw UsageError("--reps, --warmup", "out of bounds");
  if (!(s.min_time <= harness::kMaxMinTimeSeconds) || !(s.max_time <= harness::kMaxMaxTimeSeconds))
    throw UsageError("--min-time, --max-time", "out of bounds");
  harness::check_settings(engine_settings(s));
  using Source = RunPlan::Source;
  // One source of experiments, and only its options.
  const bool files = p.source == Source::Job || p.source == Source::Fio;
  if ((p.source == Source::Custom) == p.experiments.empty() || (p.source == Source::Suites) == p.chosen.empty() ||
      (p.source == Source::Fio) == o.fio_job.empty() || (p.source == Source::Job) == o.job.empty() ||
      (!o.suites.empty() && p.source != Source::Suites) || (files && !o.method.empty()))
    throw UsageError("run", "one of suites, a custom matrix, --job or --fio");
  refuse_fio_settings_alone(o);
  if (p.source != Source::Suites && (!o.scale.empty() || !o.records.empty() || !o.threads.empty() || !o.memory_limit.empty()))
    throw UsageError("--scale", "a suites option without suites");
  if (p.experiments.size() > harness::kMaxMatrixExperiments) throw UsageError("the matrix", "too many experiments");
  for (const auto& e : p.experiments)
    if (e.block_size == 0 || (e.file_size == 0 && e.ops == 0)) throw UsageError("the matrix", "an empty block or file");
  for (unsigned t : p.suite_options.threads)
    if (!in_bounds(t, harness::kThreadsBounds)) throw UsageError("--threads", "out of bounds");
  for (const auto* suite : p.chosen) suite->check(p.suite_options);
}
void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run suites (default: the seeds) or a custom matrix; print tables, write JSON and CSV");
  cmd->add_option("suites", o->suites, "Suites to run (see iolab suites); 'seeds' = the seed suites (default)");
  cmd->add_option("--scale", o->scale, "Sizes: tiny, quick, default (<= 5 min for the seeds) or full (the seeds' own sizes)");
  cmd->add_flag("--quick", o->quick,
                "A first look: --scale quick (each seed's headline rows), 3 repetitions of at least 100 ms, at most 1 s per experiment");
  cmd->add_option("--reps", o->reps, "Timed repetitions per experiment, 1 to 100000 (default 5; suites below --scale full: 3)")->type_name("N");
  cmd->add_option("--warmup", o->warmup, "Untimed repetitions before the timed ones, 0 to 1000 (default 1)")->type_name("N");
  cmd->add_option("--seed", o->seed, "Seed of the data pattern and of random offsets (default 0x10AB = 4267)")->type_name("N");
  cmd->add_option("--dir", o->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp); its filesystem is measured");
  cmd->add_option("--out", o->out,
                  "Results JSON, ending in .json (default results/iolab-<UTC time>-<pid>.json); the CSV and HTML "
                  "report beside it, same stem. Replaces only files iolab wrote");
  cmd->add_option("--records", o->records, "Store suite: number of records (default: per scale)")->type_name("N");
  cmd->add_option("--threads", o->threads, "Parallel suite: worker counts, e.g. 1,2,4");
  cmd->add_option("--memory-limit", o->memory_limit,
                  "Memory suite: the memory cgroup's limit, e.g. 256m (default: per scale; files are multiples of it)")
      ->type_name("SIZE");
  cmd->add_option("--job", o->job, "Run the matrix of a TOML job file: keys method, op, pattern, bs, size, ops, cache, buffer, sync, "
                  "qd, evict, latency (as the matrix options; a string \"4k,1m\" or a list), reps, warmup, seed");
  add_fio_file_options(
      cmd, *o,
      "Run the jobs of a fio job file (each job one experiment: rw, bs, size, ioengine, iodepth, direct, "
      "numjobs, fsync..., runtime/time_based/loops; other options refused; see docs/fio-jobs.md)",
      "Set a fio option in every job, after the job's own (repeatable), e.g. --fio-set size=64m --fio-set runtime=2",
      "Ignore fio options iolab does not map (each is listed in the records' warnings) instead of refusing the job "
      "file");
  auto* matrix = cmd->add_option_group("custom matrix", "Run exactly this matrix (suite 'custom'); lists are comma-separated");
  MatrixHelp matrix_help;
  matrix_help.method = "File methods, e.g. pread,mmap (see iolab methods)";
  matrix_help.op = "read, write (default read)";
  matrix_help.size = "File size (default 256m)";
  matrix_help.ops = "Calls per repetition instead of --size (file size = ops x block size)";
  matrix_help.cache = "warm, cold, direct (default warm)";
  matrix_help.sync = "none, end, every, every-16k (inline each 16 KiB), async-16k (background thread when 16 KiB are "
                     "dirty), optionally :fdatasync/:fsync/:msync (default none; the method's own sync otherwise)";
  matrix_help.qd = "Queue depths of queued methods (io_uring), e.g. 1,32 (default 32)";
  add_matrix_options(matrix, *o, matrix_help);
  cmd->add_option("--evict", o->evict, std::string("How 'cold' evicts: ") + kEvictChoices);
  cmd->add_flag("--no-latency", o->no_latency, "Skip the latency pass (every call timed, separately from throughput)");
  cmd->add_option("--min-time", o->min_time,
                  "Seconds (or 100ms, 1min...) each timed repetition lasts at least; short passes are repeated within "
                  "it (default 0.1)")
      ->type_name("TIME");
  cmd->add_option("--max-time", o->max_time,
                  "Wall seconds one experiment may take when its passes are repeated to reach --min-time, the untimed "
                  "work between passes (cache state, checks, fresh files) included (default 3)")
      ->type_name("TIME");
  cmd->footer(
      "Examples:\n"
      "  iolab run --quick\n"
      "  iolab run seq-read copy --scale default --reps 3\n"
      "  iolab run --method pread,mmap --op read --pattern seq --bs 4k,1m --size 1g --cache warm --reps 5 --out r.json\n"
      "  iolab run --job my-job.toml   # e.g. method = [\"pread\", \"mmap\"]  bs = \"4k,1m\"  size = \"1g\"  reps = 5\n"
      "  iolab run --fio /usr/share/doc/fio/examples/fio-seq-read.fio --fio-set size=256m --fio-set runtime=2 "
      "--fio-set directory=/tmp");

  cmd->callback([o, matrix, &action] {
    const bool custom = matrix->count_all() > 0;
    if (!o->fio_job.empty() && (custom || !o->job.empty() || !o->suites.empty()))
      throw UsageError("--fio", "a fio job file describes the whole run; give it alone (with run settings such as "
                                "--reps, --dir, --out)");
    refuse_fio_settings_alone(*o);
    if (!o->job.empty() && custom)
      throw UsageError("--job", "a job file describes the whole matrix; give it or the matrix options, not both");
    if ((custom || !o->job.empty()) && !o->suites.empty())
      throw UsageError("suites " + o->suites.front(), "give suites or a custom matrix, not both");
    const std::pair<bool, const char*> suites_only[] = {
        {!o->scale.empty(), "--scale"}, {!o->records.empty(), "--records"}, {!o->threads.empty(), "--threads"},
        {!o->memory_limit.empty(), "--memory-limit"}};
    if (custom || !o->job.empty() || !o->fio_job.empty())
      for (const auto& [given, name] : suites_only)
        if (given) throw UsageError(name, "applies to suites; a custom matrix has its own sizes");
    std::string scale = o->scale.empty() ? "default" : o->scale;
    if (o->quick) {
      if (!o->scale.empty() && o->scale != "quick") throw UsageError("--quick with --scale " + o->scale, "choose one");
      scale = "quick";
    }
    // Validate every value before any work starts: bad input is one line and exit 2.
    RunPlan plan;
    plan.given = o;
    plan.settings = settings_from(*o);
    if (!o->fio_job.empty()) {
      plan.source = RunPlan::Source::Fio;
    } else if (!o->job.empty()) {
      plan.source = RunPlan::Source::Job;
    } else if (custom) {
      plan.source = RunPlan::Source::Custom;
      plan.experiments = harness::expand(matrix_from(*o));
    } else {
      plan.source = RunPlan::Source::Suites;
      std::vector<std::string> names = o->suites.empty() ? std::vector<std::string>{kSeedsGroup} : o->suites;
      std::set<const suites::Suite*> seen;
      for (const auto& name : names) {
        std::vector<const suites::Suite*> add;
        if (name == kSeedsGroup) {
          add = suites::seed_suites();
        } else {
          add.push_back(&suites::find_suite(name));
        }
        for (const auto* s : add)
          if (seen.insert(s).second) plan.chosen.push_back(s);
      }
      if (plan.chosen.empty())
        throw Error("run", "the seeds group", "no suites are registered in this build; run a custom matrix (iolab run --method pread --bs 4k --size 64m)", ENOENT);
    }
    harness::check_settings(engine_settings(plan.settings));  // --warmup 0 with a min-time, ...: refused before any work
    suites::SuiteOptions& suite_options = plan.suite_options;
    suite_options.scale = suites::parse_scale(scale);
    if (!o->records.empty()) suite_options.records = parse_count(o->records, "--records", 1);
    suite_options.threads = thread_list(o->threads);
    if (!o->memory_limit.empty()) suite_options.memory_limit = parse_size(o->memory_limit, "--memory-limit");
    // An option no chosen suite reads would be ignored in silence: refused, naming the suites that read it.
    const std::vector<const suites::Suite*>& chosen = plan.chosen;
    for (const auto& [given, option] : {std::pair{!o->threads.empty(), "--threads"}, std::pair{!o->records.empty(), "--records"}}) {
      if (!given || chosen.empty()) continue;
      const char* const flag = option;  // a lambda cannot capture a structured binding in clang 14 (the fuzz build)
      if (std::any_of(chosen.begin(), chosen.end(), [&](const suites::Suite* s) { return s->reads_option(flag); })) continue;
      std::string readers;
      for (const auto* s : suites::all_suites())
        if (s->reads_option(flag)) readers += (readers.empty() ? "" : ", ") + std::string(s->name());
      std::string names;
      for (const auto* s : chosen) names += (names.empty() ? "" : ", ") + std::string(s->name());
      throw UsageError(flag, "no chosen suite reads it (" + names + "); it applies to " +
                                 (readers.empty() ? std::string("no suite in this build") : "the " + readers + " suite"));
    }
    for (const auto* s : chosen) s->check(suite_options);
    // Suites below the full scale take 3 repetitions unless asked: the seeds
    // group's ~360 experiments then fit the default run's 5 minutes here.
    if (!chosen.empty() && o->reps.empty() && suite_options.scale != suites::Scale::Full) plan.settings.reps = 3;
    if (!o->evict.empty()) plan.eviction = results::parse_eviction(o->evict);

    action.recheck = [plan] { recheck_run(plan); };
    action.run = [plan]() mutable { return run_plan(std::move(plan)); };
  });
}

const CommandRegistration run_registration{20, add_run_command};

}  // namespace

}  // namespace iolab::cli
