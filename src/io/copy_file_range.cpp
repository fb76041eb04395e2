// copy_file_range(2): the filesystem copies inside the kernel, and may share
// extents instead (reflink on btrfs/xfs; ext4 copies).
#include <unistd.h>

#include <algorithm>

#include "copy_common.h"
#include "methods.h"

namespace iolab::io {
namespace {

class CopyFileRangeCopy final : public CopyMethod {
 public:
  std::string_view name() const override { return "copy_file_range"; }
  std::string_view description() const override {
    return "copy_file_range(2): in-kernel copy, extent sharing where the filesystem can";
  }
  CopyTraits traits() const override { return {false, std::uint64_t{1} << 30}; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& e, const CopyOptions& o) const override {
    const auto& to = e.to();
    CopyStats s;
    while (s.bytes < e.size()) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(e.size() - s.bytes, 1ULL << 30));
      ssize_t n = sys::retry("copy_file_range",
          [&] { return ::copy_file_range(e.from_fd(), nullptr, e.to_fd(), nullptr, want, 0); });
      ++s.calls;
      if (n < 0) sys::fail("copy_file_range", to);
      if (n == 0) break;
      s.bytes += static_cast<std::uint64_t>(n);
    }
    e.finish(o.flush, s);
    return s;
  }
};

}  // namespace

const CopyMethod& copy_file_range_copy() {
  static const CopyFileRangeCopy m;
  return m;
}

}  // namespace iolab::io
