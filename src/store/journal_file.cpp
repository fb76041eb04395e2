#include "journal_file.h"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/uio.h>
#include <unistd.h>

#include "iolab/error.h"
#include "iolab/store/crc32c.h"
#include "iolab/store/journal.h"

namespace iolab::store {

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::fail(const char* op, int err) const { throw Error(op, path_.string(), err); }

void Journal::check_and_decode(std::uint64_t offset, std::uint32_t data_length, std::span<const std::byte> buf,
                               Employee& out) const {
  RecordHeader h = decode_record_header(buf.data());
  auto data = buf.subspan(kRecordHeaderSize, data_length);
  // The CRC covers header bytes 4..15 and the data; decode() checks the
  // fields' structure itself (record_valid would parse it a second time).
  bool ok = h.kind == kKindActive && h.data_length == data_length &&
            crc32c(crc32c(buf.subspan(4, kRecordHeaderSize - 4)), data) == h.crc;
  if (!ok || !decode(data, out))
    throw Error("get", path_.string(),
                "record at offset " + std::to_string(offset) + " fails its header or CRC32C check");
}

void Journal::pwrite_all(std::span<const std::byte> src, std::uint64_t offset) {
  while (!src.empty()) {
    ssize_t n = ::pwrite(fd_, src.data(), src.size(), static_cast<off_t>(offset));
    ++counters_.syscalls;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("pwrite", errno);
    if (n == 0) fail("pwrite", ENOSPC);
    counters_.bytes_written += static_cast<std::uint64_t>(n);
    src = src.subspan(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void Journal::pwritev_all(std::span<const std::byte> a, std::span<const std::byte> b, std::uint64_t offset) {
  iovec iov[2] = {{const_cast<std::byte*>(a.data()), a.size()}, {const_cast<std::byte*>(b.data()), b.size()}};
  ssize_t n;
  do {
    n = ::pwritev(fd_, iov, b.empty() ? 1 : 2, static_cast<off_t>(offset));
    ++counters_.syscalls;
  } while (n < 0 && errno == EINTR);
  if (n < 0) fail("pwritev", errno);
  counters_.bytes_written += static_cast<std::uint64_t>(n);
  auto done = static_cast<std::size_t>(n);
  if (done == a.size() + b.size()) return;
  // A short vectored write: finish the rest plainly.
  if (done < a.size()) {
    pwrite_all(a.subspan(done), offset + done);
    pwrite_all(b, offset + a.size());
  } else {
    pwrite_all(b.subspan(done - a.size()), offset + done);
  }
}

void Journal::pread_exact(std::span<std::byte> dst, std::uint64_t offset) {
  while (!dst.empty()) {
    ssize_t n = ::pread(fd_, dst.data(), dst.size(), static_cast<off_t>(offset));
    ++counters_.syscalls;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("pread", errno);
    if (n == 0) throw Error("pread", path_.string(), "unexpected end of file at offset " + std::to_string(offset));
    counters_.bytes_read += static_cast<std::uint64_t>(n);
    dst = dst.subspan(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void Journal::write_all(std::span<const std::byte> src) {
  while (!src.empty()) {
    ssize_t n = ::write(fd_, src.data(), src.size());
    ++counters_.syscalls;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", errno);
    if (n == 0) fail("write", ENOSPC);
    counters_.bytes_written += static_cast<std::uint64_t>(n);
    src = src.subspan(static_cast<std::size_t>(n));
  }
}

void Journal::read_exact(std::span<std::byte> dst) {
  while (!dst.empty()) {
    ssize_t n = ::read(fd_, dst.data(), dst.size());
    ++counters_.syscalls;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", errno);
    if (n == 0) throw Error("read", path_.string(), "unexpected end of file");
    counters_.bytes_read += static_cast<std::uint64_t>(n);
    dst = dst.subspan(static_cast<std::size_t>(n));
  }
}

void Journal::seek(std::uint64_t offset) {
  ++counters_.syscalls;
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) fail("lseek", errno);
}

void Journal::fd_sync(io::Durability call) {
  int r;
  do {
    r = call == io::Durability::Fsync ? ::fsync(fd_) : ::fdatasync(fd_);
    ++counters_.syscalls;
  } while (r < 0 && errno == EINTR);
  if (r < 0) fail(call == io::Durability::Fsync ? "fsync" : "fdatasync", errno);
}

void Journal::sync(io::Durability call) {
  flush();
  fd_sync(call);
}

void Journal::close(std::uint64_t end) {
  if (fd_ < 0) return;
  flush();
  off_t size = ::lseek(fd_, 0, SEEK_END);
  ++counters_.syscalls;
  if (size >= 0 && static_cast<std::uint64_t>(size) > end) {
    ++counters_.syscalls;
    if (::ftruncate(fd_, static_cast<off_t>(end)) < 0) fail("ftruncate", errno);
  }
  int fd = fd_;
  fd_ = -1;
  ++counters_.syscalls;
  if (::close(fd) < 0) fail("close", errno);
}

}  // namespace iolab::store

namespace iolab::store {

std::unique_ptr<Journal> make_journal(const StoreOptions& options, int fd, const std::filesystem::path& path,
                                      std::uint64_t end) {
  switch (options.backend) {
    case Backend::Fields: return make_fields_journal(fd, path, end);
    case Backend::Gather: return make_gather_journal(fd, path);
    case Backend::Mmap: return make_mmap_journal(fd, path, end, options.mmap_grow_step);
    case Backend::Buffered: return make_buffered_journal(fd, path, end, options.stage_buffer);
  }
  ::close(fd);
  throw Error("open journal", path.string(), "unknown backend");
}

}  // namespace iolab::store
