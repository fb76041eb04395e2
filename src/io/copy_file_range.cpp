// copy_file_range(2): the filesystem copies inside the kernel, and may share
// extents instead (reflink on btrfs/xfs; ext4 copies).
#include <unistd.h>

#include "copy_common.h"

namespace iolab::io {
namespace {

// Bytes asked of one call: large enough that the call count stays small.
constexpr std::uint64_t kCopyFileRangeStep = std::uint64_t{1} << 30;

constexpr CopyMethodFacts kCopyFileRangeFacts{
    "copy_file_range", "copy_file_range(2): in-kernel copy, extent sharing where the filesystem can",
    {false, kCopyFileRangeStep}};

CopyStats copy_by_copy_file_range(CopyEnds& e, const CopyOptions&) {
  return copy_by_calls(e, kCopyFileRangeStep, "copy_file_range", [&](std::size_t want) {
    return ::copy_file_range(e.from_fd(), nullptr, e.to_fd(), nullptr, want, 0);
  });
}

}  // namespace

const CopyMethod& copy_file_range_copy() {
  return the_method<TransferCopy<copy_by_copy_file_range>>(kCopyFileRangeFacts);
}

}  // namespace iolab::io
