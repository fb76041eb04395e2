// splice(2) through a pipe: file -> pipe -> file, pages moved by reference
// where the kernel can. The pipe is grown to the chunk size (up to
// /proc/sys/fs/pipe-max-size).
#include <fcntl.h>
#include <unistd.h>

#include "copy_common.h"

namespace iolab::io {
namespace {

constexpr CopyMethodFacts kSpliceFacts{"splice", "splice(2) file -> pipe -> file, no user-space copy", {false, 0}};

CopyStats copy_by_splice(CopyEnds& e, const CopyOptions& o) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) sys::fail("pipe2", e.to());
  sys::Fd rd(fds[0]), wr(fds[1]);
  int cap = ::fcntl(wr.get(), F_SETPIPE_SZ, static_cast<int>(std::min<std::size_t>(o.buffer_size, 1 << 20)));
  std::size_t chunk = cap > 0 ? static_cast<std::size_t>(cap) : 65536;
  loff_t in_off = 0, out_off = 0;
  return copy_in_steps(e, chunk, [&](std::size_t want, CopyStats& s) {
    std::size_t in = counted_move(s, "splice", "splice (file to pipe)", e.from(), [&] {
      return ::splice(e.from_fd(), &in_off, wr.get(), nullptr, want, SPLICE_F_MOVE);
    });
    for (std::size_t left = in; left > 0;) {
      std::size_t out = counted_move(s, "splice", "splice (pipe to file)", e.to(), [&] {
        return ::splice(rd.get(), nullptr, e.to_fd(), &out_off, left, SPLICE_F_MOVE);
      });
      if (out == 0) sys::fail("splice (pipe to file)", e.to(), ENOSPC);
      left -= out;
    }
    return in;
  });
}

}  // namespace

const CopyMethod& splice_copy() { return the_method<TransferCopy<copy_by_splice>>(kSpliceFacts); }

}  // namespace iolab::io
