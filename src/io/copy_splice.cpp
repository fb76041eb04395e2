// splice(2) through a pipe: file -> pipe -> file, pages moved by reference
// where the kernel can. The pipe is grown to the chunk size (up to
// /proc/sys/fs/pipe-max-size).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "copy_common.h"
#include "methods.h"

namespace iolab::io {
namespace {

class SpliceCopy final : public CopyMethod {
 public:
  std::string_view name() const override { return "splice"; }
  std::string_view description() const override {
    return "splice(2) file -> pipe -> file, no user-space copy";
  }
  CopyTraits traits() const override { return {false, 0}; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& e, const CopyOptions& o) const override {
    const auto& from = e.from();
    const auto& to = e.to();
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) sys::fail("pipe2", to);
    sys::Fd rd(fds[0]), wr(fds[1]);
    int cap = ::fcntl(wr.get(), F_SETPIPE_SZ, static_cast<int>(std::min<std::size_t>(o.buffer_size, 1 << 20)));
    std::size_t chunk = cap > 0 ? static_cast<std::size_t>(cap) : 65536;
    CopyStats s;
    loff_t in_off = 0, out_off = 0;
    while (static_cast<std::uint64_t>(in_off) < e.size()) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(e.size() - in_off, chunk));
      ssize_t in = sys::retry("splice",
          [&] { return ::splice(e.from_fd(), &in_off, wr.get(), nullptr, want, SPLICE_F_MOVE); });
      ++s.calls;
      if (in < 0) sys::fail("splice (file to pipe)", from);
      if (in == 0) break;
      for (ssize_t left = in; left > 0;) {
        ssize_t out = sys::retry("splice", [&] {
          return ::splice(rd.get(), nullptr, e.to_fd(), &out_off, static_cast<std::size_t>(left), SPLICE_F_MOVE);
        });
        ++s.calls;
        if (out < 0) sys::fail("splice (pipe to file)", to);
        if (out == 0) sys::fail("splice (pipe to file)", to, ENOSPC);
        left -= out;
      }
    }
    s.bytes = static_cast<std::uint64_t>(out_off);
    e.finish(o.flush, s);
    return s;
  }
};

}  // namespace

const CopyMethod& splice_copy() {
  static const SpliceCopy m;
  return m;
}

}  // namespace iolab::io
