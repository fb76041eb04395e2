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
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(const std::filesystem::path& from, const std::filesystem::path& to,
                 const CopyOptions& o) const override {
    auto e = copy_detail::open_endpoints(from, to);
    Buffer buf(o.buffer_size == 0 ? 4096 : o.buffer_size, o.buffer);
    IoCounters c;
    for (;;) {
      std::size_t n = posix::read_full(e.from.get(), buf.span(), from, c);
      if (n == 0) break;
      posix::write_full(e.to.get(), buf.span().first(n), to, c);
      if (n < buf.size()) break;
    }
    copy_detail::finish(e, to);
    return {c.bytes_written, c.calls};
  }
};

}  // namespace

const CopyMethod& readwrite_copy() {
  static const ReadWriteCopy m;
  return m;
}

}  // namespace iolab::io
