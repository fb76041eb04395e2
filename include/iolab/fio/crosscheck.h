// iolab against fio, experiment by experiment (`iolab crosscheck`).
//
// Each read experiment fio can express (fio.h) runs through iolab's runner
// and through fio on a file of the same size in the same scratch directory,
// made warm the same way (or read O_DIRECT by both), one right after the
// other; rounds alternate who goes first, so a drift in the machine's load
// favours neither. fio does the same work: as many loops over the file as
// iolab's timed passes (repetitions x passes per repetition) in its latest
// run of that experiment. Compared per CPU second (operations over user +
// system time, which other work on a shared machine does not steal) and per
// wall second, as iolab / fio ratios, round by round and as medians; every
// row says what still differs between the two and what each measured per
// I/O, which is where a gap comes from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/fio/runner.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"

namespace iolab::fio {

// What one side did in one round's timed work.
struct SideFigures {
  double ops = 0, bytes = 0;  // moved
  double wall_s = 0, cpu_s = 0;  // cpu_s: user + system
  double user_s = 0;             // its user-space part (the kernel samples the split at each timer tick)
  double context_switches = 0, page_faults = 0;
  std::optional<double> io_calls;  // system calls that moved data (iolab counts them; fio does not say)
  // Operations per CPU second and per wall second (0 when the time is 0).
  double per_cpu_s() const { return cpu_s > 0 ? ops / cpu_s : 0; }
  double per_wall_s() const { return wall_s > 0 ? ops / wall_s : 0; }
};
// iolab: one median repetition of the record (ops and bytes per repetition,
// its median wall time, median user + system time).
SideFigures side_of(const results::Result& r);
// fio: the whole run (reads' runtime; the job's CPU).
SideFigures side_of(const FioFigures& f);

// Whose ring setup flags iolab's side of a queued row runs with: iolab's
// (the suites' default, none) or those fio's engine sets on its own
// (fio 3.33's io_uring: SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN), so the
// two run the same ring.
enum class RingFlags { Iolab, Fio };
std::string_view to_string(RingFlags);
RingFlags parse_ring_flags(std::string_view);  // "iolab" or "fio"; UsageError otherwise

struct CrosscheckRound {
  unsigned number = 1;
  bool iolab_first = true;
  SideFigures iolab, fio;
  unsigned iolab_reps = 0, iolab_passes = 0;  // fio's loops = reps x passes of iolab's latest run
  std::string fio_command;
  // fio's own work: the same job on its null engine (fio_null_arguments),
  // run right after fio's; its CPU per I/O is what fio adds to any engine's.
  std::optional<SideFigures> fio_null;
  std::string fio_null_command;
  std::optional<double> iolab_resident, fio_resident;  // of the file before the timed reads (not O_DIRECT)
  std::vector<std::string> iolab_warnings;  // the record's warnings (too short, outliers, not warm...)
  // iolab / fio; 0 when either figure is missing.
  double cpu_ratio() const;
  double wall_ratio() const;
  // Per CPU second, iolab / fio with fio's own CPU per I/O (its null engine's)
  // taken out of fio's; 0 without a null run.
  double cpu_ratio_without_fio_own() const;
};

struct CrosscheckRow {
  results::Result labels;                       // the experiment's (labels_of), with its queue depth once run
  std::optional<FioJob> job;           // empty when fio cannot express it
  std::string engine_note;             // what fio's engine does that iolab's method may not
  io::UringOptions fio_ring_flags;     // the ring setup flags fio's engine sets on its own (none: not io_uring)
  io::UringOptions iolab_ring_flags;   // those iolab's side ran with (single_issuer, coop_taskrun)
  RingFlags ring_flags = RingFlags::Iolab;  // whose flags iolab's side was asked to run with
  std::optional<std::string> skipped;  // why the row has no figures
  std::vector<CrosscheckRound> rounds;

  // Medians over the rounds (0 without rounds).
  struct Medians {
    double iolab_per_cpu_s = 0, fio_per_cpu_s = 0;    // operations per CPU second
    double iolab_per_wall_s = 0, fio_per_wall_s = 0;  // operations per wall second
    double cpu_ratio = 0, wall_ratio = 0;             // of the per-round ratios, iolab / fio
    double fio_own_cpu_per_op = 0;                    // seconds: fio's null engine's CPU per I/O
    double cpu_ratio_without_fio_own = 0;
  };
  Medians medians() const;
  // |median CPU ratio - 1| <= tolerance; false without rounds.
  bool within(double tolerance) const;
};

struct CrosscheckSettings {
  unsigned rounds = 3;
  RingFlags ring_flags = RingFlags::Iolab;
  std::filesystem::path fio = "fio";  // the program, as shown in each row's command
  bool fio_times_every_io = false;    // fio's default clock reads instead of --gtod_reduce=1
  bool fio_unbatched = false;         // fio's default submission (a call per request) instead of iolab's batch
  double tolerance = 0.10;            // the goal: within 10% per CPU second
  std::uint64_t null_ios = 1 << 19;   // I/Os of each null-engine run (0: none); ~0.1 s of fio's CPU
};

// Runs fio with these arguments (the program is the caller's) and returns its figures.
using FioRunner = std::function<FioFigures(const std::vector<std::string>& args)>;
// Called after each row's round, with both sides measured.
using RoundDone = std::function<void(const CrosscheckRow&, const CrosscheckRound&)>;

// The experiments the goals name: warm pread 4 KiB and 1 MiB, warm mmap
// 4 KiB (sequential, page-aligned buffers, 256 MiB), io_uring QD 32 O_DIRECT
// 4 KiB random reads (64 MiB) and 1 MiB sequential reads (256 MiB).
// `file_size` replaces every size.
std::vector<harness::FileExperiment> crosscheck_cases(std::optional<std::uint64_t> file_size = std::nullopt);

// Measures every experiment in `settings.rounds` interleaved rounds (odd
// rounds iolab first, even rounds fio first); experiments fio cannot express,
// and those iolab skips or fio fails on, are rows with the reason. fio's
// files are created in the runner's scratch directory and removed before
// this returns. Throws Error for iolab's own failures (data that does not verify).
std::vector<CrosscheckRow> crosscheck(const std::vector<harness::FileExperiment>& experiments, const CrosscheckSettings& settings,
                                      harness::Runner& runner, const FioRunner& fio, const RoundDone& on_round = {});

// What still differs between the two runs of a row, and what each measured
// per I/O: one line each ("clock reads: ...", "buffers: ...", "per I/O: ...").
std::vector<std::string> differences(const CrosscheckRow& row);

// A row's name: method, queue depth, pattern, block, file size, cache, buffer.
std::string row_name(const CrosscheckRow& row);
// One line for a round of a row (printed as the rounds go).
std::string format_round(const CrosscheckRow& row, const CrosscheckRound& round);
// The summary: per row the medians per CPU and wall second, the ratios with
// each round's, the fio command, and the differences of every row whose
// ratio is outside the tolerance.
std::string format_crosscheck(const std::vector<CrosscheckRow>& rows, const CrosscheckSettings& settings);

nlohmann::json to_json(const CrosscheckRow& row, double tolerance);
// The whole run: what `crosscheck --json` prints and `--out` writes
// ("format": "iolab-crosscheck"); `fio_jobs[i]`, when given, is row i's job.
nlohmann::json crosscheck_document(const std::vector<CrosscheckRow>& rows, const CrosscheckSettings& settings,
                                   const std::string& fio_version, const results::Environment& environment,
                                   const std::vector<nlohmann::json>& fio_jobs = {});

}  // namespace iolab::fio
