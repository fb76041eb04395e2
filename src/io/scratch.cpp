#include "iolab/io/scratch.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

// Live scratch directories and interrupt hooks. One mutex guards them and
// every ScratchDir's list of files, so the cleanup thread sees each list
// whole; once the cleanup has begun it keeps the mutex until the process
// ends, so nothing is created or removed behind it. Never destroyed: the
// cleanup may run while static destructors do.
struct Registry {
  std::recursive_mutex mutex;  // recursive: the cleanup thread holds it while it removes each directory
  std::vector<ScratchDir*> live;
  std::vector<std::pair<std::uint64_t, std::function<void(int)>>> hooks;
  std::uint64_t next_hook = 0;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

}  // namespace

std::filesystem::path ScratchDir::parent_for(const std::filesystem::path& parent) {
  if (!parent.empty()) return parent;
  const char* tmp = std::getenv("TMPDIR");
  return (tmp && *tmp) ? tmp : "/tmp";
}

ScratchDir::ScratchDir(const std::filesystem::path& parent) {
  const std::filesystem::path base = parent_for(parent);
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0) sys::fail("use scratch directory", base);
  if (!S_ISDIR(st.st_mode)) throw Error("use scratch directory", base.string(), "not a directory", ENOTDIR);
  reclaim_abandoned_scratch_dirs(base);
  std::string tmpl = (base / "iolab-XXXXXX").string();
  std::lock_guard lock(registry().mutex);
  if (::mkdtemp(tmpl.data()) == nullptr) sys::fail("create scratch directory in", base);
  path_ = tmpl;
  registry().live.push_back(this);
  // The list, locked before anything is listed: a reclaimer skips a list
  // this new (quiet_seconds), so the moment before the lock is safe too.
  const std::filesystem::path list_path = path_ / std::string(kScratchListName);
  list_fd_ = ::open(list_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  const int err = errno;
  if (list_fd_ < 0 || ::flock(list_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = list_fd_ < 0 ? err : errno;
    remove_all();
    registry().live.pop_back();
    throw Error("create", list_path.string(), e);
  }
}

ScratchDir::~ScratchDir() {
  std::lock_guard lock(registry().mutex);
  remove_all();
  auto& live = registry().live;
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
}

std::filesystem::path ScratchDir::checked_name(std::string_view name) const {
  if (name.empty() || name.find('/') != std::string_view::npos || name.find('\n') != std::string_view::npos ||
      name == "." || name == ".." || name == kScratchListName)
    throw UsageError("scratch file name '" + std::string(name) + "'", "must be a plain file name");
  return path_ / std::string(name);
}

void ScratchDir::list(std::string_view entry) {
  const std::string line = std::string(entry) + "\n";
  const std::filesystem::path list_path = path_ / std::string(kScratchListName);
  if (sys::retry("write", [&] { return ::write(list_fd_, line.data(), line.size()); }) !=
      static_cast<ssize_t>(line.size()))
    sys::fail("write", list_path);
}

std::filesystem::path ScratchDir::create_file(std::string_view name) {
  std::filesystem::path p = checked_name(name);
  std::lock_guard lock(registry().mutex);
  int fd = sys::retry("open",
      [&] { return ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); });
  if (fd < 0) sys::fail("create", p);
  sys::Fd file(fd);
  created_.push_back(p);  // tracked before close, so a failed close still cleans up
  list(name);  // only once made: a name listed is one iolab made
  file.close(p);
  return p;
}

std::filesystem::path ScratchDir::create_dir(std::string_view name) {
  std::filesystem::path p = checked_name(name);
  std::lock_guard lock(registry().mutex);
  sys::mkdir(p, 0700);
  try {
    list(std::string(name) + "/");
  } catch (...) {
    ::rmdir(p.c_str());
    throw;
  }
  return p;
}

std::filesystem::path ScratchDir::create_unique_file(std::string_view stem) {
  return create_file(std::string(stem) + "-" + std::to_string(next_unique_++));
}

void ScratchDir::remove_file(const std::filesystem::path& file) {
  std::lock_guard lock(registry().mutex);
  auto it = std::find(created_.begin(), created_.end(), file);
  if (it == created_.end()) throw Error("remove", file.string(), "not a file iolab created", EPERM);
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) sys::fail("remove", file);
  created_.erase(it);
}

namespace {

// A name iolab made in a scratch directory, or a library's companion of one
// (SQLite's "<db>-wal", LMDB's "<db>-lock").
bool ours_or_companion(const std::string& name, const std::vector<std::string>& ours) {
  return std::any_of(ours.begin(), ours.end(), [&](const std::string& mine) {
    return name == mine || (name.size() > mine.size() && name.starts_with(mine) && name[mine.size()] == '-');
  });
}

// Unlinks the entries of `dir` that are ours or companions, until it can be removed (twice at most).
void remove_ours_and_dir(const std::filesystem::path& dir, const std::vector<std::string>& ours) {
  for (int attempt = 0; attempt < 2 && ::rmdir(dir.c_str()) != 0 && errno == ENOTEMPTY; ++attempt) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (ours_or_companion(entry.path().filename().string(), ours)) ::unlink(entry.path().c_str());
  }
  ::rmdir(dir.c_str());  // fails harmlessly if something else put a file here
}

}  // namespace

void ScratchDir::remove_all() noexcept {
  std::lock_guard lock(registry().mutex);
  if (path_.empty()) return;
  std::vector<std::string> ours{std::string(kScratchListName)};
  for (const auto& f : created_) {
    ::unlink(f.c_str());
    ours.push_back(f.filename().string());
  }
  created_.clear();
  // What is left may be a library's companions of our files (SQLite's -wal,
  // -shm) or our own name made again: a library that opens by path (SQLite)
  // re-creates the file when a signal's cleanup removes it under a running
  // phase. Only those names go; twice, for one made again meanwhile.
  ::unlink((path_ / std::string(kScratchListName)).c_str());
  if (list_fd_ >= 0) ::close(list_fd_);
  list_fd_ = -1;
  remove_ours_and_dir(path_, ours);
  path_.clear();
}

bool reclaim_abandoned_scratch_dir(const std::filesystem::path& dir, unsigned quiet_seconds) {
  const std::string name = dir.filename().string();
  if (name.size() != 12 || !name.starts_with("iolab-")) return false;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return false;
  const std::filesystem::path list_path = dir / std::string(kScratchListName);
  sys::Fd list(::open(list_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat ls {};
  if (list.get() < 0 || ::fstat(list.get(), &ls) != 0 || !S_ISREG(ls.st_mode)) return false;
  if (ls.st_mtime + static_cast<time_t>(quiet_seconds) > ::time(nullptr)) return false;
  if (::flock(list.get(), LOCK_EX | LOCK_NB) != 0) return false;  // its process lives
  // The names it made, as listed; anything else keeps the directory.
  std::vector<std::string> ours{std::string(kScratchListName)};
  std::string text(static_cast<std::size_t>(std::min<off_t>(ls.st_size, off_t{1} << 20)), '\0');
  text.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::pread(list.get(), text.data(), text.size(), 0))));
  reclaim_abandoned_scratch_dirs(dir, 0);  // a child's scratch directory inside
  std::error_code ec;
  for (std::size_t at = 0, end; at < text.size(); at = end + 1) {
    end = std::min(text.find('\n', at), text.size());
    std::string item = text.substr(at, end - at);
    const bool is_dir = item.ends_with('/');
    if (is_dir) item.pop_back();
    if (item.empty() || item == "." || item == ".." || item.find('/') != std::string::npos) continue;
    if (is_dir) std::filesystem::remove_all(dir / item, ec);  // symlinks inside removed, not followed
    ours.push_back(item);
  }
  remove_ours_and_dir(dir, ours);
  return ::access(dir.c_str(), F_OK) != 0;
}

std::vector<std::filesystem::path> reclaim_abandoned_scratch_dirs(const std::filesystem::path& parent,
                                                                  unsigned quiet_seconds) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec))
    if (reclaim_abandoned_scratch_dir(entry.path(), quiet_seconds)) removed.push_back(entry.path());
  return removed;
}

void remove_all_scratch_dirs() noexcept {
  std::lock_guard lock(registry().mutex);
  for (ScratchDir* d : registry().live) d->remove_all();
}

// ---- signals ---------------------------------------------------------------

namespace {

// The handler hands the signal to the cleanup thread through this pipe.
int g_pipe[2] = {-1, -1};
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only use lock-free atomics");

constexpr int kHandledSignals[] = {SIGINT,    SIGTERM,   SIGHUP,  SIGPIPE, SIGQUIT, SIGUSR1,
                                   SIGUSR2,   SIGALRM,   SIGVTALRM, SIGXCPU, SIGXFSZ};

void hand_over(int sig) {
  const int saved = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  const auto byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &byte, 1);  // a full pipe: the cleanup has begun anyway
  errno = saved;
}

[[noreturn]] void clean_up_and_end() {
  unsigned char byte = 0;
  while (sys::retry("read", [&] { return ::read(g_pipe[0], &byte, 1); }) != 1) {
  }
  const int sig = byte;
  Registry& r = registry();
  r.mutex.lock();  // kept until the process ends
  for (auto it = r.hooks.rbegin(); it != r.hooks.rend(); ++it) {
    try {
      it->second(sig);
    } catch (...) {
      // A hook that fails must not keep the scratch directories.
    }
  }
  remove_all_scratch_dirs();
  // End by the same signal, with its default action, from this thread.
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

}  // namespace

void remove_scratch_dirs_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) throw Error("pipe2", "for signal cleanup", errno);
    ::fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
    // A small stack of its own (the default is the 8 MiB of `ulimit -s`, which
    // `ulimit -v` may not leave room for), and a failure that names what failed
    // (std::thread's says only "Resource temporarily unavailable").
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setstacksize(&attr, std::size_t{1} << 20);
    ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread{};
    const int rc = ::pthread_create(
        &thread, &attr, [](void*) -> void* { clean_up_and_end(); }, nullptr);
    ::pthread_attr_destroy(&attr);
    if (rc != 0)
      throw Error("start the thread that removes scratch files on a signal", "",
                  std::string(std::strerror(rc)) + (rc == EAGAIN ? " (ulimit -v or -u too low?)" : ""), rc);
    for (int sig : kHandledSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup, background jobs
      struct sigaction sa {};
      sa.sa_handler = hand_over;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

InterruptHook::InterruptHook(std::function<void(int)> hook) {
  std::lock_guard lock(registry().mutex);
  id_ = registry().next_hook++;
  registry().hooks.emplace_back(id_, std::move(hook));
}

InterruptHook::~InterruptHook() {
  std::lock_guard lock(registry().mutex);
  auto& hooks = registry().hooks;
  hooks.erase(std::remove_if(hooks.begin(), hooks.end(), [&](const auto& h) { return h.first == id_; }), hooks.end());
}

int interrupting_signal() noexcept { return g_signal.load(); }

void wait_for_signal_cleanup() {
  for (;;) ::pause();
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

void preallocate(const std::filesystem::path& file, std::uint64_t size) {
  sys::Fd fd = sys::open_existing(file, Access::ReadWrite);
  if (size == 0) return;
  int err = 0;
  if (sys::retry("fallocate", [&] { return ::fallocate(fd.get(), 0, 0, static_cast<off_t>(size)); }) != 0) {
    err = errno;
    if (err == EOPNOTSUPP) err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(size));
  }
  if (err != 0)
    throw Error("fallocate", file.string(),
                std::string(std::strerror(err)) + " (preallocating " + format_bytes(static_cast<double>(size)) + ")", err);
  fd.close(file);
}

std::optional<std::uint64_t> free_space(const std::filesystem::path& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0 || fs.f_blocks == 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

}  // namespace iolab::io
