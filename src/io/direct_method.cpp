// O_DIRECT: data moves between the device and the caller's buffer without the
// page cache. Buffer address, offset and length must be multiples of the
// file's alignment (discovered per file, see alignment.h).
//
// Unaligned requests: UnalignedPolicy::Reject (the default) fails with EINVAL
// naming what is misaligned, so a benchmark never measures a hidden copy.
// UnalignedPolicy::Bounce copies through an aligned buffer: reads fetch the
// covering aligned range; writes read-modify-write the edge blocks. Writes
// past the end pad the last block; close() truncates to the real length.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "alignment.h"
#include "iolab/io/buffer.h"
#include "descriptor_file.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kDirectFacts{
    "direct", "O_DIRECT pread/pwrite, bypassing the page cache; alignment discovered per file",
    {.bypasses_page_cache = true, .needs_alignment = true}};

class DirectFile final : public DescriptorFile {
 public:
  DirectFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : DescriptorFile(p, open_direct(p, a), kDirectFacts.name),
        align_(direct_io::discover(fd_.get(), p)),
        policy_(o.unaligned) {
    size_ = sys::file_size(fd_.get(), p);
  }

  // open_existing names the cause: not a regular file, or O_DIRECT refused.
  static sys::Fd open_direct(const std::filesystem::path& p, Access a) { return sys::open_existing(p, a, O_DIRECT); }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    if (offset >= size_ || dst.empty()) return 0;
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(dst.size(), size_ - offset));
    if (direct_io::is_aligned(align_, dst.data(), offset, dst.size())) {
      // The device may hand back padding past size_ (after bounced writes); report only real bytes.
      std::size_t n = sys::pread_full(fd_.get(), dst, offset, path(), counters_, align_.offset);
      return std::min(n, want);
    }
    if (policy_ == UnalignedPolicy::Reject)
      direct_io::require_aligned(align_, dst.data(), offset, dst.size(), "pread O_DIRECT", path());
    std::uint64_t lo = direct_io::round_down(offset, align_.offset);
    std::uint64_t hi = direct_io::round_up(offset + want, align_.offset);
    Buffer& b = bounce(hi - lo);
    std::size_t got = sys::pread_full(fd_.get(), b.span().first(hi - lo), lo, path(), counters_, align_.offset);
    std::size_t n = got > offset - lo ? std::min<std::size_t>(want, got - (offset - lo)) : 0;
    std::memcpy(dst.data(), b.data() + (offset - lo), n);
    return n;
  }

  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    if (src.empty()) return;
    if (direct_io::is_aligned(align_, src.data(), offset, src.size())) {
      sys::pwrite_full(fd_.get(), src, offset, path(), counters_);
    } else {
      if (policy_ == UnalignedPolicy::Reject)
        direct_io::require_aligned(align_, src.data(), offset, src.size(), "pwrite O_DIRECT", path());
      std::uint64_t lo = direct_io::round_down(offset, align_.offset);
      std::uint64_t hi = direct_io::round_up(offset + src.size(), align_.offset);
      Buffer& b = bounce(hi - lo);
      auto region = b.span().first(hi - lo);
      // Read-modify-write: keep the bytes around the request in the edge blocks.
      std::memset(region.data(), 0, region.size());
      if (lo < size_) sys::pread_full(fd_.get(), region.first(align_.offset), lo, path(), counters_, align_.offset);
      if (hi - align_.offset > lo && hi - align_.offset < size_)
        sys::pread_full(fd_.get(), region.last(align_.offset), hi - align_.offset, path(), counters_,
                          align_.offset);
      std::memcpy(region.data() + (offset - lo), src.data(), src.size());
      sys::pwrite_full(fd_.get(), region, lo, path(), counters_);
      padded_ = true;
    }
    size_ = std::max<std::uint64_t>(size_, offset + src.size());
  }

  std::uint64_t size() override { return size_; }
  std::size_t alignment() const override { return align_.strictest(); }

  void close() override {
    if (fd_.get() < 0) return;
    if (padded_ && sys::file_size(fd_.get(), path()) > size_) {
      sys::truncate(fd_.get(), size_, path(), counters_);
    }
    fd_.close(path());
  }
  ~DirectFile() override {
    if (fd_.get() >= 0 && padded_) (void)::ftruncate(fd_.get(), static_cast<off_t>(size_));
  }

 private:
  Buffer& bounce(std::uint64_t len) {
    if (bounce_.size() < len) bounce_ = Buffer(static_cast<std::size_t>(len), BufferKind::Aligned, align_.strictest() < kPageSize ? kPageSize : align_.strictest());
    return bounce_;
  }

  direct_io::Alignment align_;
  UnalignedPolicy policy_;
  std::uint64_t size_ = 0;
  bool padded_ = false;
  Buffer bounce_;
};

class DirectMethod final : public FileMethod<DirectFile> {
 public:
  using FileMethod::FileMethod;
  Availability probe(const std::filesystem::path& dir) const override;
};

Availability DirectMethod::probe(const std::filesystem::path& dir) const {
  // An unnamed file in dir: nothing to clean up, nothing visible.
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) {
    // O_TMPFILE unsupported: a named probe file of this process, unlinked at
    // once, O_DIRECT asked for after: an open with O_DIRECT on a filesystem
    // that refuses it (ramfs) creates the file before it fails, and left it
    // behind for the next probe's O_EXCL to call "File exists".
    std::filesystem::path p = dir / (".iolab-direct-probe." + std::to_string(::getpid()));
    fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
      ::unlink(p.c_str());
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
        const int err = errno;
        ::close(fd);
        fd = -1;
        errno = err;
      }
    }
  }
  if (fd < 0)
    return {false, std::string("the filesystem of ") + dir.string() + " refuses O_DIRECT (" + std::strerror(errno) + ")"};
  sys::Fd owned(fd);
  direct_io::Alignment a = direct_io::discover(fd, dir);
  Buffer b(a.strictest() < kPageSize ? kPageSize : a.strictest(), BufferKind::Aligned);
  if (::pwrite(fd, b.data(), b.size(), 0) != static_cast<ssize_t>(b.size()))
    return {false, std::string("an aligned O_DIRECT write failed in ") + dir.string() + " (" + std::strerror(errno) + ")"};
  return {};
}

}  // namespace

const Method& direct_method() { return the_method<DirectMethod>(kDirectFacts); }

}  // namespace iolab::io
