// Internal: the iolab command line, built from one file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

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

// Parses argv and runs the chosen subcommand. Exit codes: 0 success,
// 1 failure while running, 2 bad usage (one line on stderr).
int main(int argc, char** argv);

}  // namespace iolab::cli
