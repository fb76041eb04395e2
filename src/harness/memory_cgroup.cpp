// A memory cgroup of iolab's own, and a child process that runs in it.
#include "iolab/harness/memory_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {

std::string_view to_string(CgroupVersion v) { return v == CgroupVersion::V2 ? "v2" : "v1"; }

namespace {

bool lists_word(const std::filesystem::path& file, std::string_view word) {
  std::ifstream in(file);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

// Writes `text` to a control file (created when the group is a plain
// directory, as in tests).
void write_control(const std::filesystem::path& file, const std::string& text) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("open", file.string(), errno);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) throw Error("write", file.string(), "'" + text + "': " + std::strerror(err), err);
}

const char* limit_file(CgroupVersion v) { return v == CgroupVersion::V2 ? "memory.max" : "memory.limit_in_bytes"; }

std::atomic<unsigned> g_next_group{0};

}  // namespace

CgroupPlace find_memory_cgroup(const proc::CgroupMounts& mounts) {
  CgroupPlace out;
  std::optional<CgroupRoot> root;
  if (!mounts.unified.empty() && lists_word(mounts.unified / "cgroup.subtree_control", "memory"))
    root = CgroupRoot{mounts.unified, CgroupVersion::V2};
  else if (!mounts.memory_v1.empty())
    root = CgroupRoot{mounts.memory_v1, CgroupVersion::V1};
  if (!root) {
    out.why = mounts.unified.empty() ? "no memory cgroup controller mounted (neither cgroup v1 memory nor cgroup v2)"
                                     : "cgroup v2 at " + mounts.unified.string() +
                                           " does not give child groups the memory controller, and no v1 memory "
                                           "hierarchy is mounted";
    return out;
  }
  if (::access(root->dir.c_str(), W_OK) != 0) {
    out.why = "cannot create a memory cgroup under " + root->dir.string() + " (" + std::strerror(errno) +
              (::geteuid() != 0 ? "; needs root)" : ")");
    return out;
  }
  out.root = root;
  return out;
}

MemoryCgroup::MemoryCgroup(const CgroupRoot& root, std::uint64_t limit_bytes)
    : path_(root.dir / ("iolab-" + std::to_string(::getpid()) + "-" + std::to_string(g_next_group++))),
      version_(root.version),
      limit_(limit_bytes) {
  if (::mkdir(path_.c_str(), 0755) != 0) throw Error("mkdir", path_.string(), errno);
  try {
    write_control(path_ / limit_file(version_), std::to_string(limit_bytes));
  } catch (...) {
    remove();
    throw;
  }
}

MemoryCgroup::~MemoryCgroup() { remove(); }

std::string MemoryCgroup::description() const { return std::string(to_string(version_)) + " " + path_.string(); }

void MemoryCgroup::add(pid_t pid) { write_control(path_ / "cgroup.procs", std::to_string(pid)); }

std::optional<std::uint64_t> MemoryCgroup::page_cache_bytes() const {
  return proc::keyed_value(path_ / "memory.stat", version_ == CgroupVersion::V2 ? "file" : "cache");
}

void MemoryCgroup::remove() noexcept {
  std::lock_guard lock(mutex_);
  if (removed_) return;
  // A task that was just killed leaves the group as it exits: EBUSY until then (at most ~2 s here).
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
      removed_ = true;
      return;
    }
    if (errno == ENOTEMPTY) {
      // Not a cgroup (a test's plain directory): the files written here are ours.
      for (const char* name : {limit_file(version_), "cgroup.procs"}) ::unlink((path_ / name).c_str());
      if (::rmdir(path_.c_str()) == 0) removed_ = true;
      return;
    }
    if (errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool MemoryCgroup::removed() const {
  std::lock_guard lock(mutex_);
  return removed_;
}

namespace {

// The signals io::remove_scratch_dirs_on_signals hands to the parent's
// cleanup thread: the child takes their default action instead (its copy
// of the handler would write to the parent's pipe).
constexpr int kChildDefaultSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1,
                                        SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU, SIGXFSZ};

[[noreturn]] void child_main(int go_fd, int out_fd, const std::function<std::string()>& body) {
  for (int sig : kChildDefaultSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::signal(sig, SIG_DFL);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive iolab (its cleanup removes the group)
  char go = 0;
  if (::read(go_fd, &go, 1) != 1) ::_exit(3);  // the parent could not place us in the group
  std::string message;
  int status = 0;
  try {
    message = "ok\n" + body();
  } catch (const std::exception& e) {
    message = std::string("error\n") + e.what();
    status = 1;
  } catch (...) {
    message = "error\nunknown exception";
    status = 1;
  }
  const char* p = message.data();
  std::size_t left = message.size();
  while (left > 0) {
    ssize_t n = ::write(out_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(4);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::_exit(status);  // no destructors: the parent's objects (scratch directory) are the parent's
}

}  // namespace

std::string run_in_child(MemoryCgroup& group, const std::function<std::string()>& body,
                         std::function<void()> after_signal) {
  int go[2], out[2];
  if (::pipe2(go, O_CLOEXEC) != 0) throw Error("pipe2", "child of " + group.description(), errno);
  if (::pipe2(out, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(go[0]);
    ::close(go[1]);
    throw Error("pipe2", "child of " + group.description(), err);
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {go[0], go[1], out[0], out[1]}) ::close(fd);
    throw Error("fork", "child of " + group.description(), err);
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(out[0]);
    child_main(go[0], out[1], body);
  }
  ::close(go[0]);
  ::close(out[1]);
  auto reap = [pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  };
  // A signal that ends iolab: the child first, then its group, then the scratch files.
  io::InterruptHook on_signal([pid, &group, &after_signal](int) {
    ::kill(pid, SIGKILL);
    group.remove();  // waits for the child to leave it
    if (after_signal) after_signal();
  });
  try {
    group.add(pid);
  } catch (...) {
    ::close(go[1]);
    ::close(out[0]);
    ::kill(pid, SIGKILL);
    reap();
    throw;
  }
  char byte = 1;
  [[maybe_unused]] ssize_t w = ::write(go[1], &byte, 1);
  ::close(go[1]);
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  const int status = reap();
  const std::string who = "child in " + group.description();
  if (text.starts_with("ok\n") && WIFEXITED(status) && WEXITSTATUS(status) == 0) return text.substr(3);
  if (text.starts_with("error\n")) throw Error("run", who, text.substr(6));
  if (WIFSIGNALED(status))
    throw Error("run", who,
                std::string("killed by ") + io::signal_name(WTERMSIG(status)) +
                    (WTERMSIG(status) == SIGKILL ? " (out of memory under the group's limit?)" : ""));
  throw Error("run", who, "exited with status " + std::to_string(WEXITSTATUS(status)) + " and no result");
}

}  // namespace iolab::harness
