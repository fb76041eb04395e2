// The bench programs' arguments, read as iolab reads its own: CLI11 for the
// command line, base's parse_size for sizes ("4k", "1m"). Bad usage exits 2
// with CLI11's one-line message; --help exits 0.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "iolab/base/error.h"
#include "iolab/base/units.h"

namespace iolab_bench {

// An option or positional whose text is a size: into = parse_size(text).
template <class T>
CLI::Option* add_size(CLI::App& app, const std::string& name, T& into, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&into, name](const std::string& text) {
            try {
              into = static_cast<T>(iolab::parse_size(text, name));
            } catch (const iolab::UsageError& e) {
              throw CLI::ValidationError(name, e.what());
            }
            if (into == 0) throw CLI::ValidationError(name, "must be more than 0");
          },
          help)
      ->type_name("SIZE");
}

// Parses; returns -1 to go on, else the exit status (0 for --help, 2 for bad usage).
inline int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return -1;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
}

}  // namespace iolab_bench
