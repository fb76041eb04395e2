#include "alignment.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <sstream>
#include <string>

#include "iolab/base/error.h"
#include "iolab/base/proc.h"

namespace iolab::io::direct_io {
namespace {

bool power_of_two(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::size_t sysfs_logical_block_size(dev_t dev) {
  std::istringstream in(proc::block_queue_attribute(dev, "logical_block_size"));
  std::size_t v = 0;
  return in >> v && power_of_two(v) ? v : 0;
}

}  // namespace

Alignment discover(int fd, const std::filesystem::path& path) {
  Alignment a;
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
      power_of_two(sx.stx_dio_mem_align) && power_of_two(sx.stx_dio_offset_align)) {
    a.memory = sx.stx_dio_mem_align;
    a.offset = sx.stx_dio_offset_align;
    a.source = "statx";
    return a;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("fstat", path.string(), errno);
  if (std::size_t lbs = sysfs_logical_block_size(st.st_dev); lbs != 0) {
    a.memory = a.offset = lbs;
    a.source = "sysfs";
  }
  return a;
}

bool is_aligned(const Alignment& a, const void* buffer, std::uint64_t offset, std::size_t length) {
  return reinterpret_cast<std::uintptr_t>(buffer) % a.memory == 0 && offset % a.offset == 0 &&
         length % a.offset == 0;
}

void require_aligned(const Alignment& a, const void* buffer, std::uint64_t offset, std::size_t length,
                     const char* op, const std::filesystem::path& path) {
  auto fail = [&](const std::string& what, std::size_t need) {
    throw Error(op, path.string(),
                what + " is not a multiple of the " + std::to_string(need) + "-byte alignment O_DIRECT needs here (" +
                    a.source + "); use an aligned buffer or the bounce option",
                EINVAL);
  };
  if (reinterpret_cast<std::uintptr_t>(buffer) % a.memory != 0) fail("buffer address", a.memory);
  if (offset % a.offset != 0) fail("offset " + std::to_string(offset), a.offset);
  if (length % a.offset != 0) fail("length " + std::to_string(length), a.offset);
}

}  // namespace iolab::io::direct_io
