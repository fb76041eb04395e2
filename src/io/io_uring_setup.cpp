// Inside io: setting up an io_uring as UringOptions ask (io_uring_setup.h).
#include "io_uring_setup.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace iolab::io {

std::vector<std::string> option_names(const UringOptions& o) {
  std::vector<std::string> out;
  if (o.registered_files) out.push_back("registered files");
  if (o.fixed_buffers) out.push_back("fixed buffers");
  if (o.sqpoll) out.push_back("SQPOLL");
  if (o.single_issuer) out.push_back("SINGLE_ISSUER+DEFER_TASKRUN");
  if (o.coop_taskrun) out.push_back("COOP_TASKRUN");
  return out;
}

}  // namespace iolab::io

namespace iolab::io::uring {

unsigned setup_flags(const UringOptions& o) {
  unsigned f = 0;
  if (o.sqpoll) f |= IORING_SETUP_SQPOLL;
  if (o.single_issuer) f |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (o.coop_taskrun) f |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  return f;
}

// "sqpoll, coop_taskrun", or "no options".
std::string describe(const UringOptions& o) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (on) s += (s.empty() ? "" : ", ") + std::string(name);
  };
  add(o.registered_files, "registered_files");
  add(o.fixed_buffers, "fixed_buffers");
  add(o.sqpoll, "sqpoll");
  add(o.single_issuer, "single_issuer+defer_taskrun");
  add(o.coop_taskrun, "coop_taskrun");
  return s.empty() ? "no options" : s;
}

int register_file(io_uring& ring, int fd) { return -::io_uring_register_files(&ring, &fd, 1); }
int register_buffer_table(io_uring& ring, const std::vector<iovec>& iov) {
  return -::io_uring_register_buffers(&ring, iov.data(), static_cast<unsigned>(iov.size()));
}
std::string buffers_refused(int err) {
  std::string why = std::strerror(err);
  if (err == ENOMEM || err == EPERM) why += " (pinned pages count against RLIMIT_MEMLOCK)";
  return why;
}

// The thread ids of this process now.
std::vector<pid_t> task_ids() {
  std::vector<pid_t> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec))
    ids.push_back(static_cast<pid_t>(std::stol(e.path().filename().string())));
  std::sort(ids.begin(), ids.end());
  return ids;
}

// "<comm>" of thread `tid` of this process, "" when it is gone.
std::string task_name(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::optional<std::uint64_t> thread_cpu_ns(pid_t tid) {
  const clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace iolab::io::uring
