// `iolab run`'s run (run_plan.h): the checks that need the file system,
// the experiments with their progress line, and the records published
// whatever happens.
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
#include "iolab/base/proc.h"
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

// ---- where the results go ---------------------------------------------------

// The run's records so far, published once: at the end, or when the run
// stops early (an error on the main thread, a signal on the cleanup thread:
// hence the lock).
class RunRecord {
 public:
  RunRecord(report::OutputFiles& outputs, results::Environment environment, std::filesystem::path scratch_parent)
      : outputs_(outputs), scratch_parent_(std::move(scratch_parent)) {
    results_.environment = std::move(environment);
  }

  // A record the runner has just finished (it may be replaced by its suite's final version).
  void pending(const results::Result& r) {
    std::lock_guard lock(mutex_);
    pending_.push_back(r);
  }
  // The final records of what is done (a suite, an experiment): they replace the pending ones.
  void done(const std::vector<results::Result>& rs) {
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
    results::Results all = results_;
    all.results.insert(all.results.end(), pending_.begin(), pending_.end());
    all.incomplete = std::move(incomplete);
    p.results = all.results.size();
    for (const auto& r : all.results) p.skipped += r.skipped.has_value();
    if (all.incomplete && all.results.empty()) return p;
    published_ = true;
    p.files = report::publish_results(outputs_, all, report::results_exporters(), scratch_parent_);
    return p;
  }

 private:
  std::mutex mutex_;
  report::OutputFiles& outputs_;
  std::filesystem::path scratch_parent_;
  results::Results results_;
  std::vector<results::Result> pending_;
  bool published_ = false;
};

void print_outputs(const std::vector<std::filesystem::path>& files) {
  const char* labels[] = {"JSON: ", "CSV:  ", "HTML: "};
  for (std::size_t i = 0; i < files.size() && i < 3; ++i) fmt::print("{}{}\n", labels[i], printable(files[i].string()));
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
void print_header(const results::Environment& env, const Settings& s, bool no_latency,
                  std::optional<results::Eviction> eviction, bool per_fio_job, const std::vector<const suites::Suite*>& chosen) {
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
  fmt::print("{} · {} cores · {} RAM{} · {} · cold = {}\n", printable(env.cpu_model), env.cores,
             format_bytes(static_cast<double>(env.ram_bytes)),
             env.free_page_reporting_order
                 ? " (freed memory goes back to the host in " +
                       format_bytes(static_cast<double>(proc::page_block_bytes(*env.free_page_reporting_order))) +
                       " blocks: free page reporting)"
                 : std::string(),
             printable(env.kernel),
             eviction == results::Eviction::DropCaches
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
Settings settings_for(const fio::FioMappedJob& job, const Settings& base, const RunOptions& given) {
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
results::Result with_fio_job(results::Result r, const fio::FioMappedJob& job, const std::string& file) {
  r.extra["fio"] = fio::to_json(job, file);
  for (const auto& o : job.ignored)
    r.warnings.push_back(results::Warning{results::WarningKind::Note, {o.option},
                                          "fio option '" + o.option + "' (" + fio::to_string(o.place) +
                                              ") ignored (--fio-lenient): iolab does not map it" +
                                              (o.count > 1 ? " (written " + std::to_string(o.count) + " times)" : "")});
  return r;
}

void print_fio_job(const fio::FioMappedJob& job, const Settings& s) {
  const harness::FileExperiment& e = job.experiment;
  fmt::print("fio job [{}] ({}): {} method, {} repetitions {}{}\n", printable(job.section),
             printable(fio::to_string(job.place)), e.method, s.reps,
             s.min_time > 0 ? fmt::format("of at least {} within {}", format_duration(s.min_time), format_duration(s.max_time))
                            : std::string("of one pass each"),
             job.threads > 1 ? fmt::format(", {} threads", job.threads) : "");
  // Options from the command line or fio's defaults say so; the file's are at their line (in the JSON).
  auto show = [](const fio::FioMappedOption& o) {
    const std::string option = o.place.line == 0 ? o.option + " (" + o.place.file + ")" : o.option;
    fmt::print("  {:<28} {}\n", printable(option), printable(o.mapping));
  };
  for (const auto& o : job.options) show(o);
  for (const auto& o : job.ignored) show(o);
  for (const auto& n : job.notes) fmt::print("  note: {}\n", printable(n));
}
}  // namespace

int run_plan(RunPlan plan) {
  const std::shared_ptr<const RunOptions> o = plan.given;
  Settings& settings = plan.settings;
  std::vector<harness::FileExperiment>& experiments = plan.experiments;
  const std::vector<const suites::Suite*> chosen = plan.chosen;
  const suites::SuiteOptions suite_options = plan.suite_options;
  const std::optional<results::Eviction> eviction = plan.eviction;
  const fio::FioJobsInOneDirectory fio_file = fio_file_jobs(*o, o->dir);
  const std::vector<fio::FioMappedJob>& fio_jobs = fio_file.jobs;
  const std::string dir = fio_file.dir.string();
  for (const auto& j : fio_jobs) {
    harness::check_settings(engine_settings(settings_for(j, settings, *o)));
    // The space and memory every worker's file needs, checked like one file of them all.
    harness::FileExperiment all = j.experiment;
    all.file_size *= j.threads;
    experiments.push_back(all);
  }
  if (plan.source == RunPlan::Source::Job) {
    harness::Job job = harness::read_job(o->job);
    experiments = harness::expand(job.matrix);
    if (job.reps && o->reps.empty()) settings.reps = *job.reps;
    if (job.warmup && o->warmup.empty()) settings.warmup = *job.warmup;
    if (job.seed && o->seed.empty()) settings.seed = *job.seed;
  }
  harness::check_settings(engine_settings(settings));
  check_resources(experiments, dir);
  if (!fio_jobs.empty()) experiments.clear();  // checked; the jobs run as mapped
  // FILE.json, with FILE.csv and FILE.html beside it (report/output_files.h:
  // the naming, refusal, lock and fallback rules every command shares).
  auto outputs = std::make_shared<report::OutputFiles>(
      report::results_request(o->out, o->fio_job.empty() ? o->job : o->fio_job, "the job file"));
  io::ScratchDir scratch(dir);
  outputs->prepare();
  results::Environment environment = harness::collect_environment(scratch.path());
  environment.command = command_line();
  RunRecord record(*outputs, environment, io::ScratchDir::parent_for(dir));

  bool color = results::use_color(stdout);
  results::ProgressLine progress(::isatty(STDERR_FILENO) == 1,
                             static_cast<unsigned>(fio_jobs.empty() ? experiments.size() : fio_jobs.size()),
                             results::use_color(stderr));
  // On the cleanup thread when a signal ends the run (io/scratch.h).
  // The progress line erased by an escape code, or (TERM=dumb, NO_COLOR) left behind on a line of its own.
  const char* erase = !progress.enabled() ? "" : results::use_color(stderr) ? "\r\033[K" : "\n";
  io::InterruptHook save_on_signal([&record, erase](int sig) {
    std::string line = "interrupted by " + io::signal_name(sig);
    try {
      RunRecord::Publication p = record.publish(line);
      // One account of where the records went: written (where asked, or
      // where the problem says), or none finished, never both.
      if (!p.files.files.empty())
        line += fmt::format("; the {} {} so far {} in {} (and .csv, .html), marked incomplete", p.results,
                            p.results == 1 ? "result" : "results", p.results == 1 ? "is" : "are",
                            printable(p.files.files.front().string()));
      if (p.files.problem) line += "; " + *p.files.problem;
      else if (p.files.files.empty() && !p.earlier)
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
  std::vector<results::Result> unshown;  // finished, not yet in a table
  config.on_result = [&](const results::Result& r) {
    progress.end();
    record.pending(r);
    unshown.push_back(r);
  };
  harness::Runner runner(config, scratch);
  print_header(environment, settings, o->no_latency, eviction, !fio_jobs.empty(), chosen);

  auto show = [&](const std::vector<results::Result>& rs) {
    progress.clear();
    results::Results group;
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
        results::Result r = job.threads > 1 ? suites::run_file_per_worker(job_runner, job.experiment, job.threads)
                                            : job_runner.run(job.experiment);
        r = with_fio_job(std::move(r), job, o->fio_job);
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
        std::vector<results::Result> rs = s->run(runner, suite_options);
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

}  // namespace iolab::cli
