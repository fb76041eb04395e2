// fio, as a second opinion on iolab's figures (`iolab crosscheck`).
//
// An iolab read experiment becomes a fio job on a file iolab created: the
// same engine (psync for pread, pvsync2 for vectored, sync for syscall, mmap,
// io_uring, libaio), pattern, block size, O_DIRECT, queue depth, submission
// batch and buffer alignment, with fio's cache invalidation and per-I/O clock reads turned
// off so that both time the same work. fio runs as a child process; its JSON
// is parsed into the figures the comparison needs. fio is not a dependency
// of iolab: find_program says whether it is there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/results/kinds.h"
#include "iolab/harness/runner.h"
#include "iolab/io/file.h"
#include "iolab/io/scratch.h"

namespace iolab::fio {

// One fio job: what `fio_arguments` turns into a command line.
struct FioJob {
  std::string engine;  // fio's --ioengine
  results::AccessPattern pattern = results::AccessPattern::Seq;
  std::uint64_t block_size = 4096;
  std::uint64_t file_size = 0;
  bool direct = false;
  unsigned iodepth = 1;
  // Above 1: --iodepth_batch_submit, and --iodepth_batch_complete_max=iodepth
  // (fio's defaults submit and reap one request per call).
  unsigned submit_batch = 0;
  bool aligned_buffers = false;   // --iomem_align=4k: page-aligned, as iolab's aligned buffers
  std::string fadvise_hint = "0";  // iolab advises nothing unless asked (mmap_advice)
  bool register_files = false, fixed_buffers = false, sqpoll = false;  // io_uring options
  // false: --gtod_reduce=1, fio reads the clock for a small share of its
  // I/Os, as iolab's timed passes read it twice per pass. true: fio's
  // default, every I/O timed for its latency statistics.
  bool time_every_io = false;
  unsigned loops = 1;  // passes over the file
  bool operator==(const FioJob&) const = default;
};

// The fio job for an iolab experiment, or why fio cannot express it.
struct FioMapping {
  std::optional<FioJob> job;
  std::string why_not;      // set when job is empty
  std::string engine_note;  // what fio's engine does that iolab's method may not
  // The ring setup flags fio's engine sets on its own whatever the job says
  // (fio 3.33's io_uring: SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN); the
  // iolab side needs them too for the two to run the same ring.
  io::UringOptions ring_flags_fio_sets;
};
// Reads only: seq/rand, any block size, warm or O_DIRECT, the methods that
// have a fio engine. Cold reads are refused (fio drops a file's cache only
// when it first opens it, so its second loop is warm), writes too (iolab
// writes a fresh file every pass, fio overwrites one it laid out).
FioMapping fio_job_for(const harness::FileExperiment& e);

// fio's arguments (without the program) for `job` reading `file`, JSON on stdout.
std::vector<std::string> fio_arguments(const FioJob& job, const std::filesystem::path& file);

// fio's own work per I/O, to set beside its figures: the same job on fio's
// null engine (no file, no system call, buffers untouched) for `ios` I/Os.
std::vector<std::string> fio_null_arguments(const FioJob& job, std::uint64_t ios);

// A command line as a shell would take it: arguments with spaces or shell
// characters in single quotes.
std::string shell_command(const std::filesystem::path& program, const std::vector<std::string>& args);

// What a fio run measured, from its JSON (the first job's reads).
struct FioFigures {
  std::string version;          // "fio-3.33"
  std::uint64_t ios = 0;        // read.total_ios
  std::uint64_t bytes = 0;      // read.io_bytes
  double runtime_s = 0;         // read.runtime: the reads' wall time (ms resolution)
  double job_runtime_s = 0;     // job_runtime: the job's, which its CPU percentages are of
  double usr_cpu = 0, sys_cpu = 0;  // percent of job_runtime
  std::uint64_t context_switches = 0, minor_faults = 0, major_faults = 0;
  // CPU seconds of the job: (usr_cpu + sys_cpu) / 100 x job_runtime.
  double cpu_s() const { return (usr_cpu + sys_cpu) / 100.0 * job_runtime_s; }
};
// Parses fio's --output-format=json text; lines before the JSON (fio's
// notes) are skipped. Throws Error naming `source` and the missing or
// mistyped field.
FioFigures parse_fio_json(std::string_view text, const std::string& source);

// The executable `name` would run as: itself when it holds a '/', else the
// first regular, executable file of that name in the directories of
// `search_path` (PATH's syntax). nullopt when there is none.
std::optional<std::filesystem::path> find_program(std::string_view name, std::string_view search_path);

// What a program printed and how it ended.
struct ProgramOutput {
  int exit_code = -1;
  std::string out, err;
};
// Runs `program` with `args` (no shell; stdin from /dev/null), its stdout
// and stderr in files of `scratch`, removed afterwards. Throws Error when it
// cannot be started or dies of a signal.
ProgramOutput run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                          io::ScratchDir& scratch);

// Runs fio with `args` and parses its JSON; throws Error with fio's own
// message (its last line on stderr) when it fails.
FioFigures run_fio(const std::filesystem::path& fio, const std::vector<std::string>& args, io::ScratchDir& scratch);

// `fio --version`, e.g. "fio-3.33".
std::string fio_version(const std::filesystem::path& fio, io::ScratchDir& scratch);

}  // namespace iolab::fio
