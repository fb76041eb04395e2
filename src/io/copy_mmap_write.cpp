// mmap the source, write(2) from the mapping: one copy (page cache -> page
// cache) instead of two, paid for with page faults on the source.
#include <sys/mman.h>

#include "copy_common.h"

namespace iolab::io {
namespace {

constexpr CopyMethodFacts kMmapWriteFacts{"mmap_write", "mmap the source, write(2) straight from the mapping in chunks",
                                          {false, 0}};

CopyStats copy_by_mmap_write(CopyEnds& e, const CopyOptions& o) {
  if (e.size() == 0) return {};  // mmap of length 0 is EINVAL
  IoCounters c;
  std::byte* base = sys::map(e.from_fd(), 0, e.size(), PROT_READ, e.from(), c);
  std::size_t chunk = o.buffer_size == 0 ? (1 << 20) : o.buffer_size;
  try {
    if (::madvise(base, e.size(), MADV_SEQUENTIAL) != 0) sys::fail("madvise", e.from());
    for (std::uint64_t off = 0; off < e.size(); off += chunk) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, e.size() - off));
      sys::write_full(e.to_fd(), std::span(base + off, n), e.to(), c);
    }
  } catch (...) {
    ::munmap(base, e.size());
    throw;
  }
  sys::unmap(base, e.size(), e.from());
  return {c.bytes_written, c.calls};
}

}  // namespace

const CopyMethod& mmap_write_copy() { return the_method<TransferCopy<copy_by_mmap_write>>(kMmapWriteFacts); }

}  // namespace iolab::io
