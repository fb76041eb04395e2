// Internal: the iolab command line, built from one file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/fio/job.h"
#include "iolab/harness/job.h"

namespace iolab::cli {

// What a subcommand leaves to run after parsing, bound to its parsed options.
// Parsing (the subcommand's CLI11 callback) only reads its strings: it
// touches no file, measures nothing and prints nothing, so it can be fuzzed
// (fuzz/cli_args_fuzz.cpp). Whatever needs the file system (a job file read,
// the output location, the free space) is the runner's first step, still
// before any work.
struct Action {
  // The runner: returns the exit code.
  std::function<int()> run;
  // The rules the runner relies on, checked again from the parsed values
  // (not the strings they came from): throws UsageError when one is broken.
  // main() calls it before run(); parsing never returns options that fail
  // it, which the fuzz target holds it to.
  std::function<void()> recheck;
  explicit operator bool() const { return static_cast<bool>(run); }
};

// Each *_command.cpp adds its subcommand by defining one static
//   const CommandRegistration reg{order, add_xxx_command};
// `order` sets the place in --help (methods 10, run 20, suites 30, report 40, ...).
using AddCommand = void (*)(CLI::App& app, Action& action);
struct CommandRegistration {
  CommandRegistration(int order, AddCommand add);
};

// The whole command line: every registered subcommand and its options, as
// parsed by main() and as the man pages and completions describe it.
void build_app(CLI::App& app, Action& action);

// A command line CLI11 refused (an unknown command or option, a missing or
// unconvertible value): a UsageError whose what() is the whole message,
// as printed after "iolab: ".
class CommandLineError : public UsageError {
 public:
  explicit CommandLineError(std::string message) : UsageError("command line", message), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// `iolab ARGS...` parsed (args without the program's name), with no effect
// beyond the value returned: no file read or written, nothing measured or
// printed. Throws UsageError (CommandLineError for what CLI11 refused) for a
// bad command line, one line naming the option and the cause; nothing else
// but std::bad_alloc.
struct ParsedCommandLine {
  enum class Kind { Command, Help, Version };
  Kind kind = Kind::Command;
  std::string text;     // Help, Version: what to print on stdout (exit 0)
  std::string command;  // Command: the subcommand's name
  Action action;        // Command: its runner
};
ParsedCommandLine parse_command_line(const std::vector<std::string>& args);

// "iolab 0.1.0 (commit 1a2b3c4d5e6f, Release, GNU 12.2.0)": what --version prints.
std::string version_line();

// Parses argv and runs the chosen subcommand. Exit codes: 0 success,
// 1 failure while running, 2 bad usage (one line on stderr).
int main(int argc, char** argv);

// Flushes stdout; false, having said so on stderr, when what was printed
// could not all be written (a full disk, a closed pipe's EPIPE, EBADF).
bool stdout_written();

// The command line as typed (from /proc/self/cmdline, which CLI11's
// callbacks cannot see), for the record of what produced a result.
std::string command_line();

// The choices of --evict, for each command that makes reads cold.
inline constexpr const char* kEvictChoices =
    "per-file (default: fdatasync + fadvise of the file alone, a fresh copy if that fails) or drop_caches (root; "
    "empties the whole machine's page cache)";

// A custom matrix as given on the command line (`run`, `crosscheck`): each
// a comma-separated list, empty when not given (the matrix's default).
struct MatrixOptions {
  std::string method, op, pattern, bs, size, ops, cache, buffer, sync, evict, qd;
  bool no_latency = false;
};
// Throws UsageError naming the option for a bad value.
harness::Matrix matrix_from(const MatrixOptions& o);

// What each matrix option says in a command's --help; an option without
// one is not the command's. The matrix's options are declared once, in one
// order, by add_matrix_options; pattern, bs and buffer mean the same
// wherever they are taken.
struct MatrixHelp {
  const char* method = nullptr;
  const char* op = nullptr;
  const char* pattern = "seq, rand (default seq)";
  const char* bs = "Block sizes per call, e.g. 4k,1m (default 1m)";
  const char* size = nullptr;
  const char* ops = nullptr;
  const char* cache = nullptr;
  const char* buffer = "heap, aligned (default: aligned for O_DIRECT methods, else heap)";
  const char* sync = nullptr;
  const char* qd = nullptr;
};
void add_matrix_options(CLI::App* group, MatrixOptions& o, const MatrixHelp& help);

// A fio job file to run as given (`run`, `crosscheck`): each job mapped to
// an experiment, --fio-set applied in every job after its own.
struct FioFileOptions {
  std::string fio_job;               // --fio JOB.fio
  std::vector<std::string> fio_set;  // --fio-set KEY=VALUE, in order
  bool fio_lenient = false;
};
// --fio, --fio-set and --fio-lenient, each with the command's help.
void add_fio_file_options(CLI::App* cmd, FioFileOptions& o, const char* fio_help, const char* set_help,
                          const char* lenient_help);
// Throws UsageError for --fio-set or --fio-lenient without --fio.
void refuse_fio_settings_alone(const FioFileOptions& o);
// The file's jobs, mapped, and the scratch parent they share; without a
// file, no jobs and `dir` (--dir as given).
fio::FioJobsInOneDirectory fio_file_jobs(const FioFileOptions& o, const std::string& dir);

// The action of a command whose parsed options are all it runs from:
// `check` throws UsageError for a bad one, now (while parsing) and again as
// the recheck; `run` returns the exit code.
template <typename Options>
void act_on(CLI::App* cmd, Action& action, std::shared_ptr<Options> options, void (*check)(const Options&),
            int (*run)(const Options&)) {
  cmd->callback([&action, options, check, run] {
    check(*options);
    action.recheck = [options, check] { check(*options); };
    action.run = [options, run] { return run(*options); };
  });
}

}  // namespace iolab::cli
