// `iolab crosscheck`: iolab against fio, experiment by experiment, in
// interleaved rounds; per CPU second and per wall second with their ratios,
// and what differs wherever they part (harness/crosscheck.h does the work).
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/harness/crosscheck.h"
#include "iolab/harness/fio.h"
#include "iolab/harness/limits.h"
#include "iolab/harness/fio_job.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/thresholds.h"
#include "iolab/io/scratch.h"
#include "iolab/base/units.h"

namespace iolab::cli {

namespace {

struct CrosscheckOptions : MatrixOptions {
  unsigned rounds = 3, reps = 5, warmup = 1;
  double min_time = harness::thresholds::kDefaultMinTimeSeconds;
  double max_time = harness::thresholds::kDefaultMaxTimeSeconds;
  std::uint64_t seed = 0x10AB;
  std::string dir, fio = "fio", out;
  bool fio_clock = false, fio_unbatched = false, json = false;
  std::string fio_job;               // --fio JOB.fio
  std::vector<std::string> fio_set;  // --fio-set KEY=VALUE
  bool fio_lenient = false;
};

void add_crosscheck_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<CrosscheckOptions>();
  auto* cmd = app.add_subcommand(
      "crosscheck", "Run read experiments through iolab and through fio on the same kind of file, interleaved; "
                    "compare per CPU second and per wall second (needs fio)");
  auto* matrix = cmd->add_option_group(
      "experiments", "Instead of the default five (warm pread 4k and 1m, warm mmap 4k, io_uring QD 32 O_DIRECT 4k "
                     "random and 1m sequential), exactly this matrix of reads; lists are comma-separated");
  matrix->add_option("--method", o->method, "pread, direct, vectored, syscall, mmap, io_uring, libaio (those with a fio engine)");
  matrix->add_option("--pattern", o->pattern, "seq, rand (default seq)");
  matrix->add_option("--bs", o->bs, "Block sizes per call, e.g. 4k,1m (default 1m)");
  matrix->add_option("--cache", o->cache, "warm, direct (default warm; fio cannot repeat a cold pass)");
  matrix->add_option("--buffer", o->buffer, "heap, aligned (default: aligned for O_DIRECT methods, else heap)");
  matrix->add_option("--qd", o->qd, "Queue depths of queued methods, e.g. 1,32 (default 32)");
  cmd->add_option("--size", o->size, "File size of every experiment (default: 256m, 64m for random O_DIRECT 4k)");
  cmd->add_option("--rounds", o->rounds, "Rounds; each runs iolab and fio once per experiment, who goes first "
                                         "alternating (default 3)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--reps", o->reps, "iolab's timed repetitions per run (default 5)")->check(CLI::Range(harness::kRepsBounds.min, harness::kRepsBounds.max));
  cmd->add_option("--warmup", o->warmup, "iolab's untimed passes before them (default 1)")->check(CLI::Range(harness::kWarmupBounds.min, harness::kWarmupBounds.max));
  cmd->add_option("--min-time", o->min_time, "Seconds each iolab repetition lasts at least (default 0.1)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--max-time", o->max_time, "Seconds iolab's repetitions may take when lengthened (default 3)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--seed", o->seed, "Seed of the data pattern and of random offsets (default 0x10AB = 4267)");
  cmd->add_option("--dir", o->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->add_option("--fio", o->fio_job,
                  "Cross-check the jobs of a fio job file, each mapped as iolab run --fio maps it (docs/fio-jobs.md); "
                  "fio runs the mapped job on iolab's file, so both do the same work")
      ->type_name("JOB.fio");
  cmd->add_option("--fio-set", o->fio_set, "Set a fio option in every job of --fio, after the job's own (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--fio-lenient", o->fio_lenient, "Ignore fio options iolab does not map instead of refusing the file");
  cmd->add_option("--fio-program", o->fio, "The fio program (default: fio, found on PATH)");
  cmd->add_flag("--fio-clock", o->fio_clock,
                "Let fio time every I/O for its latency statistics, as it does by default (shows what its clock "
                "reads cost); otherwise --gtod_reduce=1");
  cmd->add_flag("--fio-unbatched", o->fio_unbatched,
                "Let fio submit and reap a queued method's requests one per call (its default); otherwise it "
                "submits up to iolab's batch and reaps all that are done (--iodepth_batch_submit, "
                "--iodepth_batch_complete_max)");
  cmd->add_flag("--json", o->json, "Print the rows as JSON (every round, the fio command lines, the differences)");
  cmd->add_option("--out", o->out, "Also write that JSON to this file (the table still goes to the terminal)");
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
    bool custom = !o->method.empty() || !o->pattern.empty() || !o->bs.empty() || !o->cache.empty() ||
                  !o->buffer.empty() || !o->qd.empty();
    std::optional<std::uint64_t> size;
    if (!o->size.empty()) size = parse_size(o->size);
    std::vector<harness::FioMappedJob> jobs;
    std::string dir = o->dir;
    std::vector<harness::FileExperiment> experiments;
    if (!o->fio_job.empty()) {
      if (custom || size) throw UsageError("--fio", "a fio job file gives the experiments; leave out the matrix options");
      harness::FioMapSettings map_settings;
      map_settings.overrides = o->fio_set;
      // --dir puts every job's files there, as --fio-set directory= would.
      if (!o->dir.empty()) map_settings.overrides.push_back("directory=" + o->dir);
      map_settings.lenient = o->fio_lenient;
      jobs = harness::map_fio_jobs(harness::read_fio_job(o->fio_job), map_settings);
      for (const auto& j : jobs) {
        if (j.threads > 1)
          throw UsageError("fio job " + harness::to_string(j.place),
                           "numjobs=" + std::to_string(j.threads) +
                               ": crosscheck runs one worker on each side (--fio-set numjobs=1)");
        if (dir.empty() && j.scratch_parent != jobs.front().scratch_parent)
          throw UsageError("fio job " + harness::to_string(j.place),
                           "its files go in " + j.scratch_parent.string() + ", the first job's in " +
                               jobs.front().scratch_parent.string() + ": one filesystem per run (--dir)");
        harness::FileExperiment e = j.experiment;
        // Page-aligned buffers on both sides, as every crosscheck (a copy into
        // a buffer off a cache line is slower, and fio's start wherever malloc put them).
        e.buffer = io::BufferKind::Aligned;
        experiments.push_back(std::move(e));
      }
      if (dir.empty()) dir = jobs.front().scratch_parent.string();
    } else {
      if (!o->fio_set.empty() || o->fio_lenient)
        throw UsageError(o->fio_set.empty() ? "--fio-lenient" : "--fio-set", "applies to a fio job file (--fio JOB.fio)");
      experiments = custom ? harness::expand(matrix_from(*o)) : harness::crosscheck_cases(size);
    }

    action = [o, experiments, jobs, dir] {
      const char* path = std::getenv("PATH");
      auto fio = harness::find_program(o->fio, path ? path : "");
      if (!fio) {
        std::fprintf(stderr, "iolab: crosscheck needs fio, and '%s' is not %s (Debian: apt-get install fio)\n",
                     o->fio.c_str(), o->fio.find('/') == std::string::npos ? "on PATH" : "an executable file");
        return 2;
      }
      io::ScratchDir scratch(dir);
      harness::Environment env = harness::collect_environment(scratch.path());
      env.command = command_line();
      const std::string version = harness::fio_version(*fio, scratch);

      harness::RunConfig config;
      config.reps = o->reps;
      config.warmup = o->warmup;
      config.seed = o->seed;
      config.min_time = o->min_time;
      config.max_time = o->max_time;
      config.latency = false;
      harness::Runner runner(config, scratch);
      harness::CrosscheckSettings settings;
      settings.rounds = o->rounds;
      settings.fio = *fio;
      settings.fio_times_every_io = o->fio_clock;
      settings.fio_unbatched = o->fio_unbatched;
      if (!jobs.empty()) settings.tolerance = 0.15;  // the goal for fio job files (issue 27): within 15%

      if (!o->json) {
        fmt::print("iolab crosscheck · {} ({}) · scratch {} ({}, {}) · {} · {}\n", version, fio->string(),
                   env.scratch_dir, env.fs_type, env.device, env.kernel, env.created);
        fmt::print("{} rounds, who goes first alternating · iolab: {} timed reps of at least {} + {} warm-up per run "
                   "· fio: the same bytes (--loops = iolab's timed passes), --invalidate=0{}{}\n",
                   o->rounds, o->reps, format_duration(o->min_time), o->warmup,
                   o->fio_clock ? ", every I/O timed (its default)" : ", --gtod_reduce=1",
                   o->fio_unbatched ? ", queued requests submitted and reaped one per call (its default)" : "");
        for (const auto& j : jobs)
          fmt::print("fio job [{}] ({}): {} · the job's runtime, loops and time_based do not apply (crosscheck's "
                     "rounds and repetitions do); buffers page-aligned on both sides\n",
                     printable(j.section), printable(harness::to_string(j.place)), j.experiment.experiment);
        std::fflush(stdout);
      }
      auto on_round = [&](const harness::CrosscheckRow& row, const harness::CrosscheckRound& round) {
        if (o->json) return;
        fmt::print("{}\n", harness::format_round(row, round));
        std::fflush(stdout);
      };
      auto run_fio = [&](const std::vector<std::string>& args) { return harness::run_fio(*fio, args, scratch); };
      std::vector<harness::CrosscheckRow> rows = harness::crosscheck(experiments, settings, runner, run_fio, on_round);

      nlohmann::json j{{"format", "iolab-crosscheck"},
                       {"fio_version", version},
                       {"fio", fio->string()},
                       {"rounds", o->rounds},
                       {"tolerance", settings.tolerance},
                       {"environment", harness::to_json(env)}};
      j["rows"] = nlohmann::json::array();
      for (std::size_t i = 0; i < rows.size(); ++i) {
        j["rows"].push_back(harness::to_json(rows[i], settings.tolerance));
        if (i < jobs.size()) j["rows"].back()["fio_job"] = harness::to_json(jobs[i], o->fio_job);  // a row per experiment, in order
      }
      if (!o->out.empty()) {
        std::ofstream file(o->out, std::ios::trunc);
        file << j.dump(2) << '\n';
        file.close();
        if (!file) throw Error("write", o->out, errno ? errno : EIO);
      }
      if (o->json) fmt::print("{}\n", j.dump(2));
      else fmt::print("\n{}", harness::format_crosscheck(rows, settings));
      return 0;
    };
  });
}

const CommandRegistration crosscheck_registration{55, add_crosscheck_command};

}  // namespace
}  // namespace iolab::cli
