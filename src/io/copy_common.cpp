#include "copy_common.h"

#include <sys/stat.h>
#include <unistd.h>

namespace iolab::io::copy_detail {

Endpoints open_endpoints(const std::filesystem::path& from, const std::filesystem::path& to) {
  Endpoints e;
  e.from = posix::open_existing(from, Access::Read);
  e.to = posix::open_existing(to, Access::ReadWrite);
  // Truncating `to` first would destroy the source when both name one file
  // (a hard link or another spelling of the path).
  struct stat a {}, b {};
  if (::fstat(e.from.get(), &a) != 0) posix::fail("fstat", from);
  if (::fstat(e.to.get(), &b) != 0) posix::fail("fstat", to);
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    throw Error("copy", from.string() + " to " + to.string(), "source and destination are the same file", EINVAL);
  e.size = static_cast<std::uint64_t>(a.st_size);
  if (posix::retry_eintr([&] { return ::ftruncate(e.to.get(), 0); }) != 0) posix::fail("ftruncate", to);
  return e;
}

void finish(Endpoints& e, const std::filesystem::path& to) {
  std::uint64_t got = posix::file_size(e.to.get(), to);
  e.to.close(to);
  if (got != e.size)
    throw Error("copy", to.string(),
                "ended with " + std::to_string(got) + " bytes, expected " + std::to_string(e.size), EIO);
}

}  // namespace iolab::io::copy_detail
