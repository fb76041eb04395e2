// Internal: iolab-mpi's command line, parsed without MPI (no MPI_Init, no
// communicator), so that tests and the fuzz target (fuzz/cli_args_fuzz.cpp)
// can parse it as iolab-mpi does; iolab_mpi_main.cpp runs what it gives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iolab::cli {

// `iolab-mpi parallel ...`'s settings, as given and parsed.
struct MpiSettings {
  std::string size = "64m", block = "1m", dir, out, layout = "shared-file";
  std::vector<std::string> methods = {"posix", "mpiio", "mpiio-collective"};
  unsigned reps = 5, warmup = 1;
  double min_time = 0;  // one pass per repetition unless asked: a pass is a whole job's work
  bool fsync = false, no_latency = false;
  std::uint64_t seed = 0x10AB;
  // Parsed:
  std::uint64_t region = 0, bs = 0;
  bool shared = true;
};

struct ParsedMpiCommandLine {
  enum class Kind { Command, Help, Version };
  Kind kind = Kind::Command;
  std::string text;  // Help, Version: what rank 0 prints on stdout (exit 0)
  MpiSettings settings;
};

// `iolab-mpi ARGS...` (args without the program's name) for a job of `ranks`
// ranks, with no effect beyond the value returned: no file touched, nothing
// printed, MPI not needed. Throws UsageError, one line naming the option and
// the cause, for a bad command line; nothing else but std::bad_alloc.
ParsedMpiCommandLine parse_mpi_command_line(const std::vector<std::string>& args, unsigned ranks);

// The rules the run relies on, checked again from the parsed values (not the
// strings): throws UsageError when one is broken. parse_mpi_command_line
// never returns settings that fail it.
void recheck_mpi_settings(const MpiSettings& s, unsigned ranks);

}  // namespace iolab::cli
