// A memory cgroup of iolab's own, and a child process that runs in it.
#include "iolab/harness/memory_cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/base/proc.h"
#include "iolab/base/units.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {

void check_memory_limit(std::uint64_t limit, std::uint64_t least, const std::string& given, std::string_view why_least) {
  if (limit < least)
    throw UsageError(given, "at least " + format_bytes(static_cast<double>(least)) + " (" + std::string(why_least) + ")");
  const std::uint64_t ram = proc::physical_memory_bytes();
  if (ram == 0) return;
  if (limit >= ram)
    throw UsageError(given, "must be below this machine's " + format_bytes(static_cast<double>(ram)) +
                                " of memory: a limit it cannot reach never binds, so nothing would be past memory");
}

namespace {
constexpr NameTable<CgroupVersion, 2> kCgroupVersions{{{CgroupVersion::V1, "v1"}, {CgroupVersion::V2, "v2"}}};
}  // namespace

std::string_view to_string(CgroupVersion v) { return name_of(kCgroupVersions, v); }

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

// The groups this process made and has not removed: a group under its pid
// that is not one of them was left by a killed process whose pid it now has.
std::mutex g_live_mutex;
std::vector<std::string>& live_groups() {
  static auto* names = new std::vector<std::string>;  // never destroyed: a signal's cleanup may run late
  return *names;
}
bool is_live_here(const std::string& name) {
  std::lock_guard lock(g_live_mutex);
  return std::find(live_groups().begin(), live_groups().end(), name) != live_groups().end();
}

// rmdir of a group, once: EBUSY while a task is still in it. A test's plain
// directory holds the control files iolab wrote as plain files: those go first.
int remove_group_dir(const std::filesystem::path& dir, CgroupVersion version) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return 0;
  if (errno != ENOTEMPTY) return errno;
  for (const char* name : {limit_file(version), "cgroup.procs"}) ::unlink((dir / name).c_str());
  return ::rmdir(dir.c_str()) == 0 ? 0 : errno;
}

// The pid in "iolab-<pid>-<n>", or 0 when the name is not one iolab gives.
pid_t group_owner(const std::string& name) {
  unsigned long pid = 0, n = 0;
  char tail = 0;
  if (!name.starts_with("iolab-") || std::sscanf(name.c_str() + 6, "%lu-%lu%c", &pid, &n, &tail) != 2) return 0;
  if (name != "iolab-" + std::to_string(pid) + "-" + std::to_string(n)) return 0;
  return static_cast<pid_t>(pid);
}

// Removes the empty groups iolab processes that were killed outright left
// under `root` (SIGKILL runs no cleanup): a group whose process is gone, or
// one under this process's pid that it did not make. A group with a task
// still in it stays (rmdir refuses it).
void reclaim_abandoned_groups(const CgroupRoot& root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root.dir, ec)) {
    const std::string name = entry.path().filename().string();
    const pid_t owner = group_owner(name);
    if (owner <= 0 || entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    const bool abandoned = owner == ::getpid() ? !is_live_here(name) : (::kill(owner, 0) != 0 && errno == ESRCH);
    if (abandoned) remove_group_dir(entry.path(), root.version);
  }
}

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
    : version_(root.version), limit_(limit_bytes) {
  reclaim_abandoned_groups(root);
  // A name still taken (a killed process's group with a task left in it) is passed over.
  for (int attempt = 0;; ++attempt) {
    path_ = root.dir / ("iolab-" + std::to_string(::getpid()) + "-" + std::to_string(g_next_group++));
    std::lock_guard lock(g_live_mutex);
    if (::mkdir(path_.c_str(), 0755) == 0) {
      live_groups().push_back(path_.filename().string());
      break;
    }
    if (errno != EEXIST || attempt == 99) throw Error("mkdir", path_.string(), errno);
  }
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

std::optional<std::uint64_t> MemoryCgroup::usage_bytes() const {
  std::ifstream in(path_ / (version_ == CgroupVersion::V2 ? "memory.current" : "memory.usage_in_bytes"));
  std::uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

void MemoryCgroup::set_limit(std::uint64_t bytes) {
  write_control(path_ / limit_file(version_), std::to_string(bytes));
  limit_ = bytes;
}

void MemoryCgroup::remove() noexcept {
  std::lock_guard lock(mutex_);
  if (removed_) return;
  // A task that was just killed leaves the group as it exits: EBUSY until then (at most ~2 s here).
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int err = remove_group_dir(path_, version_);
    if (err == 0) {
      removed_ = true;
      std::lock_guard live(g_live_mutex);
      auto& names = live_groups();
      names.erase(std::remove(names.begin(), names.end(), path_.filename().string()), names.end());
      return;
    }
    if (err != EBUSY) return;
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

// A frame on the session's socket: a kind byte, the payload's length (8
// bytes, this machine's order: both ends are this program), the payload.
constexpr char kMessage = 'm', kResult = 'r', kFailure = 'e';

void write_all(int fd, const char* p, std::size_t left) {
  while (left > 0) {
    // MSG_NOSIGNAL: a peer that is gone is an EPIPE here, not a SIGPIPE that ends iolab.
    ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("send", "a child session's socket", errno);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void write_frame(int fd, char kind, std::string_view payload) {
  char head[1 + sizeof(std::uint64_t)];
  head[0] = kind;
  const std::uint64_t size = payload.size();
  std::memcpy(head + 1, &size, sizeof size);
  write_all(fd, head, sizeof head);
  write_all(fd, payload.data(), payload.size());
}

// False at end of file before the first byte.
bool read_all(int fd, char* p, std::size_t left) {
  bool any = false;
  while (left > 0) {
    ssize_t n = ::read(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("read", "a child session's socket", errno);
    if (n == 0) {
      if (!any) return false;
      throw Error("read", "a child session's socket", "the other end closed it inside a message", EPIPE);
    }
    any = true;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

struct Frame {
  char kind = 0;  // 0: end of file
  std::string payload;
};
Frame read_frame(int fd) {
  Frame f;
  char head[1 + sizeof(std::uint64_t)];
  if (!read_all(fd, head, sizeof head)) return f;
  std::uint64_t size = 0;
  std::memcpy(&size, head + 1, sizeof size);
  f.payload.resize(static_cast<std::size_t>(size));
  if (size > 0 && !read_all(fd, f.payload.data(), f.payload.size()))
    throw Error("read", "a child session's socket", "the other end closed it inside a message", EPIPE);
  f.kind = head[0];
  return f;
}

// A session's next frame from its child, unless the child has been reaped.
Frame next_frame(int fd, bool reaped, const MemoryCgroup& group) {
  if (reaped) throw Error("run", "child in " + group.description(), "it has ended", ECHILD);
  return read_frame(fd);
}

[[noreturn]] void child_main(int fd, const std::function<std::string(ParentLink&)>& body) {
  for (int sig : kChildDefaultSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::signal(sig, SIG_DFL);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive iolab (its cleanup removes the group)
  char go = 0;
  if (::read(fd, &go, 1) != 1) ::_exit(3);  // the parent could not place us in the group
  int status = 0;
  try {
    ParentLink link(fd);
    std::string result = body(link);
    write_frame(fd, kResult, result);
  } catch (const std::exception& e) {
    status = 1;
    try {
      write_frame(fd, kFailure, e.what());
    } catch (...) {
      ::_exit(4);
    }
  } catch (...) {
    status = 1;
    try {
      write_frame(fd, kFailure, "unknown exception");
    } catch (...) {
      ::_exit(4);
    }
  }
  ::_exit(status);  // no destructors: the parent's objects (scratch directory) are the parent's
}

}  // namespace

std::string ParentLink::receive() {
  Frame f = read_frame(fd_);
  if (f.kind != kMessage) throw Error("receive", "the parent of a child session", "the parent is gone", EPIPE);
  return std::move(f.payload);
}

void ParentLink::send(std::string_view message) { write_frame(fd_, kMessage, message); }

ChildSession::ChildSession(MemoryCgroup& group, std::function<std::string(ParentLink&)> body,
                           std::function<void()> after_signal)
    : group_(group), after_signal_(std::move(after_signal)) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error("socketpair", "child of " + group.description(), errno);
  pid_ = ::fork();
  if (pid_ < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error("fork", "child of " + group.description(), err);
  }
  if (pid_ == 0) {
    ::close(fds[0]);
    child_main(fds[1], body);
  }
  ::close(fds[1]);
  fd_ = fds[0];
  // A signal that ends iolab: the child first, then its group, then the scratch files.
  hook_ = std::make_unique<io::InterruptHook>([pid = pid_, &group, after = after_signal_](int) {
    ::kill(pid, SIGKILL);
    group.remove();  // waits for the child to leave it
    if (after) after();
  });
  try {
    group.add(pid_);
    const char go = 'g';
    write_all(fd_, &go, 1);
  } catch (...) {
    ::kill(pid_, SIGKILL);
    reap();
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

ChildSession::~ChildSession() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    reap();
  }
  if (fd_ >= 0) ::close(fd_);
}

int ChildSession::reap() {
  if (reaped_) return status_;
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status_;
}

void ChildSession::ended(const std::string& why) {
  const int status = reap();
  const std::string who = "child in " + group_.description();
  if (!why.empty()) throw Error("run", who, why);
  if (WIFSIGNALED(status))
    throw Error("run", who,
                std::string("killed by ") + io::signal_name(WTERMSIG(status)) +
                    (WTERMSIG(status) == SIGKILL ? " (out of memory under the group's limit?)" : ""));
  throw Error("run", who, "exited with status " + std::to_string(WEXITSTATUS(status)) + " and no result");
}

void ChildSession::send(std::string_view message) {
  if (reaped_) ended("");
  try {
    write_frame(fd_, kMessage, message);
  } catch (const Error&) {
    // The child is gone: what ended it is the error worth reporting.
    Frame f = next_frame(fd_, reaped_, group_);
    ended(f.kind == kFailure ? f.payload : "");
  }
}

std::string ChildSession::receive() {
  Frame f = next_frame(fd_, reaped_, group_);
  if (f.kind == kMessage) return std::move(f.payload);
  if (f.kind == kFailure) ended(f.payload);
  if (f.kind == kResult) ended("it ended while its parent waited for a message");
  ended("");
}

std::string ChildSession::finish() {
  Frame f = next_frame(fd_, reaped_, group_);
  if (f.kind == kFailure) ended(f.payload);
  if (f.kind == kMessage) ended("it sent a message its parent did not read");
  if (f.kind != kResult) ended("");
  const int status = reap();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::move(f.payload);
  ended("");
}

std::string run_in_child(MemoryCgroup& group, const std::function<std::string()>& body,
                         std::function<void()> after_signal) {
  ChildSession session(group, [&body](ParentLink&) { return body(); }, std::move(after_signal));
  return session.finish();
}

}  // namespace iolab::harness
