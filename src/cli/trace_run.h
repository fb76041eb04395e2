// Internal: `iolab trace`'s options as parsed (trace_command.cpp) and its run
// (trace_execution.cpp).
#pragma once

#include <string>
#include <vector>

namespace iolab::cli {

struct TraceOptions {
  std::vector<std::string> command;  // after "--": the program and its arguments
  std::string out, pid, fio_iolog, dir;
  bool all_files = false;
};

// Records (or imports) and publishes the trace; the exit code: 0, 1 when the
// traced program failed or nothing was recorded, 2 when strace is missing.
int run_trace(const TraceOptions& options);

}  // namespace iolab::cli
