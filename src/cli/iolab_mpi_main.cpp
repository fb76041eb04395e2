// iolab-mpi: seed 003's parallel workload across MPI ranks: argument parsing
// and output. Each rank is one worker of the engine's MpiTeam (src/mpi/) and
// runs the thread suite's region workload: it writes, then reads back, a
// disjoint region of one shared file (or a file of its own) with posix
// (pwrite/pread), mpiio (MPI_File_write_at/read_at) or mpiio-collective
// (..._at_all). Rank 0 writes iolab's results JSON, so `iolab report` and
// `compare` read it.
//
//   mpirun -np 4 iolab-mpi parallel --size 64m --bs 1m --out results/mpi.json
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/limits.h"
#include "iolab/harness/requests.h"
#include "iolab/results/record.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/mpi/mpi.h"
#include "iolab/report/exporter.h"
#include "iolab/report/output_files.h"
#include "iolab/suites/parallel.h"
#include "iolab/base/units.h"
#include "iolab/version.h"
#include "mpi_command_line.h"

namespace iolab::cli {
namespace {

namespace par = suites::parallel;

// How long a rank beside rank 0 waits for it to end after a signal: far
// longer than publishing the results takes; mpirun's SIGKILL ends the wait
// sooner (a second after the SIGTERM, Open MPI's odls_base_sigkill_timeout).
constexpr int kRankZeroGraceMs = 10'000;

using Settings = MpiSettings;

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  return s.substr(0, s.find_first_of(",\n"));
}

// What decides a rank's work: every rank must have the same.
std::vector<std::pair<std::string, std::string>> settings_of(const Settings& s) {
  std::string methods;
  for (const auto& m : s.methods) methods += (methods.empty() ? "" : ",") + m;
  return {{"--size", std::to_string(s.region)},
          {"--bs", std::to_string(s.bs)},
          {"--reps", std::to_string(s.reps)},
          {"--warmup", std::to_string(s.warmup)},
          {"--min-time", fmt::format("{}", s.min_time)},
          {"--method", methods},
          {"--layout", s.shared ? "shared-file" : "file-per-rank"},
          {"--fsync", s.fsync ? "on" : "off"},
          {"--no-latency", s.no_latency ? "on" : "off"}};
}

// The io method behind a name: posix is the io layer's pread method.
std::unique_ptr<io::Method> method_named(const std::string& name, bool shared) {
  if (name == "posix") return nullptr;
  return mpi::mpiio_method(shared ? MPI_COMM_WORLD : MPI_COMM_SELF, name == "mpiio-collective");
}

int run(int argc, char** argv) {
  const int rank = mpi::rank(), ranks = mpi::size();
  Settings s;
  bool done = false;
  std::optional<report::OutputFiles> outputs;
  mpi::agree([&] {
    // Parsed as tests and the fuzz target parse it (mpi_command_line.h): every rank the same way.
    ParsedMpiCommandLine parsed =
        parse_mpi_command_line(std::vector<std::string>(argv + std::min(argc, 1), argv + argc), static_cast<unsigned>(ranks));
    if (parsed.kind != ParsedMpiCommandLine::Kind::Command) {
      if (rank == 0) std::fputs(parsed.text.c_str(), stdout);
      done = true;
      return;
    }
    s = std::move(parsed.settings);
    recheck_mpi_settings(s, static_cast<unsigned>(ranks));
    // Where rank 0 publishes: `iolab run --out`'s rules (report/output_files.h).
    if (rank == 0) {
      report::OutputRequest request = report::results_request(s.out);
      request.program = "mpi";
      outputs.emplace(std::move(request));
    }
  });
  if (done) return 0;

  mpi::MpiTeam team;
  // Every rank must do the same work (an MPMD launch can give ranks different
  // command lines): rank 0's settings, broadcast, checked by each rank
  // against its own before any work, or the collective calls would not match.
  const std::vector<std::pair<std::string, std::string>> mine = settings_of(s);
  std::string text;
  for (const auto& [name, value] : mine) text += name + "=" + value + "\n";
  const std::string zeros = team.broadcast(rank == 0 ? text : "");
  mpi::agree([&] {
    for (const auto& [name, value] : mine) {
      const std::string line = name + "=" + value + "\n";
      if (zeros.find(line) == std::string::npos)
        throw UsageError(name + " " + value, "on rank " + std::to_string(rank) +
                                                 ", not rank 0's: every rank must be given the same settings");
    }
  });
  // Shared: rank 0 owns the directory and every other rank opens the same
  // path (a filesystem all nodes see). Per rank: each rank its own, on its own node.
  std::optional<io::ScratchDir> scratch;
  mpi::agree([&] {
    if (!s.shared || rank == 0) {
      scratch.emplace(s.dir);
      par::require_free_space(scratch->path(), s.shared ? s.region * static_cast<std::uint64_t>(ranks) : s.region);
    }
    if (outputs) outputs->prepare();  // before any work: the results' directory takes files
  });
  std::string dir = team.broadcast(scratch ? scratch->path().string() : "");

  // A signal: mpirun gives every rank SIGTERM and SIGKILLs the rest as soon
  // as one ends, so the ranks beside rank 0 must not end before it: rank 0
  // publishes the results so far, marked incomplete (as `iolab run` does),
  // and removes its scratch directory; each other rank removes its own
  // scratch directory at once, then waits for rank 0 to end. A rank that
  // waited in vain (rank 0 killed outright, or elsewhere) then reclaims rank
  // 0's directory of a shared file if no live process holds it.
  std::mutex results_mutex;
  results::Results results;
  const mpi::RankZeroProcess rank_zero(team);
  std::optional<io::InterruptHook> outlive_rank_zero;
  if (rank != 0)
    outlive_rank_zero.emplace([&rank_zero, dir, shared = s.shared](int) {
      io::remove_all_scratch_dirs();  // this rank's own: it starts no process that writes there
      rank_zero.wait_for_end(kRankZeroGraceMs);
      if (shared) io::reclaim_abandoned_scratch_dir(dir, 0);
    });
  std::optional<io::InterruptHook> save_on_signal;
  if (rank == 0)
    save_on_signal.emplace([&](int sig) {
      std::string line = "interrupted by " + io::signal_name(sig);
      try {
        std::lock_guard lock(results_mutex);
        if (results.results.empty()) {
          outputs->release();
          line += "; no method had finished, so no results were written";
        } else {
          results::Results partial = results;
          partial.incomplete = line;
          const auto published = report::publish_results(*outputs, partial, report::results_exporters(),
                                                         io::ScratchDir::parent_for(s.dir), "iolab-mpi");
          if (!published.files.empty())
            line += fmt::format("; the {} results so far are in {} (and .csv, .html), marked incomplete",
                                partial.results.size(), printable(published.files.front().string()));
          if (published.problem) line += "; " + one_line(*published.problem);
        }
      } catch (const std::exception& e) {
        line += "; the results so far could not be written: " + one_line(e.what());
      }
      std::fprintf(stderr, "iolab-mpi: %s\n", line.c_str());
    });
  if (rank == 0) {
    results.environment = harness::collect_environment(dir);
    std::string command = "mpirun -np " + std::to_string(ranks);
    for (int i = 0; i < argc; ++i) command += std::string(" ") + argv[i];
    results.environment.command = command;
    fmt::print("iolab-mpi: {} rank{} on {} node{}, {} per rank, {} blocks, {} in {}, {} rep{} (+{} warm-up){}\n", ranks,
               ranks > 1 ? "s" : "", team.nodes(), team.nodes() > 1 ? "s" : "", format_bytes(static_cast<double>(s.region)),
               format_bytes(static_cast<double>(s.bs)), s.shared ? "one shared file" : "a file per rank", dir, s.reps,
               s.reps > 1 ? "s" : "", s.warmup, s.fsync ? ", writes end with a sync" : "");
    fmt::print("clock: {}\n", team.clock_description());
    fmt::print("{:<17} {:<5} {:>14} {:>12} {:>12}  {}\n", "METHOD", "OP", "AGGREGATE", "FIRST DONE", "LAST DONE", "VERIFIED");
    std::fflush(stdout);
  }

  harness::EngineSettings settings;
  settings.reps = s.reps;
  settings.warmup = s.warmup;
  settings.min_time = s.min_time;
  settings.max_time = results::thresholds::kDefaultMaxTimeSeconds;
  settings.latency = !s.no_latency;

  const std::string library = mpi_library();
  par::RegionSpec spec;
  spec.workers = static_cast<unsigned>(ranks);
  spec.region_size = s.region;
  spec.block_size = s.bs;
  spec.layout = s.shared ? par::Layout::SharedFile : par::Layout::FilePerWorker;
  spec.sync_at_end = s.fsync;
  harness::WriteSource source(s.seed, s.region, s.bs, io::BufferKind::Aligned);
  for (const auto& name : s.methods) {
    std::unique_ptr<io::Method> owned = method_named(name, s.shared);
    const io::Method& method = owned ? *owned : io::find_file_method("pread");
    par::RegionFiles files(team, scratch ? &*scratch : nullptr, spec, "mpi-" + name);
    for (results::Op op : {results::Op::Write, results::Op::Read}) {
      const bool write = op == results::Op::Write;
      results::Result r;
      r.suite = "parallel";
      r.experiment = s.shared ? "mpi-shared-file" : "mpi-file-per-rank";
      r.method = name;
      r.op = op;
      r.pattern = results::AccessPattern::Seq;
      r.block_size = std::min(s.bs, s.region);
      r.file_size = files.total_bytes();
      r.buffer = io::BufferKind::Aligned;
      if (write) r.cache.reset();
      r.cache_method = write ? "fresh file, preallocated" : "written, flushed, read once";
      if (write && s.fsync) r.sync = io::FlushPolicy{io::FlushSchedule::End, method.traits().data_sync, 0};
      if (!write) mpi::agree([&] { files.flush(); });
      par::RegionWorkload workload(team, method, spec, op, files, source);
      harness::measure(workload, team, settings, r);
      if (rank != 0) continue;
      r.extra["ranks"] = ranks;
      r.extra["nodes"] = team.nodes();
      r.extra["region_size"] = s.region;
      r.extra["layout"] = s.shared ? "shared-file" : "file-per-rank";
      r.extra["mpi_library"] = library;
      if (write && s.fsync && owned) r.extra["sync_call"] = "MPI_File_sync";
      r.extra["io_calls_source"] = "read/write system calls from /proc/self/io, summed over ranks";
      if (r.skipped) {
        fmt::print("{:<17} {:<5} skipped: {}\n", name, results::to_string(op), *r.skipped);
      } else {
        double first = r.extra.value("first_done_s", r.seconds().median), last = r.extra.value("last_done_s", r.seconds().median);
        fmt::print("{:<17} {:<5} {:>14} {:>12} {:>12}  {}\n", name, results::to_string(op),
                   format_rate(r.median_mib_per_s() * 1048576.0), format_duration(first), format_duration(last),
                   r.verified ? "yes" : "no");
      }
      std::fflush(stdout);
      std::lock_guard lock(results_mutex);
      results.results.push_back(std::move(r));
    }
  }
  int code = 0;
  save_on_signal.reset();  // from here the results are published whole
  mpi::agree([&] {
    if (rank != 0) return;
    const auto published = report::publish_results(*outputs, results, report::results_exporters(),
                                                   io::ScratchDir::parent_for(s.dir), "iolab-mpi");
    for (const auto& f : published.files) fmt::print("results: {}\n", printable(f.string()));
    if (published.problem) {
      std::fprintf(stderr, "iolab-mpi: error: %s\n", one_line(*published.problem).c_str());
      code = 1;
    }
  });
  return team.broadcast(std::to_string(code)) == "0" ? 0 : 1;
}

}  // namespace
}  // namespace iolab::cli

// Under AddressSanitizer (IOLAB_SANITIZE), Open MPI's own allocations kept
// until exit, many from components it has already unloaded (so no suppression
// can name them), would fail every run as leaks. The workload's code is
// leak-checked through the thread suite's tests instead. Unused without ASan.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::signal(SIGXFSZ, SIG_IGN);  // past `ulimit -f`, EFBIG: an error with a message, not a silent death
  iolab::io::remove_scratch_dirs_on_signals();
  int code = 0;
  try {
    code = iolab::cli::run(argc, argv);
  } catch (const iolab::mpi::AgreedError& e) {
    // Every rank knows: rank 0 says it once, all leave together.
    if (iolab::mpi::rank() == 0) std::fprintf(stderr, "iolab-mpi: error: %s\n", e.what());
    code = e.exit_code;
  } catch (const std::exception& e) {
    // One rank alone (it cannot be agreed on any more): end the job.
    std::fprintf(stderr, "iolab-mpi: error: rank %d: %s\n", iolab::mpi::rank(), iolab::one_line(e.what()).c_str());
    iolab::io::remove_all_scratch_dirs();  // MPI_Abort runs no destructors
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // What was printed must have reached stdout (a full disk, a closed pipe: an error).
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "iolab-mpi: error: rank %d: write standard output: %s\n", iolab::mpi::rank(),
                 std::strerror(errno != 0 ? errno : EIO));
    code = code != 0 ? code : 1;
  }
  MPI_Finalize();
  return code;
}
