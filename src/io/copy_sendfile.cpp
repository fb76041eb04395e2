// sendfile(2) file to file: the kernel moves page-cache pages to the
// destination with no user-space copy (Java's transferTo on Linux).
#include <sys/sendfile.h>

#include <algorithm>

#include "copy_common.h"
#include "methods.h"

namespace iolab::io {
namespace {

class SendfileCopy final : public CopyMethod {
 public:
  std::string_view name() const override { return "sendfile"; }
  std::string_view description() const override {
    return "sendfile(2) between two files: no user-space copy; what FileChannel.transferTo uses";
  }
  CopyTraits traits() const override { return {false, 0x7ffff000}; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& e, const CopyOptions& o) const override {
    const auto& to = e.to();
    CopyStats s;
    off_t off = 0;
    while (static_cast<std::uint64_t>(off) < e.size()) {
      // Linux moves at most 0x7ffff000 bytes per call.
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(e.size() - off, 0x7ffff000));
      ssize_t n = sys::retry("sendfile", [&] { return ::sendfile(e.to_fd(), e.from_fd(), &off, want); });
      ++s.calls;
      if (n < 0) sys::fail("sendfile", to);
      if (n == 0) break;  // source shrank: finish() reports the mismatch
    }
    s.bytes = static_cast<std::uint64_t>(off);
    e.finish(o.flush, s);
    return s;
  }
};

}  // namespace

const CopyMethod& sendfile_copy() {
  static const SendfileCopy m;
  return m;
}

}  // namespace iolab::io
