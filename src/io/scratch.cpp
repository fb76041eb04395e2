#include "iolab/io/scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <string>

#include "iolab/error.h"
#include "iolab/units.h"
#include "posix.h"

namespace iolab::io {
namespace {

// Live scratch directories, so a signal handler can remove them. A fixed
// array, because a handler may not allocate or lock.
constexpr int kMaxLive = 64;
ScratchDir* g_live[kMaxLive] = {};
std::mutex g_live_mutex;

void track(ScratchDir* d) {
  std::lock_guard lock(g_live_mutex);
  for (auto& slot : g_live)
    if (slot == nullptr) { slot = d; return; }
}

void untrack(ScratchDir* d) {
  std::lock_guard lock(g_live_mutex);
  for (auto& slot : g_live)
    if (slot == d) slot = nullptr;
}

}  // namespace

ScratchDir::ScratchDir(const std::filesystem::path& parent) {
  std::filesystem::path base = parent;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = (tmp && *tmp) ? tmp : "/tmp";
  }
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0) posix::fail("use scratch directory", base);
  if (!S_ISDIR(st.st_mode)) throw Error("use scratch directory", base.string(), "not a directory", ENOTDIR);
  std::string tmpl = (base / "iolab-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) posix::fail("create scratch directory in", base);
  path_ = tmpl;
  track(this);
}

ScratchDir::~ScratchDir() {
  remove_all();
  untrack(this);
}

std::filesystem::path ScratchDir::create_file(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
    throw UsageError("scratch file name '" + std::string(name) + "'", "must be a plain file name");
  std::filesystem::path p = path_ / std::string(name);
  int fd = posix::retry_eintr(
      [&] { return ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); });
  if (fd < 0) posix::fail("create", p);
  created_.push_back(p);  // tracked before close, so a failed close still cleans up
  posix::Fd(fd).close(p);
  return p;
}

std::filesystem::path ScratchDir::create_unique_file(std::string_view stem) {
  return create_file(std::string(stem) + "-" + std::to_string(next_unique_++));
}

void ScratchDir::remove_file(const std::filesystem::path& file) {
  auto it = std::find(created_.begin(), created_.end(), file);
  if (it == created_.end()) throw Error("remove", file.string(), "not a file iolab created", EPERM);
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) posix::fail("remove", file);
  created_.erase(it);
}

void ScratchDir::remove_all() noexcept {
  if (path_.empty()) return;
  for (const auto& f : created_) ::unlink(f.c_str());
  created_.clear();
  ::rmdir(path_.c_str());  // fails harmlessly if something else put a file here
  path_.clear();
}

void remove_all_scratch_dirs() noexcept {
  // Called from a signal handler: no locking, only unlink/rmdir on known paths.
  for (auto* d : g_live)
    if (d != nullptr) {
      // c_str() of already-built paths: no allocation.
      for (const auto& f : d->created()) ::unlink(f.c_str());
      ::rmdir(d->path().c_str());
    }
}

namespace {
void remove_and_reraise(int sig) {
  remove_all_scratch_dirs();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

void remove_scratch_dirs_on_signals() {
  std::signal(SIGINT, remove_and_reraise);
  std::signal(SIGTERM, remove_and_reraise);
}

void preallocate(const std::filesystem::path& file, std::uint64_t size) {
  posix::Fd fd = posix::open_existing(file, Access::ReadWrite);
  if (size == 0) return;
  int err = 0;
  if (posix::retry_eintr([&] { return ::fallocate(fd.get(), 0, 0, static_cast<off_t>(size)); }) != 0) {
    err = errno;
    if (err == EOPNOTSUPP) err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(size));
  }
  if (err != 0)
    throw Error("fallocate", file.string(),
                std::string(std::strerror(err)) + " (preallocating " + format_bytes(static_cast<double>(size)) + ")", err);
  fd.close(file);
}

}  // namespace iolab::io
