// preadv(2)/pwritev(2): each request is cut into iov_segment-sized buffers
// and moved with as few calls as IOV_MAX allows (the gathering write of
// FileChannel.write(ByteBuffer[])).
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "descriptor_file.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kVectoredFacts{
    "vectored", "preadv(2)/pwritev(2), each request split into several buffers per call", {}};

class VectoredFile final : public DescriptorFile {
 public:
  VectoredFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : DescriptorFile(p, sys::open_existing(p, a), kVectoredFacts.name),
        segment_(o.iov_segment == 0 ? 4096 : o.iov_segment) {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    std::size_t done = 0;
    while (done < dst.size()) {
      int n_iov = build(dst.data() + done, dst.size() - done);
      ssize_t n = sys::retry("preadv",
          [&] { return ::preadv(fd_.get(), iov_.data(), n_iov, static_cast<off_t>(offset + done)); });
      ++counters_.calls;
      if (n < 0) sys::fail("preadv", path());
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    counters_.bytes_read += done;
    return done;
  }

  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    std::size_t done = 0;
    while (done < src.size()) {
      int n_iov = build(const_cast<std::byte*>(src.data()) + done, src.size() - done);
      ssize_t n = sys::retry("pwritev",
          [&] { return ::pwritev(fd_.get(), iov_.data(), n_iov, static_cast<off_t>(offset + done)); });
      ++counters_.calls;
      if (n < 0) sys::fail("pwritev", path());
      if (n == 0) sys::fail("pwritev", path(), ENOSPC);
      done += static_cast<std::size_t>(n);
    }
    counters_.bytes_written += done;
  }


 private:
  // Fills iov_ with segments covering [p, p+len), at most IOV_MAX of them.
  int build(std::byte* p, std::size_t len) {
    iov_.clear();
    while (len > 0 && iov_.size() < IOV_MAX) {
      std::size_t n = std::min(len, segment_);
      iov_.push_back({p, n});
      p += n;
      len -= n;
    }
    return static_cast<int>(iov_.size());
  }

  std::size_t segment_;
  std::vector<iovec> iov_;
};

}  // namespace

const Method& vectored_method() { return the_method<FileMethod<VectoredFile>>(kVectoredFacts); }

}  // namespace iolab::io
