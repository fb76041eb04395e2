#include <sys/stat.h>
#include <unistd.h>

#include "copy_common.h"

namespace iolab::io {

CopyEnds::CopyEnds(const CopyOptions& options)
    : buffer_(options.buffer_size == 0 ? 4096 : options.buffer_size, options.buffer) {}

CopyEnds::CopyEnds(const std::filesystem::path& from, const std::filesystem::path& to, const CopyOptions& options)
    : CopyEnds(options) {
  open(from, to);
}

void CopyEnds::open(const std::filesystem::path& from, const std::filesystem::path& to) {
  close();
  sys::Fd in = sys::open_existing(from, Access::Read);
  sys::Fd out = sys::open_existing(to, Access::ReadWrite);
  // Truncating `to` first would destroy the source when both name one file
  // (a hard link or another spelling of the path).
  struct stat a {}, b {};
  if (::fstat(in.get(), &a) != 0) sys::fail("fstat", from);
  if (::fstat(out.get(), &b) != 0) sys::fail("fstat", to);
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    throw Error("copy", from.string() + " to " + to.string(), "source and destination are the same file", EINVAL);
  if (sys::retry("ftruncate", [&] { return ::ftruncate(out.get(), 0); }) != 0) sys::fail("ftruncate", to);
  from_ = from;
  to_ = to;
  size_ = static_cast<std::uint64_t>(a.st_size);
  from_fd_ = in.release();
  to_fd_ = out.release();
}

void CopyEnds::close() noexcept {
  if (from_fd_ >= 0) ::close(from_fd_);
  if (to_fd_ >= 0) ::close(to_fd_);
  from_fd_ = to_fd_ = -1;
}

CopyEnds::~CopyEnds() { close(); }

void CopyEnds::finish(bool flush, CopyStats& stats) {
  sys::Fd out(to_fd_);
  to_fd_ = -1;
  if (flush) {
    ++stats.calls;
    if (sys::retry("fdatasync", [&] { return ::fdatasync(out.get()); }) != 0) sys::fail("fdatasync", to_);
  }
  std::uint64_t got = sys::file_size(out.get(), to_);
  out.close(to_);
  if (got != size_)
    throw Error("copy", to_.string(), "ended with " + std::to_string(got) + " bytes, expected " + std::to_string(size_), EIO);
}

CopyStats CopyMethod::copy(const std::filesystem::path& from, const std::filesystem::path& to,
                           const CopyOptions& options) const {
  CopyEnds ends(from, to, options);
  return copy(ends, options);
}

}  // namespace iolab::io
