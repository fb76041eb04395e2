// Runs the built iolab binary as a user would, stdout and stderr captured
// into scratch files; shared by the CLI tests.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "iolab/io/scratch.h"

extern char** environ;

namespace iolab::test {

struct ProgramRun {
  int exit_code = -1;
  std::string out, err;
  // Lines of stderr (a trailing newline does not start another line).
  std::size_t err_lines() const {
    std::size_t n = 0;
    for (char c : err) n += c == '\n';
    return n + (!err.empty() && err.back() != '\n');
  }
};

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `iolab ARGS...`; a death by signal is a test failure.
inline ProgramRun run_iolab(const std::vector<std::string>& args) {
  io::ScratchDir scratch("/tmp");
  auto out = scratch.create_file("stdout");
  auto err = scratch.create_file("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
  std::string binary = IOLAB_BINARY_DIR "/iolab";
  std::vector<std::string> copies{binary};
  copies.insert(copies.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ProgramRun r;
  if (rc != 0) {
    ADD_FAILURE() << "cannot run " << binary << ": " << std::strerror(rc);
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else ADD_FAILURE() << "iolab died of signal " << WTERMSIG(status);
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

}  // namespace iolab::test
