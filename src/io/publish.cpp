#include "iolab/io/publish.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <unistd.h>

#include <atomic>
#include <climits>
#include <span>
#include <string>

#include "iolab/base/error.h"
#include "iolab/io/syscall.h"

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

// A new file beside `path`, named after it: ".<name>.<pid>-<n>.tmp" (O_EXCL:
// ours alone; in the same directory, as a rename is atomic only within one
// filesystem).
std::pair<sys::Fd, std::filesystem::path> create_temporary(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  for (;;) {
    std::string suffix = "." + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
    // A legal final name near NAME_MAX must not make an illegal temporary one.
    std::string name = "." + path.filename().string().substr(0, NAME_MAX - 1 - suffix.size()) + suffix;
    const std::filesystem::path tmp = directory_of(path) / name;
    try {
      return {sys::open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644), tmp};
    } catch (const Error& e) {
      if (e.error_number() != EEXIST) throw;
    }
  }
}

void write_synced(sys::Fd& fd, const std::filesystem::path& tmp, std::string_view content) {
  IoCounters counters;
  sys::write_full(fd.get(), std::as_bytes(std::span(content.data(), content.size())), tmp, counters);
  sys::sync_fd(fd.get(), Durability::Fsync, tmp, counters);
  fd.close(tmp);
}

void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path, IfExists if_exists) {
  if (if_exists == IfExists::Replace) {
    sys::rename(tmp, path);
    return;
  }
  if (sys::retry("renameat2", [&] {
        return ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
      }) == 0)
    return;
  if (errno != EINVAL && errno != ENOSYS) sys::fail("write", path);
  // A filesystem without RENAME_NOREPLACE: link(2) refuses an existing name too.
  if (sys::retry("link", [&] { return ::link(tmp.c_str(), path.c_str()); }) != 0) sys::fail("write", path);
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
  } catch (const Error& e) {
    ::unlink(tmp.c_str());
    // Named by the file the user asked for, not the temporary one.
    if (e.error_number() != 0) throw Error("write", path.string(), e.error_number());
    throw;
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  sys::sync_dir(directory_of(path));
}

void check_publishable(const std::filesystem::path& dir) {
  make_directory(dir);
  auto [fd, tmp] = create_temporary(dir / "iolab-probe");
  try {
    write_synced(fd, tmp, std::string(4096, '\0'));
  } catch (const Error& e) {
    ::unlink(tmp.c_str());
    if (e.error_number() != 0) throw Error("write in", dir.string(), e.error_number());
    throw;
  }
  sys::unlink(tmp);
}

}  // namespace iolab::io
