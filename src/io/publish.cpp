#include "iolab/io/publish.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <atomic>
#include <span>
#include <string>

#include "iolab/error.h"
#include "posix.h"

namespace iolab::io {
namespace {

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

void make_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("create directory", dir.string(), ec.value());
  if (!std::filesystem::is_directory(dir, ec)) throw Error("use directory", dir.string(), ENOTDIR);
}

// A new file beside `path`, named after it: ".<name>.<pid>-<n>.tmp".
std::pair<posix::Fd, std::filesystem::path> create_temporary(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  for (;;) {
    std::string name = ".";
    name.append(path.filename().string()).append(".").append(std::to_string(::getpid()));
    name.append("-").append(std::to_string(counter++)).append(".tmp");
    const std::filesystem::path tmp = directory_of(path) / name;
    int fd = posix::retry_eintr(
        [&] { return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644); });
    if (fd >= 0) return {posix::Fd(fd), tmp};
    if (errno != EEXIST) posix::fail("create", tmp);
  }
}

void write_synced(posix::Fd& fd, const std::filesystem::path& tmp, std::string_view content) {
  IoCounters counters;
  posix::write_full(fd.get(), std::as_bytes(std::span(content.data(), content.size())), tmp, counters);
  posix::sync_fd(fd.get(), Durability::Fsync, tmp, counters);
  fd.close(tmp);
}

// The rename itself: durable only once the directory is synced.
void sync_directory(const std::filesystem::path& dir) {
  int fd = posix::retry_eintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) posix::fail("open directory", dir);
  posix::Fd owned(fd);
  if (posix::retry_eintr([&] { return ::fsync(fd); }) != 0 && errno != EINVAL) posix::fail("fsync directory", dir);
  owned.close(dir);
}

void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path, IfExists if_exists) {
  if (if_exists == IfExists::Replace) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) posix::fail("write", path);
    return;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno != EINVAL && errno != ENOSYS) posix::fail("write", path);
  // A filesystem without RENAME_NOREPLACE: link(2) refuses an existing name too.
  if (::link(tmp.c_str(), path.c_str()) != 0) posix::fail("write", path);
  ::unlink(tmp.c_str());
}

}  // namespace

void publish_file(const std::filesystem::path& path, std::string_view content, IfExists if_exists) {
  if (path.filename().empty()) throw Error("write", path.string(), "not a file name", EISDIR);
  make_directory(directory_of(path));
  auto [fd, tmp] = create_temporary(path);
  try {
    write_synced(fd, tmp, content);
    move_into_place(tmp, path, if_exists);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  sync_directory(directory_of(path));
}

void check_publishable(const std::filesystem::path& dir) {
  make_directory(dir);
  auto [fd, tmp] = create_temporary(dir / "iolab-probe");
  try {
    write_synced(fd, tmp, std::string(4096, '\0'));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::unlink(tmp.c_str()) != 0) posix::fail("remove", tmp);
}

}  // namespace iolab::io
