#include "copy_common.h"

#include <unistd.h>

namespace iolab::io::copy_detail {

Endpoints open_endpoints(const std::filesystem::path& from, const std::filesystem::path& to) {
  Endpoints e;
  e.from = posix::open_existing(from, Access::Read);
  e.to = posix::open_existing(to, Access::ReadWrite);
  e.size = posix::file_size(e.from.get(), from);
  if (::ftruncate(e.to.get(), 0) != 0) posix::fail("ftruncate", to);
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
