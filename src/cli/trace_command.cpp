// `iolab trace [--out TRACE] -- CMD [ARGS...]`, `iolab trace --pid PID`,
// `iolab trace --from-fio-iolog FILE`: a program's file I/O recorded as a
// trace (issue 41, docs/trace-format.md), for `iolab replay` to play back
// through each method. Recording runs strace; trace_execution.cpp does it.
#include <string>
#include <vector>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "trace_run.h"

namespace iolab::cli {

namespace {

void recheck_trace(const TraceOptions& o) {
  const int sources = static_cast<int>(!o.command.empty()) + static_cast<int>(!o.pid.empty()) +
                      static_cast<int>(!o.fio_iolog.empty());
  if (sources == 0)
    throw UsageError("iolab trace", "nothing to record: give a command after '--', --pid PID or --from-fio-iolog FILE");
  if (sources > 1)
    throw UsageError("iolab trace", "give one of a command after '--', --pid PID or --from-fio-iolog FILE");
  if (!o.pid.empty()) {
    const std::uint64_t pid = parse_count(o.pid, "--pid", 1, 4194304);  // PID_MAX_LIMIT
    (void)pid;
  }
  if (!o.fio_iolog.empty() && o.all_files)
    throw UsageError("--all-files", "applies to recording with strace, not to a fio iolog");
  if (!o.command.empty() && o.command.front().empty()) throw UsageError("command ''", "empty; name the program to run");
}

void add_trace_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<TraceOptions>();
  auto* cmd = app.add_subcommand(
      "trace", "Record a program's file I/O (through strace) or import a fio iolog, as a trace iolab can replay");
  cmd->add_option("command", opts->command, "The program to run and record, with its arguments, after '--'");
  cmd->add_option("--out", opts->out,
                  "Write the trace to this file, ending in .iotrace (default: results/trace-<time>-<pid>.iotrace); "
                  "replaces only a trace iolab wrote");
  cmd->add_option("--pid", opts->pid, "Record a running process (and its threads and children) until Ctrl-C");
  cmd->add_option("--from-fio-iolog", opts->fio_iolog,
                  "Import a fio iolog (write_iolog=, version 2 or 3) instead of recording");
  cmd->add_option("--dir", opts->dir, "Parent of the scratch directory strace writes into (default: $TMPDIR or /tmp)");
  cmd->add_flag("--all-files", opts->all_files,
                "Also record the system's files every program reads at start (under /usr, /lib, /etc, ...), left "
                "out by default");
  cmd->footer(
      "The trace holds what moved where and when, never data or paths (docs/trace-format.md).\n"
      "Examples:\n"
      "  iolab trace --out insert.iotrace -- sqlite3 t.db 'create table t(x); insert into t values (1);'\n"
      "  iolab trace --pid 4242 --out server.iotrace\n"
      "  iolab trace --from-fio-iolog job.iolog --out job.iotrace");
  act_on(cmd, action, opts, recheck_trace, run_trace);
}

const CommandRegistration trace_registration{65, add_trace_command};

}  // namespace
}  // namespace iolab::cli
