// The plain copy loop: read(2) into a user buffer, write(2) it out. Two
// copies per byte (kernel -> user -> kernel): the baseline zero-copy beats.
#include "copy_common.h"
#include "iolab/io/buffer.h"

namespace iolab::io {
namespace {

constexpr CopyMethodFacts kReadwriteFacts{
    "readwrite", "read(2)/write(2) loop through a user buffer (settable size); the stream-copy baseline",
    {true, 0}};

CopyStats copy_by_readwrite(CopyEnds& e, const CopyOptions&) {
  Buffer& buf = e.buffer();  // allocated with the ends, before the copy is timed
  IoCounters c;
  for (;;) {
    std::size_t n = sys::read_full(e.from_fd(), buf.span(), e.from(), c);
    if (n == 0) break;
    sys::write_full(e.to_fd(), buf.span().first(n), e.to(), c);
    if (n < buf.size()) break;
  }
  return {c.bytes_written, c.calls};
}

}  // namespace

const CopyMethod& readwrite_copy() { return the_method<TransferCopy<copy_by_readwrite>>(kReadwriteFacts); }

}  // namespace iolab::io
