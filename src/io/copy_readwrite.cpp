// The plain copy loop: read(2) into a user buffer, write(2) it out. Two
// copies per byte (kernel -> user -> kernel): the baseline zero-copy beats.
#include "copy_common.h"
#include "iolab/io/buffer.h"
#include "methods.h"

namespace iolab::io {
namespace {

class ReadWriteCopy final : public CopyMethod {
 public:
  std::string_view name() const override { return "readwrite"; }
  std::string_view description() const override {
    return "read(2)/write(2) loop through a user buffer (settable size); the stream-copy baseline";
  }
  CopyTraits traits() const override { return {true, 0}; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& e, const CopyOptions& o) const override {
    const auto& from = e.from();
    const auto& to = e.to();
    Buffer& buf = e.buffer();  // allocated with the ends, before the copy is timed
    IoCounters c;
    for (;;) {
      std::size_t n = sys::read_full(e.from_fd(), buf.span(), from, c);
      if (n == 0) break;
      sys::write_full(e.to_fd(), buf.span().first(n), to, c);
      if (n < buf.size()) break;
    }
    CopyStats s{c.bytes_written, c.calls};
    e.finish(o.flush, s);
    return s;
  }
};

}  // namespace

const CopyMethod& readwrite_copy() {
  static const ReadWriteCopy m;
  return m;
}

}  // namespace iolab::io
