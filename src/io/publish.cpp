#include "iolab/io/publish.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
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
      // Named by the file asked for, not by iolab's temporary (EMFILE, EROFS, EACCES...).
      if (e.error_number() != EEXIST) throw Error("write", path.string(), e.error_number());
    }
  }
}

void write_synced(sys::Fd& fd, const std::filesystem::path& tmp, std::string_view content) {
  IoCounters counters;
  sys::write_full(fd.get(), std::as_bytes(std::span(content.data(), content.size())), tmp, counters);
  sys::sync_fd(fd.get(), Durability::Fsync, tmp, counters);
  fd.close(tmp);
}

int rename2(const std::filesystem::path& from, const std::filesystem::path& to, unsigned flags) {
  return sys::retry("renameat2", [&] { return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags); });
}

// Moves tmp to the free name `path`; false (errno EEXIST) when it is taken.
bool move_to_free_name(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  if (rename2(tmp, path, RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS) sys::fail("write", path);
  // A filesystem without RENAME_NOREPLACE: link(2) refuses an existing name too.
  if (sys::retry("link", [&] { return ::link(tmp.c_str(), path.c_str()); }) != 0) {
    if (errno == EEXIST) return false;
    sys::fail("write", path);
  }
  ::unlink(tmp.c_str());
  return true;
}

// Whether `tmp` is still the file iolab wrote (`ours`): after an exchange it
// holds what was at the path, which is never removed.
bool still_ours(const std::filesystem::path& tmp, const struct stat& ours) {
  struct stat now {};
  return ::lstat(tmp.c_str(), &now) == 0 && now.st_ino == ours.st_ino && now.st_dev == ours.st_dev;
}

[[noreturn]] void taken(const std::filesystem::path& path) {
  throw Error("write", path.string(), "a file iolab may not replace is there (kept as it was)", EEXIST);
}

// Replaces what is at `path` by tmp only when `replaceable` accepts it, as
// judged at this moment: where the filesystem can (RENAME_EXCHANGE) the two
// are swapped atomically, the file swapped out is judged under tmp's name,
// and swapped back when it may not be replaced; elsewhere it is judged in
// place just before the rename.
void replace_if(const std::filesystem::path& tmp, const std::filesystem::path& path, const Replaceable& replaceable) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (move_to_free_name(tmp, path)) return;
    struct stat there {};
    if (::lstat(path.c_str(), &there) == 0 && S_ISDIR(there.st_mode)) sys::fail("write", path, EISDIR);
    struct stat ours {};
    if (::lstat(tmp.c_str(), &ours) != 0) sys::fail("write", tmp);
    if (rename2(tmp, path, RENAME_EXCHANGE) != 0) {
      if (errno == ENOENT) continue;  // gone again since: the name is free
      if (errno != EINVAL && errno != ENOSYS) sys::fail("write", path);
      if (!replaceable(path)) taken(path);
      sys::rename(tmp, path);
      return;
    }
    // What was there is now at tmp's name: a judge that cannot decide keeps it.
    bool replace = false;
    try {
      replace = replaceable(tmp);
    } catch (...) {
    }
    if (replace) {
      ::unlink(tmp.c_str());
      return;
    }
    // Not ours to replace: theirs goes back, ours is dropped (if it is still ours).
    if (rename2(tmp, path, RENAME_EXCHANGE) != 0)
      throw Error("write", path.string(),
                  "the file that was there could not be put back; it is kept at " + tmp.string(), errno);
    if (still_ours(tmp, ours)) ::unlink(tmp.c_str());
    taken(path);
  }
  sys::fail("write", path);
}

}  // namespace

namespace {

void publish(const std::filesystem::path& path, std::string_view content,
             const std::function<void(const std::filesystem::path& tmp)>& move_into_place) {
  if (path.filename().empty()) throw Error("write", path.string(), "not a file name", EISDIR);
  make_directory(directory_of(path));
  auto created = create_temporary(path);
  sys::Fd& fd = created.first;
  const std::filesystem::path tmp = created.second;  // a variable, not a binding: the lambda below captures it
  struct stat ours {};
  if (::fstat(fd.get(), &ours) != 0) {
    ::unlink(tmp.c_str());
    sys::fail("write", tmp);
  }
  // On failure the temporary goes, but only while it is ours (replace_if may have swapped a user's file into it).
  auto drop = [&] {
    if (still_ours(tmp, ours)) ::unlink(tmp.c_str());
  };
  try {
    write_synced(fd, tmp, content);
    move_into_place(tmp);
  } catch (const Error& e) {
    drop();
    // Named by the file the user asked for, not the temporary one.
    if (e.error_number() != 0 && e.subject() != path.string()) throw Error("write", path.string(), e.error_number());
    throw;
  } catch (...) {
    drop();
    throw;
  }
  sys::sync_dir(directory_of(path));
}

}  // namespace

void publish_file(const std::filesystem::path& path, std::string_view content, IfExists if_exists) {
  publish(path, content, [&](const std::filesystem::path& tmp) {
    if (if_exists == IfExists::Replace) sys::rename(tmp, path);
    else if (!move_to_free_name(tmp, path)) sys::fail("write", path);
  });
}

void publish_file(const std::filesystem::path& path, std::string_view content, const Replaceable& replaceable) {
  publish(path, content, [&](const std::filesystem::path& tmp) { replace_if(tmp, path, replaceable); });
}

void check_publishable(const std::filesystem::path& dir) {
  make_directory(dir);
  std::filesystem::path tmp;
  try {
    auto created = create_temporary(dir / "iolab-probe");
    tmp = created.second;
    write_synced(created.first, tmp, std::string(4096, '\0'));
  } catch (const Error& e) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    // Named by the directory asked for, not by the probe file.
    if (e.error_number() != 0) throw Error("write in", dir.string(), e.error_number());
    throw;
  }
  sys::unlink(tmp);
}

}  // namespace iolab::io
