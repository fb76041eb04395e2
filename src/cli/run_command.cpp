// `iolab run`: runs suites (default: the seeds group) or a custom matrix of
// file experiments, prints a table per experiment group, and writes the
// results as JSON and CSV.
#include <fmt/core.h>

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <memory>
#include <set>

#include "app.h"
#include "iolab/error.h"
#include "iolab/harness/console.h"
#include "iolab/harness/job.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/thresholds.h"
#include "iolab/report/html.h"
#include "iolab/io/buffer.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"
#include "iolab/units.h"

namespace iolab::cli {

namespace {

// Suites with order below this are the seeds group (suite.h).
constexpr const char* kSeedsGroup = "seeds";

struct RunOptions : MatrixOptions {
  std::vector<std::string> suites;
  std::string scale = "default";
  bool quick = false;
  unsigned reps = 5;
  unsigned warmup = 1;
  std::uint64_t seed = 0x10AB;
  std::string dir, out, job;
  std::uint64_t records = 0;
  std::string threads;
  double min_time = harness::thresholds::kDefaultMinTimeSeconds;
  double max_time = harness::thresholds::kDefaultMaxTimeSeconds;
};

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return buf;
}

std::vector<unsigned> thread_list(const std::string& text) {
  std::vector<unsigned> out;
  if (text.empty()) return out;
  for (const auto& item : harness::split_list(text, "--threads")) {
    std::uint64_t n = 0;
    try {
      n = parse_size(item);
    } catch (const UsageError&) {
      throw UsageError("--threads " + text, "expected a list of thread counts such as 1,2,4");
    }
    if (n == 0 || n > 1024) throw UsageError("--threads " + text, "each count must be 1 to 1024");
    out.push_back(static_cast<unsigned>(n));
  }
  return out;
}

void add_run_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run suites (default: the seeds) or a custom matrix; print tables, write JSON and CSV");
  cmd->add_option("suites", o->suites, "Suites to run (see iolab suites); 'seeds' = the seed suites (default)");
  cmd->add_option("--scale", o->scale, "Sizes: tiny, quick, default (<= 5 min for the seeds) or full (the seeds' own sizes)")
      ->check(CLI::IsMember({"tiny", "quick", "default", "full"}));
  cmd->add_flag("--quick", o->quick,
                "A first look: --scale quick, 3 repetitions of at least 50 ms, at most 1 s per experiment");
  cmd->add_option("--reps", o->reps, "Timed repetitions per experiment (default 5)")->check(CLI::Range(1u, 100000u));
  cmd->add_option("--warmup", o->warmup, "Untimed repetitions before the timed ones (default 1)")->check(CLI::Range(0u, 1000u));
  cmd->add_option("--seed", o->seed, "Seed of the data pattern and of random offsets (default 0x10AB = 4267)");
  cmd->add_option("--dir", o->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp); its filesystem is measured");
  cmd->add_option("--out", o->out, "Results JSON (default results/iolab-<UTC time>.json); CSV and the report beside it, same stem");
  cmd->add_option("--records", o->records, "Store suite: number of records (default: per scale)");
  cmd->add_option("--threads", o->threads, "Parallel suite: worker counts, e.g. 1,2,4");
  cmd->add_option("--job", o->job, "Run the matrix of a TOML job file: keys method, op, pattern, bs, size, ops, cache, buffer, sync, "
                  "qd, evict, latency (as the matrix options; a string \"4k,1m\" or a list), reps, warmup, seed");
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
                  "Seconds each timed repetition lasts at least; short passes are repeated within it (default 0.1)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--max-time", o->max_time,
                  "Seconds the timed repetitions of one experiment may take when lengthened (default 3)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->footer(
      "Examples:\n"
      "  iolab run --quick\n"
      "  iolab run seq-read copy --scale default --reps 3\n"
      "  iolab run --method pread,mmap --op read --pattern seq --bs 4k,1m --size 1g --cache warm --reps 5 --out r.json\n"
      "  iolab run --job my-job.toml   # e.g. method = [\"pread\", \"mmap\"]  bs = \"4k,1m\"  size = \"1g\"  reps = 5");

  cmd->callback([o, cmd, &action] {
    bool custom = !o->method.empty() || !o->op.empty() || !o->pattern.empty() || !o->bs.empty() || !o->size.empty() ||
                  !o->ops.empty() || !o->cache.empty() || !o->buffer.empty() || !o->sync.empty() || !o->qd.empty();
    if (!o->job.empty() && custom)
      throw UsageError("--job", "a job file describes the whole matrix; give it or the matrix options, not both");
    if ((custom || !o->job.empty()) && !o->suites.empty())
      throw UsageError("suites " + o->suites.front(), "give suites or a custom matrix, not both");
    if (o->quick) {
      if (cmd->count("--scale") > 0 && o->scale != "quick")
        throw UsageError("--quick with --scale " + o->scale, "choose one");
      o->scale = "quick";
      // A first look: fewer and shorter repetitions, unless asked for more.
      if (cmd->count("--reps") == 0) o->reps = 3;
      if (cmd->count("--min-time") == 0) o->min_time = 0.05;
      if (cmd->count("--max-time") == 0) o->max_time = 1.0;
    }
    // Validate everything before any work starts: bad input is one line and exit 2.
    std::vector<harness::FileExperiment> experiments;
    std::vector<const suites::Suite*> chosen;
    unsigned reps = o->reps, warmup = o->warmup;
    std::uint64_t seed = o->seed;
    if (!o->job.empty()) {
      harness::Job job = harness::read_job(o->job);
      experiments = harness::expand(job.matrix);
      if (job.reps && cmd->count("--reps") == 0) reps = *job.reps;
      if (job.warmup && cmd->count("--warmup") == 0) warmup = *job.warmup;
      if (job.seed && cmd->count("--seed") == 0) seed = *job.seed;
    } else if (custom) {
      experiments = harness::expand(matrix_from(*o));
    } else {
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
          if (seen.insert(s).second) chosen.push_back(s);
      }
      if (chosen.empty())
        throw Error("run", "the seeds group", "no suites are registered in this build; run a custom matrix (iolab run --method pread --bs 4k --size 64m)", ENOENT);
    }
    if (std::filesystem::path(o->out).extension() == ".csv")
      throw UsageError("--out " + o->out, "name the JSON file; the CSV is written beside it with the same stem");
    suites::SuiteOptions suite_options;
    suite_options.scale = suites::parse_scale(o->scale);
    suite_options.records = o->records;
    suite_options.threads = thread_list(o->threads);

    std::optional<harness::Eviction> eviction;
    if (!o->evict.empty()) eviction = harness::parse_eviction(o->evict);

    action = [o, experiments, chosen, suite_options, reps, warmup, seed, eviction] {
      io::ScratchDir scratch(o->dir);
      harness::Results results;
      results.environment = harness::collect_environment(scratch.path());
      results.environment.command = command_line();
      std::filesystem::path out = o->out.empty() ? std::filesystem::path("results") / ("iolab-" + utc_stamp() + ".json")
                                                 : std::filesystem::path(o->out);
      std::filesystem::path csv = std::filesystem::path(out).replace_extension(".csv");

      bool color = harness::use_color(stdout);
      harness::Progress progress(::isatty(STDERR_FILENO) == 1, static_cast<unsigned>(experiments.size()),
                                harness::use_color(stderr));
      harness::RunConfig config;
      config.reps = reps;
      config.warmup = warmup;
      config.seed = seed;
      config.eviction = eviction;
      config.min_time = o->min_time;
      config.max_time = o->max_time;
      config.latency = !o->no_latency;
      config.show_progress = progress.enabled();
      config.on_experiment = [&](const std::string& label) { progress.begin(label); };
      config.on_pass = [&](unsigned done, unsigned total) { progress.pass(done, total); };
      config.on_result = [&](const harness::Result&) { progress.end(); };
      harness::Runner runner(config, scratch);

      const auto& env = results.environment;
      fmt::print("iolab {} · scratch {} ({}{}, {}) · {} timed reps + {} warm-up · seed {}\n", env.iolab_version,
                 env.scratch_dir, env.fs_type, env.rotational ? (*env.rotational ? ", rotational" : ", SSD/virtual") : "",
                 env.device, reps, warmup, seed);
      fmt::print("{} · {} cores · {} RAM · {} · cold = {}\n", env.cpu_model, env.cores,
                 format_bytes(static_cast<double>(env.ram_bytes)), env.kernel,
                 eviction == harness::Eviction::DropCaches
                     ? "drop_caches (empties the whole machine's page cache, as asked)"
                     : "per file (fdatasync + fadvise of the file alone; the rest of the machine's cache is untouched)");
      fmt::print("each repetition lasts at least {} (passes repeated within {} per experiment){}\n",
                 format_duration(o->min_time), format_duration(o->max_time),
                 o->no_latency ? "; no latency pass" : "; latency from a separate pass timing every call");
      std::fflush(stdout);

      auto show = [&](const std::vector<harness::Result>& rs) {
        progress.clear();
        fmt::print("{}", harness::format_tables(rs, color));
        std::fflush(stdout);
      };
      if (!experiments.empty()) {
        for (const auto& e : experiments) results.results.push_back(runner.run(e));
        show(results.results);
      } else {
        unsigned i = 0;
        for (const suites::Suite* s : chosen) {
          progress.set_context(fmt::format("suite {}/{} {}", ++i, chosen.size(), s->name()));
          std::vector<harness::Result> rs = s->run(runner, suite_options);
          show(rs);
          for (auto& r : rs) results.results.push_back(std::move(r));
        }
      }
      progress.clear();
      harness::write_json(results, out);
      harness::write_csv(results, csv);
      std::filesystem::path html = std::filesystem::path(out).replace_extension(".html");
      report::write_html_report({results}, html, {{out.filename().string()}});
      std::size_t skipped = 0;
      for (const auto& r : results.results) skipped += r.skipped.has_value();
      fmt::print("\n{} results ({} skipped, with the reason); every figure comes from data that verified.\n"
                 "JSON: {}\nCSV:  {}\nHTML: {}\n",
                 results.results.size(), skipped, out.string(), csv.string(), html.string());
      return 0;
    };
  });
}

const CommandRegistration registration{20, add_run_command};

}  // namespace
}  // namespace iolab::cli
