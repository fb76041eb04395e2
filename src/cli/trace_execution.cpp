// `iolab trace`'s run (trace_run.h): strace records the program into a file
// of iolab's scratch directory, the trace layer turns that into a trace
// (trace/import.h), and the trace is published by --out's rules
// (report/output_files.h: a .iotrace file, replacing only a trace iolab
// wrote). The scratch directory goes at the end, and on a signal (io/scratch.h).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/fio/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/report/output_files.h"
#include "iolab/trace/import.h"
#include "iolab/trace/trace.h"
#include "trace_run.h"

extern char** environ;

namespace iolab::cli {

namespace {

report::OutputRequest trace_request(const TraceOptions& o) {
  report::OutputRequest request;
  request.given = o.out;
  request.program = "trace";
  request.kinds = {{".iotrace", [](std::string_view head) { return head.starts_with("iolab-trace "); }}};
  if (!o.fio_iolog.empty()) request.inputs.push_back(o.fio_iolog);
  request.input_kind = "the fio iolog";
  return request;
}

// Publishes the trace's text; false (said on stderr) when it went elsewhere.
bool publish(report::OutputFiles& out, const std::string& text, const trace::ImportSummary& s, const std::string& from,
             const std::string& dir) {
  auto p = out.publish([&](std::size_t, const std::filesystem::path&) { return text; },
                       report::fallback_dirs(io::ScratchDir::parent_for(dir)));
  out.release();
  fmt::print("trace: {} operation{} on {} file{} by {} thread{} ({}): {}\n", s.ops, s.ops == 1 ? "" : "s", s.files,
             s.files == 1 ? "" : "s", s.threads, s.threads == 1 ? "" : "s", from,
             printable(p.files.front().string()));
  if (p.problem) std::fprintf(stderr, "iolab: %s\n", one_line(*p.problem).c_str());
  return !p.problem;
}

int import_fio_iolog(const TraceOptions& o) {
  std::error_code ec;
  const auto status = std::filesystem::status(o.fio_iolog, ec);
  if (ec || !std::filesystem::exists(status))
    throw UsageError("--from-fio-iolog " + o.fio_iolog, "no such file");
  if (!std::filesystem::is_regular_file(status))
    throw UsageError("--from-fio-iolog " + o.fio_iolog, "is not a regular file");
  std::ifstream in(o.fio_iolog, std::ios::binary);
  if (!in) throw UsageError("--from-fio-iolog " + o.fio_iolog, std::string("cannot be read: ") + std::strerror(errno));
  report::OutputFiles out(trace_request(o));
  out.prepare();
  std::ostringstream text;
  const trace::ImportSummary s = trace::fio_iolog_to_trace(in, o.fio_iolog, text);
  return publish(out, text.str(), s, "fio iolog " + printable(o.fio_iolog), o.dir) ? 0 : 1;
}

// strace, running: its pid, killed and reaped by a signal's cleanup (as
// fio's run_program does) so it never outlives iolab writing into the
// scratch directory.
struct Tracer {
  std::mutex mutex;
  pid_t pid = -1;
  bool reaped = false;
};

std::string shell_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) {
    const bool quote = w.empty() || w.find_first_of(" \t\"'$\\;&|<>()*?") != std::string::npos;
    std::string quoted;
    for (char c : w) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += (s.empty() ? "" : " ") + (quote ? "'" + quoted + "'" : w);
  }
  return s;
}

int record(const TraceOptions& o) {
  const char* path_env = std::getenv("PATH");
  const auto strace = fio::find_program("strace", path_env != nullptr ? path_env : "");
  if (!strace) {
    std::fprintf(stderr, "iolab trace: strace is not installed (Debian: apt-get install strace)\n");
    return 2;
  }
  report::OutputFiles out(trace_request(o));
  io::ScratchDir scratch(o.dir);
  out.prepare();
  const std::filesystem::path output = scratch.create_file("strace.txt");

  std::vector<std::string> args{strace->string()};
  for (std::string_view option : trace::kStraceOptions) args.emplace_back(option);
  args.insert(args.end(), {"-e", "trace=" + std::string(trace::strace_syscalls()), "-o", output.string()});
  // The pid as strace reads it: decimal (--pid also took 0x1f).
  const std::string pid = o.pid.empty() ? "" : std::to_string(parse_count(o.pid, "--pid", 1, 4194304));
  if (!pid.empty()) {
    args.insert(args.end(), {"-p", pid});
  } else {
    args.emplace_back("--");
    args.insert(args.end(), o.command.begin(), o.command.end());
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // With --pid, Ctrl-C is how recording stops: strace (in the same process
  // group) detaches, and iolab, ignoring it meanwhile, writes the trace.
  struct sigaction previous {};
  const bool attach = !o.pid.empty();
  if (attach) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &previous);
    std::fprintf(stderr, "iolab trace: recording process %s; Ctrl-C stops\n", pid.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // strace starts with the signals a shell would give it: none blocked,
  // and those that end a process ending it (iolab ignores SIGINT with --pid).
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&defaults, sig);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  // A command runs with strace in a process group of their own, so that a
  // signal ending iolab ends them both (strace 6.1 has no --kill-on-exit,
  // and ignores SIGTERM while its command runs); the price: the program
  // cannot read the terminal. With --pid, strace stays in iolab's group,
  // where the terminal's Ctrl-C reaches it.
  short spawn_flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (!attach) {
    spawn_flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, spawn_flags);
  auto tracer = std::make_shared<Tracer>();
  const int rc = ::posix_spawn(&tracer->pid, strace->c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (attach) ::sigaction(SIGINT, &previous, nullptr);
    throw Error("run", strace->string(), rc);
  }
  io::InterruptHook stop_on_signal([tracer, attach](int sig) {
    std::lock_guard lock(tracer->mutex);
    if (tracer->reaped) return;
    // The command and strace (their group); with --pid strace alone: the
    // process it traced is detached, and goes on.
    ::kill(attach ? tracer->pid : -tracer->pid, SIGKILL);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(tracer->pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    std::fprintf(stderr, "iolab: trace interrupted by %s; %s, scratch files removed, no trace written\n",
                 io::signal_name(sig).c_str(), attach ? "strace stopped" : "the program and strace stopped");
  });
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(tracer->pid), &info, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR) throw Error("wait for", strace->string(), errno);
  int status = 0;
  {
    std::lock_guard lock(tracer->mutex);
    while (::waitpid(tracer->pid, &status, 0) < 0)
      if (errno != EINTR) throw Error("wait for", strace->string(), errno);
    tracer->reaped = true;
  }
  if (io::interrupting_signal() != 0) io::wait_for_signal_cleanup();
  if (attach) ::sigaction(SIGINT, &previous, nullptr);

  std::ifstream in(output, std::ios::binary);
  if (!in) throw Error("read", output.string(), errno);
  trace::StraceSettings settings;
  settings.all_files = o.all_files;
  settings.size_now = [](const std::string& path) -> std::optional<std::uint64_t> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return static_cast<std::uint64_t>(st.st_size);
  };
  settings.directory_now = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  const std::string command = attach ? "--pid " + pid : shell_words(o.command);
  std::ostringstream text;
  const trace::ImportSummary s = trace::strace_to_trace(in, command, settings, text);
  in.close();
  scratch.remove_file(output);

  // How the program ended: strace exits with its status, or by its signal.
  // With --pid, strace ending by the Ctrl-C that stops it is the normal end.
  std::string failure;
  if (attach && WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
  } else if (WIFSIGNALED(status))
    failure = std::string("was killed by ") + io::signal_name(WTERMSIG(status));
  else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !attach)
    failure = "exited with status " + std::to_string(WEXITSTATUS(status));
  else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    failure = "could not be recorded (strace exited with status " + std::to_string(WEXITSTATUS(status)) + ")";
  if (s.ops == 0) {
    std::fprintf(stderr, "iolab trace: nothing recorded: the %s %s; no trace written\n",
                 attach ? "process" : "program",
                 failure.empty() ? "did no file I/O iolab records (regular files, outside the system's unless --all-files)"
                                 : failure.c_str());
    return 1;
  }
  const bool published = publish(out, text.str(), s, attach ? "process " + pid : "strace", o.dir);
  if (!failure.empty()) {
    std::fprintf(stderr, "iolab trace: the traced %s %s; the trace holds what it did until then\n",
                 attach ? "process" : "program", failure.c_str());
    return 1;
  }
  return published ? 0 : 1;
}

}  // namespace

int run_trace(const TraceOptions& o) { return o.fio_iolog.empty() ? record(o) : import_fio_iolog(o); }

}  // namespace iolab::cli
