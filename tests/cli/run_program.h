// Runs the built iolab binary as a user would, stdout and stderr captured
// into scratch files; shared by the CLI tests. run_iolab runs it to the end;
// start_iolab leaves it running (to signal it, or to run several at once)
// with a working directory, a file-size limit or stdout into a pipe.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"

namespace iolab::testing {

// A directory of the test's own where iolab is told to work: scratch() is
// the parent of its scratch directory (--dir), the rest its results;
// removed with all it holds.
class Workspace {
 public:
  Workspace() { std::filesystem::create_directory(scratch()); }
  const std::filesystem::path& path() const { return dir_.path(); }
  std::filesystem::path scratch() const { return dir_ / "scratch"; }
  std::filesystem::path operator/(const std::string& name) const { return dir_ / name; }
  // What iolab left in the scratch parent: nothing, once it has ended.
  std::vector<std::string> leftovers() const;

 private:
  TestDir dir_{"/tmp"};
};

inline std::vector<std::string> Workspace::leftovers() const { return names_in(scratch()); }

struct ProgramRun {
  int exit_code = -1;  // -1 when it died of a signal
  int signal = 0;      // the signal it died of, 0 when it exited
  std::string out, err;
  // Lines of stderr (a trailing newline does not start another line).
  std::size_t err_lines() const {
    std::size_t n = 0;
    for (char c : err) n += c == '\n';
    return n + (!err.empty() && err.back() != '\n');
  }
};

struct StartOptions {
  std::filesystem::path cwd;          // empty: the test's own
  std::uint64_t file_size_limit = 0;  // RLIMIT_FSIZE, 0 = none; SIGXFSZ ignored, so a write past it fails (EFBIG)
  int stdout_fd = -1;                 // stdout to this descriptor (a pipe) instead of a file
  bool close_stdout = false;          // started with stdout closed (`>&-`)
  bool sigxfsz_default = false;       // with file_size_limit: SIGXFSZ left as a shell leaves it (kills)
  std::uint64_t address_space_limit = 0;  // RLIMIT_AS (ulimit -v) in bytes, 0 = none
  std::vector<std::string> environment;   // "NAME=value": replaces NAME in iolab's environment
};

// A started iolab; finish() waits for it and collects what it printed.
class RunningProgram {
 public:
  RunningProgram(const std::vector<std::string>& args, const StartOptions& options) {
    out_ = scratch_ / "stdout";
    err_ = scratch_ / "stderr";
    write_file(out_, "");
    write_file(err_, "");
    std::string binary = IOLAB_BINARY_DIR "/iolab";
    std::vector<std::string> copies{binary};
    copies.insert(copies.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The environment, made before fork (the child may only exec).
    std::vector<std::string> env_copies;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      bool replaced = false;
      for (const auto& o : options.environment) replaced |= entry.substr(0, entry.find('=') + 1) == o.substr(0, o.find('=') + 1);
      if (!replaced) env_copies.push_back(entry);
    }
    env_copies.insert(env_copies.end(), options.environment.begin(), options.environment.end());
    std::vector<char*> envp;
    for (auto& e : env_copies) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {  // the child: only async-signal-safe calls until exec
      int out = options.stdout_fd >= 0 ? options.stdout_fd : ::open(out_.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW);
      int err = ::open(err_.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW);
      if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
      if (options.close_stdout) ::close(1);
      if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
      if (options.address_space_limit != 0) {
        struct rlimit limit {options.address_space_limit, options.address_space_limit};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
      }
      // Signals as a terminal would deliver them, whatever the test runner
      // inherited (a background job ignores SIGINT).
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM}) ::signal(sig, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      if (options.file_size_limit != 0) {
        struct rlimit limit {options.file_size_limit, options.file_size_limit};
        ::signal(SIGXFSZ, options.sigxfsz_default ? SIG_DFL : SIG_IGN);
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(126);
      }
      ::execve(binary.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    if (pid_ < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  }
  ~RunningProgram() {
    if (pid_ > 0 && !finished_) {
      ::kill(pid_, SIGKILL);
      finish();
    }
  }
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;

  pid_t pid() const { return pid_; }
  // What it has printed on stdout so far.
  std::string out_so_far() const { return read_file(out_); }
  void send(int sig) const { ::kill(pid_, sig); }

  ProgramRun finish() {
    ProgramRun r;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    finished_ = true;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = read_file(out_);
    r.err = read_file(err_);
    return r;
  }

 private:
  TestDir scratch_{"/tmp"};
  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
  bool finished_ = false;
};

inline std::unique_ptr<RunningProgram> start_iolab(const std::vector<std::string>& args, const StartOptions& options = {}) {
  return std::make_unique<RunningProgram>(args, options);
}

// `iolab ARGS...` to the end; a death by signal is a test failure.
inline ProgramRun run_iolab(const std::vector<std::string>& args, const StartOptions& options = {}) {
  ProgramRun r = start_iolab(args, options)->finish();
  if (r.signal != 0) ADD_FAILURE() << "iolab died of signal " << r.signal;
  return r;
}

// Whether a fio program is on PATH (the crosscheck tests compare with it when it is).
inline bool fio_installed() {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "";
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t colon = p.find(':', start);
    std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && ::access((dir + "/fio").c_str(), X_OK) == 0) return true;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return false;
}

// Polls `ready` (every 5 ms) until it holds, for at most `limit`: for a
// state another process reaches, not a sleep that decides an outcome.
inline bool wait_until(const std::function<bool()>& ready, std::chrono::seconds limit = std::chrono::seconds(120)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The smallest useful run: one experiment, one short repetition, in w's scratch.
inline std::vector<std::string> small_run(const Workspace& w, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"run",      "--method",     "pread", "--size",     "64k", "--bs",  "4k",
                                "--reps",   "1",            "--warmup", "0",       "--min-time", "0", "--no-latency",
                                "--dir",    w.scratch().string()};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// A results file of one record (a real run's), `name` in w.
inline std::filesystem::path results_file(const Workspace& w, const std::string& name) {
  const std::filesystem::path out = w / name;
  ProgramRun r = run_iolab(small_run(w, {"--out", out.string()}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

inline nlohmann::json json_of(const std::filesystem::path& p) { return nlohmann::json::parse(read_file(p)); }

// A command line as one string, for failure messages.
inline std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += a + " ";
  return s;
}

inline StartOptions in_directory(const std::filesystem::path& cwd) {
  StartOptions o;
  o.cwd = cwd;
  return o;
}

inline StartOptions stdout_to(int fd) {
  StartOptions o;
  o.stdout_fd = fd;
  return o;
}

}  // namespace iolab::testing
