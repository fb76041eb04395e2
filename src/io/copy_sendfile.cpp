// sendfile(2) file to file: the kernel moves page-cache pages to the
// destination with no user-space copy (Java's transferTo on Linux).
#include <sys/sendfile.h>

#include "copy_common.h"

namespace iolab::io {
namespace {

// Linux moves at most 0x7ffff000 bytes per call.
constexpr std::uint64_t kSendfileMostPerCall = 0x7ffff000;

constexpr CopyMethodFacts kSendfileFacts{
    "sendfile", "sendfile(2) between two files: no user-space copy; what FileChannel.transferTo uses",
    {false, kSendfileMostPerCall}};

CopyStats copy_by_sendfile(CopyEnds& e, const CopyOptions&) {
  off_t off = 0;
  return copy_by_calls(e, kSendfileMostPerCall, "sendfile",
                       [&](std::size_t want) { return ::sendfile(e.to_fd(), e.from_fd(), &off, want); });
}

}  // namespace

const CopyMethod& sendfile_copy() { return the_method<TransferCopy<copy_by_sendfile>>(kSendfileFacts); }

}  // namespace iolab::io
