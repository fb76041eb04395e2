// Internal: the iolab command line, built from one file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "iolab/harness/job.h"

namespace iolab::cli {

// What a subcommand leaves to run after parsing: returns the exit code.
using Action = std::function<int()>;

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

// A custom matrix as given on the command line (`run`, `crosscheck`): each
// a comma-separated list, empty when not given (the matrix's default).
struct MatrixOptions {
  std::string method, op, pattern, bs, size, ops, cache, buffer, sync, evict, qd;
  bool no_latency = false;
};
// Throws UsageError naming the option for a bad value.
harness::Matrix matrix_from(const MatrixOptions& o);

}  // namespace iolab::cli
