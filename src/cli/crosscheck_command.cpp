// `iolab crosscheck`: iolab against fio, experiment by experiment, in
// interleaved rounds; per CPU second and per wall second with their ratios,
// and what differs wherever they part (fio/crosscheck.h does the work).
#include <atomic>
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/fio/crosscheck.h"
#include "iolab/fio/runner.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/limits.h"
#include "iolab/fio/job.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/scratch.h"
#include "iolab/report/output_files.h"
#include "iolab/base/units.h"

namespace iolab::cli {

namespace {

struct CrosscheckOptions : MatrixOptions, FioFileOptions {
  unsigned rounds = 3, reps = 5, warmup = 1;
  std::string min_time, max_time, seed;  // parsed as `iolab run` parses them (a nan, a -1 refused)
  std::string dir, fio = "fio", out;
  bool fio_clock = false, fio_unbatched = false, json = false;
  std::string ring_flags = "iolab";  // --ring-flags iolab|fio
};

// The rules the runner relies on, from the parsed values (Action::recheck).
void recheck_crosscheck(const CrosscheckOptions& o, const std::vector<harness::FileExperiment>& experiments,
                        double min_time, double max_time, bool custom) {
  if (o.rounds < 1 || o.rounds > 1000) throw UsageError("--rounds", "from 1 to 1000");
  harness::EngineSettings engine;
  engine.reps = o.reps;
  engine.warmup = o.warmup;
  engine.min_time = min_time;
  engine.max_time = max_time;
  harness::check_settings(engine);
  if (o.reps > harness::kRepsBounds.max || o.warmup > harness::kWarmupBounds.max)
    throw UsageError("--reps, --warmup", "out of bounds");
  if (min_time > 3600 || max_time > 86400) throw UsageError("--min-time, --max-time", "out of bounds");
  if (o.fio_job.empty() ? experiments.empty() || !o.fio_set.empty() || o.fio_lenient
                        : !experiments.empty() || custom || !o.size.empty())
    throw UsageError("--fio", "a fio job file alone gives the experiments, the matrix options otherwise");
}

void add_crosscheck_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<CrosscheckOptions>();
  auto* cmd = app.add_subcommand(
      "crosscheck", "Run read experiments through iolab and through fio on the same kind of file, interleaved; "
                    "compare per CPU second and per wall second (needs fio)");
  auto* matrix = cmd->add_option_group(
      "experiments", "Instead of the default five (warm pread 4k and 1m, warm mmap 4k, io_uring QD 32 O_DIRECT 4k "
                     "random and 1m sequential), exactly this matrix of reads; lists are comma-separated");
  MatrixHelp matrix_help;
  matrix_help.method = "pread, direct, vectored, syscall, mmap, io_uring, libaio (those with a fio engine)";
  matrix_help.cache = "warm, direct (default warm; fio cannot repeat a cold pass)";
  matrix_help.qd = "Queue depths of queued methods, e.g. 1,32 (default 32)";
  add_matrix_options(matrix, *o, matrix_help);
  cmd->add_option("--size", o->size, "File size of every experiment (default: 256m, 64m for random O_DIRECT 4k)");
  cmd->add_option("--rounds", o->rounds, "Rounds; each runs iolab and fio once per experiment, who goes first "
                                         "alternating (default 3)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--reps", o->reps, "iolab's timed repetitions per run (default 5)")->check(CLI::Range(harness::kRepsBounds.min, harness::kRepsBounds.max));
  cmd->add_option("--warmup", o->warmup, "iolab's untimed passes before them (default 1)")->check(CLI::Range(harness::kWarmupBounds.min, harness::kWarmupBounds.max));
  cmd->add_option("--min-time", o->min_time, "Seconds each iolab repetition lasts at least (default 0.1)")
      ->type_name("TIME");
  cmd->add_option("--max-time", o->max_time, "Wall seconds one of iolab's experiments may take when its passes are repeated, untimed work included (default 3)")
      ->type_name("TIME");
  cmd->add_option("--seed", o->seed, "Seed of the data pattern and of random offsets (default 0x10AB = 4267)");
  cmd->add_option("--dir", o->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp)");
  add_fio_file_options(cmd, *o,
                       "Cross-check the jobs of a fio job file, each mapped as iolab run --fio maps it "
                       "(docs/fio-jobs.md); fio runs the mapped job on iolab's file, so both do the same work",
                       "Set a fio option in every job of --fio, after the job's own (repeatable)",
                       "Ignore fio options iolab does not map instead of refusing the file");
  cmd->add_option("--fio-program", o->fio, "The fio program (default: fio, found on PATH)");
  cmd->add_flag("--fio-clock", o->fio_clock,
                "Let fio time every I/O for its latency statistics, as it does by default (shows what its clock "
                "reads cost); otherwise --gtod_reduce=1");
  cmd->add_flag("--fio-unbatched", o->fio_unbatched,
                "Let fio submit and reap a queued method's requests one per call (its default); otherwise it "
                "submits up to iolab's batch and reaps all that are done (--iodepth_batch_submit, "
                "--iodepth_batch_complete_max)");
  cmd->add_option("--ring-flags", o->ring_flags,
                  "Whose io_uring setup flags iolab's side runs with: iolab (the suites' ring, no flags; default) or "
                  "fio (SINGLE_ISSUER, DEFER_TASKRUN and COOP_TASKRUN, which fio's io_uring engine sets on its own); "
                  "each row names both sides' flags")
      ->type_name("iolab|fio");
  cmd->add_flag("--json", o->json, "Print the rows as JSON (every round, the fio command lines, the differences)");
  cmd->add_option("--out", o->out,
                  "Also write that JSON to this file, ending in .json (the table still goes to the terminal); "
                  "replaces only a file iolab wrote");
  cmd->footer(
      "fio does the same work as iolab: as many loops over its file as iolab's timed passes, with --invalidate=0\n"
      "(warm stays warm), --gtod_reduce=1, buffers aligned and queued requests batched as iolab's. Rates are per CPU second (user + system\n"
      "time, which other work on a shared machine does not steal) and per wall second.\n"
      "Examples:\n"
      "  iolab crosscheck\n"
      "  iolab crosscheck --rounds 5 --json > crosscheck.json\n"
      "  iolab crosscheck --method pread,vectored,mmap --bs 4k,64k --size 128m\n"
      "  iolab crosscheck --fio /usr/share/doc/fio/examples/fio-seq-read.fio --fio-set size=256m");

  cmd->callback([o, &action] {
    // Validate everything before any work starts: bad input is one line and exit 2.
    const double min_time = o->min_time.empty() ? results::thresholds::kDefaultMinTimeSeconds
                                                : parse_seconds(o->min_time, "--min-time", 3600);
    const double max_time = o->max_time.empty() ? results::thresholds::kDefaultMaxTimeSeconds
                                                : parse_seconds(o->max_time, "--max-time", 86400);
    const std::uint64_t seed = o->seed.empty() ? 0x10AB : parse_count(o->seed, "--seed");
    fio::parse_ring_flags(o->ring_flags);  // UsageError before any work
    const bool custom = !o->method.empty() || !o->pattern.empty() || !o->bs.empty() || !o->cache.empty() ||
                        !o->buffer.empty() || !o->qd.empty();
    std::optional<std::uint64_t> size;
    if (!o->size.empty()) size = parse_size(o->size);
    std::vector<harness::FileExperiment> experiments;  // a fio job file's are the runner's to read
    if (!o->fio_job.empty()) {
      if (custom || size) throw UsageError("--fio", "a fio job file gives the experiments; leave out the matrix options");
    } else {
      refuse_fio_settings_alone(*o);
      experiments = custom ? harness::expand(matrix_from(*o)) : fio::crosscheck_cases(size);
    }
    action.recheck = [o, experiments, min_time, max_time, custom] {
      recheck_crosscheck(*o, experiments, min_time, max_time, custom);
    };
    action.run = [o, experiments, min_time, max_time, seed]() mutable {
      // What needs the file system, before any work: --out (iolab run's
      // rules, report/output_files.h), then the fio job file.
      std::shared_ptr<report::OutputFiles> out;
      if (!o->out.empty()) {
        report::OutputRequest request;
        request.given = o->out;
        request.kinds = {{".json", [](std::string_view head) {
                            return head.starts_with("{") && head.find("\"format\": \"iolab-crosscheck\"") != std::string_view::npos;
                          }}};
        if (!o->fio_job.empty()) request.inputs.push_back(o->fio_job);
        request.input_kind = "the fio job file";
        out = std::make_shared<report::OutputFiles>(std::move(request));
      }
      const fio::FioJobsInOneDirectory fio_file = fio_file_jobs(*o, o->dir);
      const std::vector<fio::FioMappedJob>& jobs = fio_file.jobs;
      const std::string dir = fio_file.dir.string();
      for (const auto& j : jobs) {
        if (j.threads > 1)
          throw UsageError("fio job " + fio::to_string(j.place),
                           "numjobs=" + std::to_string(j.threads) +
                               ": crosscheck runs one worker on each side (--fio-set numjobs=1)");
        harness::FileExperiment e = j.experiment;
        // Page-aligned buffers on both sides, as every crosscheck (a copy into
        // a buffer off a cache line is slower, and fio's start wherever malloc put them).
        e.buffer = io::BufferKind::Aligned;
        experiments.push_back(std::move(e));
      }
      const char* path = std::getenv("PATH");
      auto fio = fio::find_program(o->fio, path ? path : "");
      if (!fio) {
        std::fprintf(stderr, "iolab: crosscheck needs fio, and '%s' is not %s (Debian: apt-get install fio)\n",
                     o->fio.c_str(), o->fio.find('/') == std::string::npos ? "on PATH" : "an executable file");
        return 2;
      }
      io::ScratchDir scratch(dir);
      if (out) out->prepare();  // before any measurement
      results::Environment env = harness::collect_environment(scratch.path());
      env.command = command_line();
      const std::string version = fio::fio_version(*fio, scratch);

      harness::RunConfig config;
      config.reps = o->reps;
      config.warmup = o->warmup;
      config.seed = seed;
      config.min_time = min_time;
      config.max_time = max_time;
      config.latency = false;
      harness::Runner runner(config, scratch);
      fio::CrosscheckSettings settings;
      settings.rounds = o->rounds;
      settings.fio = *fio;
      settings.fio_times_every_io = o->fio_clock;
      settings.fio_unbatched = o->fio_unbatched;
      settings.ring_flags = fio::parse_ring_flags(o->ring_flags);
      if (!jobs.empty()) settings.tolerance = 0.15;  // the goal for fio job files (issue 27): within 15%

      if (!o->json) {
        fmt::print("iolab crosscheck · {} ({}) · scratch {} ({}, {}) · {} · {}\n", version, fio->string(),
                   env.scratch_dir, env.fs_type, env.device, env.kernel, env.created);
        fmt::print("{} rounds, who goes first alternating · iolab: {} timed reps of at least {} + {} warm-up per run "
                   "· fio: the same bytes (--loops = iolab's timed passes), --invalidate=0{}{}\n",
                   o->rounds, o->reps, format_duration(min_time), o->warmup,
                   o->fio_clock ? ", every I/O timed (its default)" : ", --gtod_reduce=1",
                   o->fio_unbatched ? ", queued requests submitted and reaped one per call (its default)" : "");
        if (settings.ring_flags == fio::RingFlags::Fio)
          fmt::print("--ring-flags fio: iolab's io_uring rings get the setup flags fio's engine sets on its own "
                     "(SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN)\n");
        for (const auto& j : jobs)
          fmt::print("fio job [{}] ({}): {} · the job's runtime, loops and time_based do not apply (crosscheck's "
                     "rounds and repetitions do); buffers page-aligned on both sides\n",
                     printable(j.section), printable(fio::to_string(j.place)), j.experiment.experiment);
        std::fflush(stdout);
      }
      // A signal mid-run (io/scratch.h): fio is killed and waited for (harness's
      // run_program), the scratch directory removed, and this says so.
      std::atomic<std::size_t> rounds_done{0};
      io::InterruptHook say_interrupted([&rounds_done, out](int sig) {
        std::fprintf(stderr,
                     "iolab: crosscheck interrupted by %s after %zu measured round%s; fio stopped, scratch files "
                     "removed, no comparison written%s\n",
                     io::signal_name(sig).c_str(), rounds_done.load(), rounds_done.load() == 1 ? "" : "s",
                     out ? " (--out is written only when every round is done)" : "");
      });
      auto on_round = [&](const fio::CrosscheckRow& row, const fio::CrosscheckRound& round) {
        ++rounds_done;
        if (o->json) return;
        fmt::print("{}\n", fio::format_round(row, round));
        std::fflush(stdout);
      };
      auto run_fio = [&](const std::vector<std::string>& args) { return fio::run_fio(*fio, args, scratch); };
      std::vector<fio::CrosscheckRow> rows = fio::crosscheck(experiments, settings, runner, run_fio, on_round);

      std::vector<nlohmann::json> fio_jobs;
      for (const auto& job : jobs) fio_jobs.push_back(fio::to_json(job, o->fio_job));
      const nlohmann::json j = fio::crosscheck_document(rows, settings, version, env, fio_jobs);
      if (out) {
        const std::string text = j.dump(2) + "\n";
        auto p = out->publish([&](std::size_t, const std::filesystem::path&) { return text; },
                              report::fallback_dirs(io::ScratchDir::parent_for(dir)));
        out->release();
        if (p.problem) std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
        if (p.problem) return 1;
      }
      if (o->json) fmt::print("{}\n", j.dump(2));
      else fmt::print("\n{}", fio::format_crosscheck(rows, settings));
      // Nothing measured (fio failed on every row, a fio that is not fio): not a success.
      std::size_t measured = 0;
      for (const auto& row : rows) measured += !row.rounds.empty();
      if (measured == 0) {
        std::fprintf(stderr, "iolab: crosscheck measured none of its %zu experiments (each row says why)\n", rows.size());
        return 1;
      }
      return 0;
    };
  });
}

const CommandRegistration crosscheck_registration{55, add_crosscheck_command};

}  // namespace
}  // namespace iolab::cli
