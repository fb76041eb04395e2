// fio job files (`iolab run --fio JOB.fio`, `iolab crosscheck --fio`).
//
// Two steps, each testable (and fuzzed) on its own:
//  1. parse_fio_job: text -> sections of options, each with the file and
//     line it was written on, as fio 3.33 reads a job file: ini sections,
//     `[global]` sections, `include FILE`, comments after ';' or '#',
//     ${VAR} from the environment and fio's $pagesize, $mb_memory, $ncpus.
//  2. map_fio_jobs: each job (its [global] options above it, its own, then
//     --fio-set) -> one iolab file experiment with its threads, repetition
//     settings and scratch directory, and for every option how it was
//     mapped. Values are read as fio's parser reads them (suffixes per
//     kb_base, `bs=4k,8k` read/write lists, `bsrange=` ranges, times in
//     us/ms/s/m/h/d), checked against what `fio --debug=parse` prints.
//
// iolab maps a job only where it can do what the job says; anything else
// is refused with one line naming the option, the file and the line (a
// UsageError), never measured as something else. iolab still writes only
// its own scratch files: a job's `filename`/`directory` says where the
// scratch directory goes, and a filename naming an existing file or a
// device is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/harness/runner.h"

namespace iolab::fio {

// Limits on what a job file may make iolab read: anything past them is a
// one-line refusal, never a runaway.
inline constexpr std::uint64_t kFioMaxFileBytes = std::uint64_t{1} << 20;   // one file (a job file or an include)
inline constexpr std::uint64_t kFioMaxTotalBytes = std::uint64_t{8} << 20;  // a job file with everything it includes
inline constexpr unsigned kFioMaxIncludeDepth = 16;
inline constexpr std::size_t kFioMaxLineBytes = 8192;  // fio's OPT_LEN_MAX: a longer line is refused
inline constexpr std::size_t kFioMaxJobs = 4096;       // job sections in one file

// Where an option was written: "job.fio:12"; "--fio-set" for the command line.
struct FioPlace {
  std::string file;
  unsigned line = 0;  // 0: not from a file (--fio-set)
  bool operator==(const FioPlace&) const = default;
};
std::string to_string(const FioPlace& place);

struct FioOption {
  std::string key;                   // as written: an alias stays an alias
  std::optional<std::string> value;  // expanded (${VAR}, $pagesize...); nullopt for a bare key ("time_based")
  std::string text;                  // the line as written, comment stripped
  FioPlace place;
};

struct FioSection {
  std::string name;  // between the brackets
  bool global = false;  // fio: a name starting with "global"
  FioPlace place;    // of the [header]
  std::vector<FioOption> options;  // in order, includes spliced in where they stand
};

struct FioJobFile {
  std::string path;  // as given
  std::vector<FioSection> sections;
};

// The outside world the parser consults: injectable for tests and fuzzing.
struct FioParseContext {
  // An environment variable (${NAME}); nullopt when unset (fio: the empty string).
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // The text of an included file, read with the limits above; throws
  // UsageError (the caller names the include line). Empty: includes refused.
  std::function<std::string(const std::filesystem::path&)> read_include;
  // Whether a path exists (fio looks for an include first as written, from
  // the working directory, then beside the file that includes it).
  std::function<bool(const std::filesystem::path&)> exists;
  // fio's keywords.
  std::uint64_t page_size = 4096, mb_memory = 0, ncpus = 1;
};
// This process's environment and files, this machine's page size, memory and CPUs.
FioParseContext system_fio_context();

// Parses a job file's text; `source` names it in errors and places, and
// relative includes are found beside it. Throws UsageError with one line
// ("<file>:<line>: ...") for anything fio would refuse or iolab cannot
// read faithfully (a line outside a section, a section in an include, an
// include loop or one nested deeper than kFioMaxIncludeDepth, input past
// the limits, NUL bytes, $NAME that fio would not expand, arithmetic).
FioJobFile parse_fio_job(std::string_view text, const std::string& source, const FioParseContext& context);
// Reads and parses a job file: a regular file of at most kFioMaxFileBytes.
FioJobFile read_fio_job(const std::filesystem::path& file, const FioParseContext& context = system_fio_context());
// Reads a regular text file for the parser (the job file or an include), at
// most `limit` bytes; throws UsageError naming it (not a regular file, too
// large, unreadable).
std::string read_fio_text(const std::filesystem::path& file, std::uint64_t limit = kFioMaxFileBytes);

// ---- mapping -------------------------------------------------------------

// How one option in effect for a job was mapped, for the record.
struct FioMappedOption {
  std::string option;   // "bs=256K" as written
  FioPlace place;
  std::string mapping;  // what iolab does with it, and what differs from fio where anything does
  unsigned count = 1;   // ignored options: how many times the name was written (place: the first)
};

struct FioMappedJob {
  std::string section;      // the [section] name
  std::string name;         // fio's name= (default: the section)
  std::string description;  // fio's description=
  FioPlace place;           // of the section header
  harness::FileExperiment experiment;  // suite "fio", experiment "<name> · read seq 256k direct"
  unsigned threads = 1;       // numjobs: workers, a file each
  // Where the scratch directory goes (from directory= or filename=; the
  // working directory when neither is given, where fio would write).
  std::filesystem::path scratch_parent;
  // Repetition settings the job asks for; unset: iolab's (or the command
  // line's). loops=N: N repetitions of one pass (min_time 0). runtime=T:
  // max_time T. time_based with runtime=T: time_based_s T, the repetitions
  // share it (each at least T / repetitions, all within T).
  std::optional<unsigned> reps;
  std::optional<double> min_time, max_time, time_based_s;
  bool stonewall = false;
  std::vector<FioMappedOption> options;  // every option in effect, in the order fio applies them
  std::vector<FioMappedOption> ignored;  // options iolab does not map, ignored under lenient: one per name, counted
  // What differs from fio beyond single options (jobs fio runs together,
  // buffers, how writes allocate).
  std::vector<std::string> notes;
};

struct FioMapSettings {
  std::vector<std::string> overrides;  // --fio-set KEY=VALUE, in order: set in every job after its own
  bool lenient = false;                // --fio-lenient: options iolab does not map are ignored, listed
  std::filesystem::path cwd;           // relative paths are resolved from here (empty: the current directory)
};

// Every job of `file`, mapped; throws UsageError with one line naming the
// option, its file and line (or --fio-set) for anything iolab cannot do as
// the job says: an option it does not map (unless lenient), a value fio
// would refuse or iolab cannot honour (mixed or trim I/O, a block size
// range, an engine iolab has no method for, buffered libaio, a path naming
// an existing file or a device, ...). A file without jobs is refused too.
std::vector<FioMappedJob> map_fio_jobs(const FioJobFile& file, const FioMapSettings& settings);

// The jobs of the fio job file `file`, read and mapped, all in one
// directory: `dir` when given (set as every job's directory=, after the
// overrides), else the jobs' own, which must be one (iolab measures one
// filesystem per run; UsageError naming the job that differs).
struct FioJobsInOneDirectory {
  std::vector<FioMappedJob> jobs;
  std::filesystem::path dir;  // the scratch parent of every job
};
FioJobsInOneDirectory map_fio_jobs_in_one_directory(const std::filesystem::path& file, FioMapSettings settings,
                                                    const std::filesystem::path& dir);

// A mapped job as the results record it (each record's extra.fio).
nlohmann::json to_json(const FioMappedJob& job, const std::string& job_file);

}  // namespace iolab::fio
