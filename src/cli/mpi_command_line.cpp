#include "mpi_command_line.h"

#include <CLI/CLI.hpp>
#include <cmath>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/limits.h"
#include "iolab/suites/parallel.h"
#include "iolab/version.h"

namespace iolab::cli {

namespace par = suites::parallel;

namespace {
constexpr std::uint64_t kMpiMaxBlock = std::uint64_t{1} << 30;  // MPI counts are int
bool mpi_method_known(const std::string& m) { return m == "posix" || m == "mpiio" || m == "mpiio-collective"; }
}  // namespace

ParsedMpiCommandLine parse_mpi_command_line(const std::vector<std::string>& args, unsigned ranks) {
  ParsedMpiCommandLine parsed;
  MpiSettings& s = parsed.settings;
  CLI::App app{"iolab-mpi: seed 003's parallel workload across MPI ranks (start it with mpirun)", "iolab-mpi"};
  app.set_version_flag("--version", std::string("iolab-mpi ") + kVersion);
  app.require_subcommand(1);
  auto* cmd = app.add_subcommand("parallel", "Each rank writes, then reads, a disjoint region of one shared file (or its own file)");
  cmd->add_option("--size", s.size, "Region per rank (default 64m)");
  cmd->add_option("--bs", s.block, "Bytes per call (default 1m; at most 1g)");
  cmd->add_option("--reps", s.reps, "Timed repetitions per method and op (default 5)")
      ->check(CLI::Range(harness::kRepsBounds.min, harness::kRepsBounds.max));
  cmd->add_option("--warmup", s.warmup, "Untimed passes before them (default 1)")
      ->check(CLI::Range(harness::kWarmupBounds.min, harness::kWarmupBounds.max));
  cmd->add_option("--min-time", s.min_time, "Seconds each repetition lasts at least, by repeating passes (default 0: one pass)");
  cmd->add_option("--dir", s.dir, "Parent of the scratch directory (shared-file: on a filesystem every node sees)");
  cmd->add_option("--out", s.out,
                  "Results JSON, ending in .json (default results/mpi-<UTC time>-<pid>.json); the CSV and HTML report "
                  "beside it, same stem. Replaces only files iolab wrote");
  cmd->add_option("--method", s.methods, "posix, mpiio, mpiio-collective (default all)")->delimiter(',');
  cmd->add_option("--layout", s.layout, "shared-file (default) or file-per-rank (IOR -F; no shared filesystem needed)");
  cmd->add_flag("--fsync", s.fsync, "End each rank's writes with fdatasync / MPI_File_sync, inside the timing");
  cmd->add_flag("--no-latency", s.no_latency, "Skip the latency pass (every call of every rank timed)");
  app.footer("Example:\n  mpirun -np 4 iolab-mpi parallel --size 64m --bs 1m --out results/mpi.json\n"
             "Across nodes: mpirun --hostfile hosts -np 8 iolab-mpi parallel --dir /shared/scratch");

  std::vector<const char*> argv{"iolab-mpi"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    parsed.kind = ParsedMpiCommandLine::Kind::Help;
    parsed.text = app.help();
    return parsed;
  } catch (const CLI::CallForVersion&) {
    parsed.kind = ParsedMpiCommandLine::Kind::Version;
    parsed.text = std::string("iolab-mpi ") + kVersion + "\n";
    return parsed;
  } catch (const CLI::ParseError& e) {
    throw UsageError("command line", one_line(e.what()));
  }
  // An empty value (--dir '', --out '') is a slip, not "the default".
  for (const CLI::Option* opt : cmd->get_options())
    if (opt->count() > 0 && opt->get_expected_min() > 0)
      for (const std::string& value : opt->results())
        if (value.empty()) throw UsageError(opt->get_name() + " ''", "empty; give a value, or leave the option out");
  s.region = parse_size(s.size);
  s.bs = parse_size(s.block);
  if (s.bs == 0) throw UsageError("--bs 0", "must be at least one byte");
  if (s.bs > kMpiMaxBlock) throw UsageError("--bs " + s.block, "at most 1g (MPI counts are int)");
  if (s.reps == 0) throw UsageError("--reps 0", "at least one timed pass");
  {
    harness::EngineSettings engine;
    engine.reps = s.reps;
    engine.warmup = s.warmup;
    engine.min_time = s.min_time;
    harness::check_settings(engine);  // --warmup 0 with a min-time, a negative or nan min-time
  }
  if (s.layout == "shared-file" || s.layout == "shared") s.shared = true;
  else if (s.layout == "file-per-rank" || s.layout == "per-rank") s.shared = false;
  else throw UsageError("--layout " + s.layout, "expected shared-file or file-per-rank");
  for (const auto& m : s.methods)
    if (!mpi_method_known(m)) throw UsageError("--method " + m, "unknown; known: posix, mpiio, mpiio-collective");
  // The same checks as the thread workload: an empty region, 0 ranks, a total past a file offset.
  par::plan_regions(ranks, s.region, par::Layout::SharedFile);
  return parsed;
}

void recheck_mpi_settings(const MpiSettings& s, unsigned ranks) {
  if (s.bs == 0 || s.bs > kMpiMaxBlock) throw UsageError("--bs", "from 1 byte to 1g");
  if (s.region == 0 || ranks == 0 || s.region > static_cast<std::uint64_t>(INT64_MAX) / ranks)
    throw UsageError("--size", "a region of at least a byte whose total fits a file offset");
  if (s.reps < harness::kRepsBounds.min || s.reps > harness::kRepsBounds.max || s.warmup > harness::kWarmupBounds.max)
    throw UsageError("--reps, --warmup", "out of bounds");
  if (!(s.min_time >= 0) || !std::isfinite(s.min_time) || (s.warmup == 0 && s.min_time > 0))
    throw UsageError("--min-time", "a finite number >= 0, with a warm-up pass when above 0");
  if (s.methods.empty()) throw UsageError("--method", "none");
  for (const auto& m : s.methods)
    if (!mpi_method_known(m)) throw UsageError("--method " + m, "unknown");
  if (s.shared != (s.layout == "shared-file" || s.layout == "shared")) throw UsageError("--layout", "not what was parsed");
}

}  // namespace iolab::cli
