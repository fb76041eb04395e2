// Rank 0's process as the other ranks on its host see it (mpi.h).
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "iolab/mpi/mpi.h"

namespace iolab::mpi {
namespace {

// This process's host and PID space: the kernel's boot and its PID
// namespace. Equal on two ranks means rank 0's PID names rank 0 here.
std::string pid_space() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  std::error_code ec;
  const std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  return id.empty() || ns.empty() ? std::string() : id + " " + ns;
}

}  // namespace

RankZeroProcess::RankZeroProcess(MpiTeam& team) {
  const std::string mine = pid_space();
  const bool root = rank() == 0;
  const std::string theirs = team.broadcast(root ? std::to_string(::getpid()) + " " + mine : "");
  if (root || mine.empty()) return;
  std::istringstream in(theirs);
  long pid = 0;
  in >> pid;
  std::string space;
  std::getline(in >> std::ws, space);
  if (pid <= 0 || space != mine) return;
  // A pidfd, taken while rank 0 surely lives (it has just broadcast), stays
  // its own: a PID the kernel hands out again later is not it.
  const long fd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
  if (fd >= 0) pidfd_ = static_cast<int>(fd);
}

RankZeroProcess::~RankZeroProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

void RankZeroProcess::wait_for_end(int limit_ms) const noexcept {
  if (pidfd_ < 0) return;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  pollfd p{pidfd_, POLLIN, 0};
  // Readable once the process has ended. EINTR (a handled signal): wait out the rest.
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count()) + 1) >= 0 || errno != EINTR) return;
  }
}

}  // namespace iolab::mpi
