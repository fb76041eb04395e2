// `iolab run`: runs suites (default: the seeds group) or a custom matrix of
// file experiments, prints a table per experiment group, and writes the
// results as JSON, CSV and an HTML report.
//
// Nothing the user ran is lost: the results are published atomically
// (io/publish.h) under a name no other run takes; when an experiment fails
// or a signal ends the run, the records so far are published, marked
// incomplete with the reason. Whatever can be checked is checked before any
// work starts (bad input: one line, exit 2): every value, the output
// location, the matrix's size, each experiment's file against the free space
// and its buffers against the memory.
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

namespace iolab::cli {

namespace {

// Suites with order below this are the seeds group (suite.h).
constexpr const char* kSeedsGroup = "seeds";

// As given; every value is parsed and checked when parsing ends (an empty
// string means "not given": empty values are refused by app.cpp).
struct RunOptions : MatrixOptions {
  std::vector<std::string> suites;
  std::string scale;
  bool quick = false;
  std::string reps, warmup, seed, min_time, max_time, records, threads, memory_limit;
  std::string dir, out, job;
  std::string fio;                   // --fio JOB.fio
  std::vector<std::string> fio_set;  // --fio-set KEY=VALUE, in order
  bool fio_lenient = false;
};

// The run's settings, parsed.
struct Settings {
  unsigned reps = 5;
  unsigned warmup = 1;
  std::uint64_t seed = 0x10AB;
  double min_time = harness::thresholds::kDefaultMinTimeSeconds;
  double max_time = harness::thresholds::kDefaultMaxTimeSeconds;
};

// ---- where the results go ---------------------------------------------------

// FILE.json, with FILE.csv and FILE.html beside it (report/output_files.h:
// the naming, refusal, lock and fallback rules every command shares).
report::OutputRequest output_request(const std::string& out, const std::string& input) {
  report::OutputRequest request;
  request.given = out;
  request.kinds = report::output_kinds(report::results_exporters());
  if (!input.empty()) request.inputs.push_back(input);
  request.input_kind = "the job file";
  return request;
}

// The run's records so far, published once: at the end, or when the run
// stops early (an error on the main thread, a signal on the cleanup thread:
// hence the lock).
class RunRecord {
 public:
  RunRecord(report::OutputFiles& outputs, harness::Environment environment, std::filesystem::path scratch_parent)
      : outputs_(outputs), scratch_parent_(std::move(scratch_parent)) {
    results_.environment = std::move(environment);
  }

  // A record the runner has just finished (it may be replaced by its suite's final version).
  void pending(const harness::Result& r) {
    std::lock_guard lock(mutex_);
    pending_.push_back(r);
  }
  // The final records of what is done (a suite, an experiment): they replace the pending ones.
  void done(const std::vector<harness::Result>& rs) {
    std::lock_guard lock(mutex_);
    results_.results.insert(results_.results.end(), rs.begin(), rs.end());
    pending_.clear();
  }

  struct Publication {
    report::OutputFiles::Published files;  // where the records went; none when there was none to write
    std::size_t results = 0, skipped = 0;
    bool earlier = false;  // published already, by the other thread
  };
  // Publishes the records (incomplete: why the run stopped), once.
  Publication publish(std::optional<std::string> incomplete) {
    std::lock_guard lock(mutex_);
    Publication p;
    if (published_) {
      p.earlier = true;
      return p;
    }
    harness::Results all = results_;
    all.results.insert(all.results.end(), pending_.begin(), pending_.end());
    all.incomplete = std::move(incomplete);
    p.results = all.results.size();
    for (const auto& r : all.results) p.skipped += r.skipped.has_value();
    if (all.incomplete && all.results.empty()) return p;
    published_ = true;
    const auto exporters = report::results_exporters();
    p.files = outputs_.publish(
        [&](std::size_t i, const std::filesystem::path& json) {
          return exporters[i]->render(all, report::ExportContext{json, "", false});
        },
        report::fallback_dirs(scratch_parent_));
    outputs_.release();
    return p;
  }

 private:
  std::mutex mutex_;
  report::OutputFiles& outputs_;
  std::filesystem::path scratch_parent_;
  harness::Results results_;
  std::vector<harness::Result> pending_;
  bool published_ = false;
};

void print_outputs(const std::vector<std::filesystem::path>& files) {
  const char* labels[] = {"JSON: ", "CSV:  ", "HTML: "};
  for (std::size_t i = 0; i < files.size() && i < 3; ++i) fmt::print("{}{}\n", labels[i], printable(files[i].string()));
}

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

// Every experiment must fit this machine: refused before any work starts.
void check_resources(const std::vector<harness::FileExperiment>& experiments, const std::string& dir) {
  const std::filesystem::path parent = io::ScratchDir::parent_for(dir);
  for (const auto& e : experiments)
    if (auto why = harness::resource_problem(e, parent))
      throw UsageError("experiment '" + e.suite + " / " + e.experiment + "' (" + e.method + ")", *why);
}

// Command-line (and job-file) strings are already checked; the header also
// shows what came from the system (paths, device names): printable.
void print_header(const harness::Environment& env, const Settings& s, bool no_latency,
                  std::optional<harness::Eviction> eviction, bool per_fio_job, const std::vector<const suites::Suite*>& chosen) {
  // Suites that repeat their own way say how, instead of the settings they do not take.
  std::string own;
  bool all_own = !chosen.empty();
  for (const suites::Suite* suite : chosen) {
    if (suite->own_repetitions().empty()) all_own = false;
    else own += fmt::format("{}{}: {}", own.empty() ? "" : "; ", suite->name(), suite->own_repetitions());
  }
  // A fio job file's jobs each say their own repetitions (print_fio_job).
  const std::string reps = per_fio_job ? "repetitions per fio job (below)"
                           : all_own   ? (chosen.size() == 1 ? "repetitions as the suite says (below)" : "repetitions as each suite says (below)")
                                       : fmt::format("{} timed reps + {} warm-up", s.reps, s.warmup);
  fmt::print("iolab {} · scratch {} ({}{}, {}) · {} · seed {}\n", env.iolab_version, printable(env.scratch_dir),
             printable(env.fs_type), env.rotational ? (*env.rotational ? ", rotational" : ", SSD/virtual") : "",
             printable(env.device), reps, s.seed);
  fmt::print("{} · {} cores · {} RAM · {} · cold = {}\n", printable(env.cpu_model), env.cores,
             format_bytes(static_cast<double>(env.ram_bytes)), printable(env.kernel),
             eviction == harness::Eviction::DropCaches
                 ? "drop_caches (empties the whole machine's page cache, as asked)"
                 : "per file (fdatasync + fadvise of the file alone; the rest of the machine's cache is untouched)");
  const std::string latency = no_latency ? "no latency pass" : "latency from a separate pass timing every call";
  if (per_fio_job)
    fmt::print("{} warm-up pass{} per experiment; {}\n", s.warmup, s.warmup == 1 ? "" : "es", latency);
  else if (all_own)
    fmt::print("{}\n", own);
  else
    fmt::print("each repetition lasts at least {} (passes repeated within {} per experiment); {}{}\n",
               format_duration(s.min_time), format_duration(s.max_time), latency,
               own.empty() ? "" : " · except " + own);
  std::fflush(stdout);
}

// ---- fio job files ------------------------------------------------------------

// A fio job's repetition settings under the command line's: an option given
// on the command line wins, then the job's (loops, runtime, time_based),
// then iolab's.
Settings settings_for(const harness::FioMappedJob& job, const Settings& base, const RunOptions& given) {
  Settings s = base;
  if (given.reps.empty() && job.reps) s.reps = *job.reps;
  if (given.min_time.empty() && job.min_time) s.min_time = *job.min_time;
  if (given.max_time.empty() && job.max_time) s.max_time = *job.max_time;
  if (job.time_based_s) {  // the repetitions share the runtime
    if (given.min_time.empty()) s.min_time = *job.time_based_s / s.reps;
    if (given.max_time.empty()) s.max_time = *job.time_based_s;
  }
  return s;
}

// The record of a job's experiment: how the job was mapped, and a warning
// per option --fio-lenient ignored.
harness::Result with_fio_job(harness::Result r, const harness::FioMappedJob& job, const std::string& file) {
  r.extra["fio"] = harness::to_json(job, file);
  for (const auto& o : job.ignored)
    r.warnings.push_back(harness::Warning{harness::WarningKind::Note, {o.option},
                                          "fio option '" + o.option + "' (" + harness::to_string(o.place) +
                                              ") ignored (--fio-lenient): iolab does not map it"});
  return r;
}

void print_fio_job(const harness::FioMappedJob& job, const Settings& s) {
  const harness::FileExperiment& e = job.experiment;
  fmt::print("fio job [{}] ({}): {} method, {} repetitions {}{}\n", printable(job.section),
             printable(harness::to_string(job.place)), e.method, s.reps,
             s.min_time > 0 ? fmt::format("of at least {} within {}", format_duration(s.min_time), format_duration(s.max_time))
                            : std::string("of one pass each"),
             job.threads > 1 ? fmt::format(", {} threads", job.threads) : "");
  // Options from the command line or fio's defaults say so; the file's are at their line (in the JSON).
  auto show = [](const harness::FioMappedOption& o) {
    const std::string option = o.place.line == 0 ? o.option + " (" + o.place.file + ")" : o.option;
    fmt::print("  {:<28} {}\n", printable(option), printable(o.mapping));
  };
  for (const auto& o : job.options) show(o);
  for (const auto& o : job.ignored) show(o);
  for (const auto& n : job.notes) fmt::print("  note: {}\n", printable(n));
}

// What parsing makes of the options (nothing read from the file system yet).
struct RunPlan {
  enum class Source { Suites, Custom, Job, Fio };
  Source source = Source::Suites;
  std::shared_ptr<const RunOptions> given;
  Settings settings;                                // the command line's (a job or fio file may add its own)
  std::vector<harness::FileExperiment> experiments;  // Custom: the matrix
  std::vector<const suites::Suite*> chosen;          // Suites
  suites::SuiteOptions suite_options;
  std::optional<harness::Eviction> eviction;
};

harness::EngineSettings engine_settings(const Settings& s) {
  harness::EngineSettings engine;
  engine.reps = s.reps;
  engine.warmup = s.warmup;
  engine.min_time = s.min_time;
  engine.max_time = s.max_time;
  return engine;
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
      (p.source == Source::Fio) == o.fio.empty() || (p.source == Source::Job) == o.job.empty() ||
      (!o.suites.empty() && p.source != Source::Suites) || (files && !o.method.empty()))
    throw UsageError("run", "one of suites, a custom matrix, --job or --fio");
  if (p.source != Source::Fio && (!o.fio_set.empty() || o.fio_lenient)) throw UsageError("--fio-set", "without --fio");
  if (p.source != Source::Suites && (!o.scale.empty() || !o.records.empty() || !o.threads.empty() || !o.memory_limit.empty()))
    throw UsageError("--scale", "a suites option without suites");
  if (p.experiments.size() > harness::kMaxMatrixExperiments) throw UsageError("the matrix", "too many experiments");
  for (const auto& e : p.experiments)
    if (e.block_size == 0 || (e.file_size == 0 && e.ops == 0)) throw UsageError("the matrix", "an empty block or file");
  for (unsigned t : p.suite_options.threads)
    if (!in_bounds(t, harness::kThreadsBounds)) throw UsageError("--threads", "out of bounds");
  for (const auto* suite : p.chosen) suite->check(p.suite_options);
}

int run_plan(RunPlan plan);

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
  cmd->add_option("--fio", o->fio,
                  "Run the jobs of a fio job file (each job one experiment: rw, bs, size, ioengine, iodepth, direct, "
                  "numjobs, fsync..., runtime/time_based/loops; other options refused; see docs/fio-jobs.md)")
      ->type_name("JOB.fio");
  cmd->add_option("--fio-set", o->fio_set,
                  "Set a fio option in every job, after the job's own (repeatable), e.g. --fio-set size=64m "
                  "--fio-set runtime=2")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--fio-lenient", o->fio_lenient,
                "Ignore fio options iolab does not map (each is listed in the records' warnings) instead of refusing "
                "the job file");
  auto* matrix = cmd->add_option_group("custom matrix", "Run exactly this matrix (suite 'custom'); lists are comma-separated");
  matrix->add_option("--method", o->method, "File methods, e.g. pread,mmap (see iolab methods)");
  matrix->add_option("--op", o->op, "read, write (default read)");
  matrix->add_option("--pattern", o->pattern, "seq, rand (default seq)");
  matrix->add_option("--bs", o->bs, "Block sizes per call, e.g. 4k,1m (default 1m)");
  matrix->add_option("--size", o->size, "File size (default 256m)");
  matrix->add_option("--ops", o->ops, "Calls per repetition instead of --size (file size = ops x block size)");
  matrix->add_option("--cache", o->cache, "warm, cold, direct (default warm)");
  matrix->add_option("--buffer", o->buffer, "heap, aligned (default: aligned for O_DIRECT methods, else heap)");
  matrix->add_option("--sync", o->sync,
                     "none, end, every, every-16k (inline each 16 KiB), async-16k (background thread when 16 KiB are "
                     "dirty), optionally :fdatasync/:fsync/:msync (default none; the method's own sync otherwise)");
  cmd->add_option("--evict", o->evict,
                  "How 'cold' evicts: per-file (default: fdatasync + fadvise of the file alone, a fresh copy if that "
                  "fails) or drop_caches (root; empties the whole machine's page cache)");
  matrix->add_option("--qd", o->qd, "Queue depths of queued methods (io_uring), e.g. 1,32 (default 32)");
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
    if (!o->fio.empty() && (custom || !o->job.empty() || !o->suites.empty()))
      throw UsageError("--fio", "a fio job file describes the whole run; give it alone (with run settings such as "
                                "--reps, --dir, --out)");
    if (o->fio.empty() && (!o->fio_set.empty() || o->fio_lenient))
      throw UsageError(o->fio_set.empty() ? "--fio-lenient" : "--fio-set", "applies to a fio job file (--fio JOB.fio)");
    if (!o->job.empty() && custom)
      throw UsageError("--job", "a job file describes the whole matrix; give it or the matrix options, not both");
    if ((custom || !o->job.empty()) && !o->suites.empty())
      throw UsageError("suites " + o->suites.front(), "give suites or a custom matrix, not both");
    const std::pair<bool, const char*> suites_only[] = {
        {!o->scale.empty(), "--scale"}, {!o->records.empty(), "--records"}, {!o->threads.empty(), "--threads"},
        {!o->memory_limit.empty(), "--memory-limit"}};
    if (custom || !o->job.empty() || !o->fio.empty())
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
    if (!o->fio.empty()) {
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
    if (!o->evict.empty()) plan.eviction = harness::parse_eviction(o->evict);

    action.recheck = [plan] { recheck_run(plan); };
    action.run = [plan]() mutable { return run_plan(std::move(plan)); };
  });
}

// The runner: the checks that need the file system (the job or fio file
// read, each experiment against the free space and the memory, the output
// location), still before any work, then the work.
int run_plan(RunPlan plan) {
  const std::shared_ptr<const RunOptions> o = plan.given;
  Settings& settings = plan.settings;
  std::vector<harness::FileExperiment>& experiments = plan.experiments;
  const std::vector<const suites::Suite*> chosen = plan.chosen;
  const suites::SuiteOptions suite_options = plan.suite_options;
  const std::optional<harness::Eviction> eviction = plan.eviction;
  std::vector<harness::FioMappedJob> fio_jobs;
  std::string dir = o->dir;
  if (!o->fio.empty()) {
    harness::FioMapSettings map_settings;
    map_settings.overrides = o->fio_set;
    map_settings.lenient = o->fio_lenient;
    harness::FioJobsInOneDirectory mapped = harness::map_fio_jobs_in_one_directory(o->fio, map_settings, o->dir);
    fio_jobs = std::move(mapped.jobs);
    dir = mapped.dir.string();
    for (const auto& j : fio_jobs) {
      harness::EngineSettings engine;
      const Settings s = settings_for(j, settings, *o);
      engine.reps = s.reps;
      engine.warmup = s.warmup;
      engine.min_time = s.min_time;
      engine.max_time = s.max_time;
      harness::check_settings(engine);
      // The space and memory every worker's file needs, checked like one file of them all.
      harness::FileExperiment all = j.experiment;
      all.file_size *= j.threads;
      experiments.push_back(all);
    }
  } else if (plan.source == RunPlan::Source::Job) {
    harness::Job job = harness::read_job(o->job);
    experiments = harness::expand(job.matrix);
    if (job.reps && o->reps.empty()) settings.reps = *job.reps;
    if (job.warmup && o->warmup.empty()) settings.warmup = *job.warmup;
    if (job.seed && o->seed.empty()) settings.seed = *job.seed;
  }
  harness::check_settings(engine_settings(settings));
  check_resources(experiments, dir);
  if (!fio_jobs.empty()) experiments.clear();  // checked; the jobs run as mapped
  auto outputs = std::make_shared<report::OutputFiles>(output_request(o->out, o->fio.empty() ? o->job : o->fio));
  io::ScratchDir scratch(dir);
  outputs->prepare();
  harness::Environment environment = harness::collect_environment(scratch.path());
  environment.command = command_line();
  RunRecord record(*outputs, environment, io::ScratchDir::parent_for(dir));

  bool color = harness::use_color(stdout);
  harness::Progress progress(::isatty(STDERR_FILENO) == 1,
                             static_cast<unsigned>(fio_jobs.empty() ? experiments.size() : fio_jobs.size()),
                             harness::use_color(stderr));
  // On the cleanup thread when a signal ends the run (io/scratch.h).
  // The progress line erased by an escape code, or (TERM=dumb, NO_COLOR) left behind on a line of its own.
  const char* erase = !progress.enabled() ? "" : harness::use_color(stderr) ? "\r\033[K" : "\n";
  io::InterruptHook save_on_signal([&record, erase](int sig) {
    std::string line = "interrupted by " + io::signal_name(sig);
    try {
      RunRecord::Publication p = record.publish(line);
      if (!p.files.files.empty())
        line += fmt::format("; the {} results so far are in {} (and .csv, .html), marked incomplete", p.results,
                            printable(p.files.files.front().string()));
      if (p.files.problem) line += "; " + *p.files.problem;
      else if (!p.earlier)
        line += "; no experiment had finished, so no results were written";
    } catch (const std::exception& e) {
      line += "; the results so far could not be written: " + one_line(e.what());
    }
    std::fprintf(stderr, "%siolab: %s\n", erase, line.c_str());
  });

  harness::RunConfig config;
  config.reps = settings.reps;
  config.warmup = settings.warmup;
  config.seed = settings.seed;
  config.eviction = eviction;
  config.min_time = settings.min_time;
  config.max_time = settings.max_time;
  config.latency = !o->no_latency;
  config.show_progress = progress.enabled();
  config.on_experiment = [&](const std::string& label) { progress.begin(label); };
  config.on_pass = [&](unsigned done, unsigned total) { progress.pass(done, total); };
  std::vector<harness::Result> unshown;  // finished, not yet in a table
  config.on_result = [&](const harness::Result& r) {
    progress.end();
    record.pending(r);
    unshown.push_back(r);
  };
  harness::Runner runner(config, scratch);
  print_header(environment, settings, o->no_latency, eviction, !fio_jobs.empty(), chosen);

  auto show = [&](const std::vector<harness::Result>& rs) {
    progress.clear();
    harness::Results group;
    group.results = rs;
    fmt::print("{}", report::console_exporter().render(group, report::ExportContext{{}, "", color}));
    std::fflush(stdout);
    unshown.clear();
  };
  try {
    if (!fio_jobs.empty()) {
      // Each job with its own repetition settings, one after another.
      for (const auto& job : fio_jobs) {
        const Settings s = settings_for(job, settings, *o);
        harness::RunConfig job_config = config;
        job_config.reps = s.reps;
        job_config.min_time = s.min_time;
        job_config.max_time = s.max_time;
        progress.clear();
        print_fio_job(job, s);
        std::fflush(stdout);
        harness::Runner job_runner(job_config, scratch);
        harness::Result r = job.threads > 1 ? suites::run_file_per_worker(job_runner, job.experiment, job.threads)
                                            : job_runner.run(job.experiment);
        r = with_fio_job(std::move(r), job, o->fio);
        record.done({r});
        show({r});
      }
    } else if (!experiments.empty()) {
      // A table as soon as its group (methods vary fastest) is complete.
      for (std::size_t i = 0; i < experiments.size(); ++i) {
        record.done({runner.run(experiments[i])});
        if (i + 1 == experiments.size() || experiments[i + 1].experiment != experiments[i].experiment)
          show(unshown);
      }
    } else {
      unsigned i = 0;
      for (const suites::Suite* s : chosen) {
        progress.set_context(fmt::format("suite {}/{} {}", ++i, chosen.size(), s->name()));
        std::vector<harness::Result> rs = s->run(runner, suite_options);
        record.done(rs);
        show(rs);
      }
    }
  } catch (const std::exception& e) {
    if (io::interrupting_signal() != 0) io::wait_for_signal_cleanup();
    if (!unshown.empty()) show(unshown);
    try {
      RunRecord::Publication p = record.publish(one_line(e.what()));
      if (!p.files.files.empty()) {
        fmt::print("\nThe run stopped early: the {} results so far, marked incomplete with the error below.\n",
                   p.results);
        print_outputs(p.files.files);
        std::fflush(stdout);
      }
      if (p.files.problem) std::fprintf(stderr, "iolab: %s\n", one_line(*p.files.problem).c_str());
    } catch (const std::exception& failed) {
      std::fprintf(stderr, "iolab: the results so far could not be written: %s\n", one_line(failed.what()).c_str());
    }
    throw;
  }
  progress.clear();
  RunRecord::Publication p = record.publish(std::nullopt);
  if (p.earlier) io::wait_for_signal_cleanup();  // a signal's cleanup published them
  fmt::print("\n{} results ({} skipped, with the reason); every figure comes from data that verified.\n", p.results,
             p.skipped);
  print_outputs(p.files.files);
  if (p.files.problem) {  // some results are safe, not all where asked: say so, and fail
    std::fprintf(stderr, "iolab: %s\n", one_line(*p.files.problem).c_str());
    return 1;
  }
  return 0;
}

const CommandRegistration run_registration{20, add_run_command};

}  // namespace
}  // namespace iolab::cli
