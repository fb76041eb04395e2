// mmap the source, write(2) from the mapping: one copy (page cache -> page
// cache) instead of two, paid for with page faults on the source.
#include <sys/mman.h>

#include <algorithm>

#include "copy_common.h"
#include "methods.h"

namespace iolab::io {
namespace {

class MmapWriteCopy final : public CopyMethod {
 public:
  std::string_view name() const override { return "mmap_write"; }
  std::string_view description() const override {
    return "mmap the source, write(2) straight from the mapping in chunks";
  }
  CopyTraits traits() const override { return {false, 0}; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& e, const CopyOptions& o) const override {
    const auto& from = e.from();
    const auto& to = e.to();
    IoCounters c;
    if (e.size() > 0) {  // mmap of length 0 is EINVAL
      void* p = ::mmap(nullptr, e.size(), PROT_READ, MAP_SHARED, e.from_fd(), 0);
      ++c.calls;
      if (p == MAP_FAILED) sys::fail("mmap", from);
      auto* base = static_cast<const std::byte*>(p);
      std::size_t chunk = o.buffer_size == 0 ? (1 << 20) : o.buffer_size;
      try {
        if (::madvise(p, e.size(), MADV_SEQUENTIAL) != 0) sys::fail("madvise", from);
        for (std::uint64_t off = 0; off < e.size(); off += chunk) {
          std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, e.size() - off));
          sys::write_full(e.to_fd(), std::span(base + off, n), to, c);
        }
      } catch (...) {
        ::munmap(p, e.size());
        throw;
      }
      if (::munmap(p, e.size()) != 0) sys::fail("munmap", from);
    }
    CopyStats s{c.bytes_written, c.calls};
    e.finish(o.flush, s);
    return s;
  }
};

}  // namespace

const CopyMethod& mmap_write_copy() {
  static const MmapWriteCopy m;
  return m;
}

}  // namespace iolab::io
