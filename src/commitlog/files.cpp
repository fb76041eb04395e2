#include "files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "iolab/base/error.h"
#include "iolab/io/buffer.h"

namespace iolab::commitlog::detail {

void MappedRegion::sync(std::uint64_t offset, std::uint64_t length) {
  if (!region_ || length == 0 || offset >= region_->size()) return;
  region_->sync(offset, std::min<std::uint64_t>(length, region_->size() - offset));
}

std::string MappedRegion::warm(std::size_t from) {
  if (!region_ || from >= region_->size()) return {};
  // RocketMQ's warmMappedFile writes a zero into every page; faulting the
  // pages in for writing does the same without storing anything.
  region_->prefault(from, region_->size() - from);
  // Locking and read-ahead act on memory, not on the file: no file call.
  if (::mlock(region_->data(), region_->size()) != 0) return std::string("mlock: ") + std::strerror(errno);
  ::madvise(region_->data(), region_->size(), MADV_WILLNEED);
  return {};
}

int LogFile::native_handle() {
  if (!posix_) return -1;
  if (fd_.get() < 0) fd_ = io::sys::open_existing(path(), io::Access::Read);
  return fd_.get();
}

void LogFile::drop_cache() {
  if (!posix_) return;
  sync_data();
  int fd = native_handle();
  ++fd_calls_.calls;
  int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (err != 0) io::sys::fail("posix_fadvise", path(), err);
}

double LogFile::resident_fraction() {
  if (!posix_) return 0;
  std::uint64_t bytes = size();
  if (bytes == 0) return 0;
  int fd = native_handle();
  std::byte* p = io::sys::map(fd, 0, bytes, PROT_READ, path(), fd_calls_);
  std::size_t pages = (bytes + io::kPageSize - 1) / io::kPageSize;
  std::vector<unsigned char> in_core(pages);
  int r = ::mincore(p, bytes, in_core.data());
  int err = errno;
  io::sys::unmap(p, bytes, path());
  if (r != 0) io::sys::fail("mincore", path(), err);
  std::size_t resident = 0;
  for (unsigned char c : in_core) resident += c & 1u;
  return static_cast<double>(resident) / static_cast<double>(pages);
}

bool LogFs::make_dir(const std::filesystem::path& dir) {
  try {
    env_.create_dir(dir);
    return true;
  } catch (const Error& e) {
    if (e.error_number() != EEXIST) throw;
  }
  if (!is_directory(dir)) throw Error("mkdir", dir.string(), "exists and is not a directory", EEXIST);
  return false;
}

bool LogFs::is_directory(const std::filesystem::path& path) {
  if (posix_) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }
  try {
    env_.list_dir(path);
    return true;
  } catch (const Error&) {
    return false;
  }
}

LogFs& posix_fs() {
  static LogFs fs(io::Env::posix());
  return fs;
}

}  // namespace iolab::commitlog::detail
