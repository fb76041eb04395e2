// Internal: what every copy method does before and after moving bytes.
#pragma once

#include <filesystem>

#include "iolab/io/copy.h"
#include "posix.h"

namespace iolab::io::copy_detail {

struct Endpoints {
  posix::Fd from;
  posix::Fd to;
  std::uint64_t size = 0;  // bytes to copy
};

// Opens `from` for reading and the existing `to` for writing, truncating `to`.
Endpoints open_endpoints(const std::filesystem::path& from, const std::filesystem::path& to);

// Closes `to` reporting errors, then checks it holds `size` bytes.
void finish(Endpoints& e, const std::filesystem::path& to);

}  // namespace iolab::io::copy_detail
