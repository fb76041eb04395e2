// io_uring (liburing): requests go on a submission ring, up to
// queue_depth in flight, submitted in batches with one io_uring_enter.
// Buffered by default; with direct the file is opened O_DIRECT and
// every request must be aligned (there is no bounce path here: unaligned
// requests fail with EINVAL; use the direct method's bounce option instead).
#include <fcntl.h>
#include <liburing.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

#include "alignment.h"
#include "methods.h"
#include "posix.h"

namespace iolab::io {
namespace {

class IoUringFile final : public File {
 public:
  IoUringFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : File(p),
        fd_(posix::open_existing(p, a, o.direct ? O_DIRECT : 0)),
        direct_(o.direct),
        depth_(o.queue_depth == 0 ? 1 : o.queue_depth) {
    if (direct_) align_ = direct_io::discover(fd_.get(), p);
    int r = ::io_uring_queue_init(depth_, &ring_, 0);
    if (r < 0) posix::fail("io_uring_queue_init", p, -r);
  }
  ~IoUringFile() override { ::io_uring_queue_exit(&ring_); }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    IoRequest r{IoRequest::Kind::Read, offset, dst, 0};
    submit(std::span(&r, 1));
    return r.result;
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    IoRequest r{IoRequest::Kind::Write, offset, std::span(const_cast<std::byte*>(src.data()), src.size()), 0};
    submit(std::span(&r, 1));
  }

  // Keeps up to depth_ requests in flight; a short transfer is resubmitted
  // for its remainder (a short read that returns 0 is end of file).
  void submit(std::span<IoRequest> requests) override {
    for (auto& r : requests) {
      r.result = 0;
      if (direct_)
        direct_io::require_aligned(align_, r.data.data(), r.offset, r.data.size(),
                                   r.kind == IoRequest::Kind::Read ? "io_uring read O_DIRECT" : "io_uring write O_DIRECT",
                                   path());
    }
    std::size_t next = 0, in_flight = 0, finished = 0;
    std::vector<std::size_t> retry;
    while (finished < requests.size()) {
      // Queue what fits: retries first, then new requests.
      while (in_flight < depth_ && (!retry.empty() || next < requests.size())) {
        std::size_t i;
        if (!retry.empty()) { i = retry.back(); retry.pop_back(); }
        else i = next++;
        if (requests[i].data.size() == 0) { ++finished; continue; }
        prepare(requests[i], i);
        ++in_flight;
      }
      if (in_flight == 0) continue;
      ++counters_.calls;
      // With more to queue, wake on the first completion to refill the ring;
      // once everything is in flight, wait for all of it in this one call
      // (buffered requests finish one by one in io-wq, and waking for each
      // would cost an io_uring_enter per request).
      const bool more = !retry.empty() || next < requests.size();
      int s = ::io_uring_submit_and_wait(&ring_, more ? 1 : static_cast<unsigned>(in_flight));
      if (s < 0 && s != -EINTR) posix::fail("io_uring_submit", path(), -s);
      // Reap everything that completed.
      io_uring_cqe* cqe = nullptr;
      unsigned head, seen = 0;
      int first_error = 0;
      IoRequest::Kind failed_kind = IoRequest::Kind::Read;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        ++seen;
        --in_flight;
        std::size_t i = static_cast<std::size_t>(::io_uring_cqe_get_data64(cqe));
        IoRequest& r = requests[i];
        if (cqe->res < 0) {
          if (cqe->res == -EINTR || cqe->res == -EAGAIN) { retry.push_back(i); continue; }
          if (first_error == 0) {
            first_error = -cqe->res;
            failed_kind = r.kind;
          }
          ++finished;
          continue;
        }
        r.result += static_cast<std::size_t>(cqe->res);
        // 0 bytes: end of file for a read; for a write, no space was left.
        if (cqe->res == 0 && r.kind == IoRequest::Kind::Write && first_error == 0) {
          first_error = ENOSPC;
          failed_kind = r.kind;
        }
        // An O_DIRECT read that ends off the alignment stopped at end of
        // file; resubmitting the unaligned remainder would fail with EINVAL.
        bool direct_eof = direct_ && r.kind == IoRequest::Kind::Read && (r.offset + r.result) % align_.offset != 0;
        if (r.result == r.data.size() || cqe->res == 0 || direct_eof) ++finished;
        else retry.push_back(i);
      }
      ::io_uring_cq_advance(&ring_, seen);
      if (first_error != 0) {
        drain(in_flight);
        posix::fail(failed_kind == IoRequest::Kind::Read ? "io_uring read" : "io_uring write", path(), first_error);
      }
    }
    for (auto& r : requests)
      (r.kind == IoRequest::Kind::Read ? counters_.bytes_read : counters_.bytes_written) += r.result;
  }

  void sync(Durability d) override {
    if (!supports(d)) posix::unsupported(d, "io_uring", path());
    posix::sync_fd(fd_.get(), d, path(), counters_);
  }
  bool supports(Durability d) const override { return posix::fd_supports(d); }
  std::uint64_t size() override { return posix::file_size(fd_.get(), path()); }
  void close() override { fd_.close(path()); }
  std::size_t alignment() const override { return direct_ ? align_.strictest() : 1; }

 private:
  void prepare(const IoRequest& r, std::size_t index) {
    io_uring_sqe* sqe = ::io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // cannot happen while in_flight <= depth_, but never write through null
      ::io_uring_submit(&ring_);
      sqe = ::io_uring_get_sqe(&ring_);
      if (sqe == nullptr) throw Error("io_uring_get_sqe", path().string(), "submission ring full", EBUSY);
    }
    std::byte* p = r.data.data() + r.result;
    // An sqe carries a 32-bit length: larger requests go in 1 GiB pieces
    // (aligned for O_DIRECT), completed like any short transfer.
    unsigned len = static_cast<unsigned>(std::min<std::size_t>(r.data.size() - r.result, std::size_t{1} << 30));
    if (r.kind == IoRequest::Kind::Read)
      ::io_uring_prep_read(sqe, fd_.get(), p, len, r.offset + r.result);
    else
      ::io_uring_prep_write(sqe, fd_.get(), p, len, r.offset + r.result);
    ::io_uring_sqe_set_data64(sqe, index);
  }
  // After an error: wait for what is still in flight so no buffer is written after we return.
  void drain(std::size_t in_flight) {
    while (in_flight > 0) {
      io_uring_cqe* cqe = nullptr;
      if (::io_uring_wait_cqe(&ring_, &cqe) < 0) break;
      ::io_uring_cqe_seen(&ring_, cqe);
      --in_flight;
    }
  }

  posix::Fd fd_;
  bool direct_;
  unsigned depth_;
  direct_io::Alignment align_;
  io_uring ring_{};
};

class IoUringMethod final : public Method {
 public:
  std::string_view name() const override { return "io_uring"; }
  MethodTraits traits(const FileOptions& o) const override {
    MethodTraits t;
    t.queued = true;
    t.direct_optional = true;
    t.bypasses_page_cache = o.direct;
    t.needs_alignment = o.direct;
    return t;
  }
  std::string_view description() const override {
    return "io_uring via liburing: batched submission, settable queue depth, buffered or O_DIRECT";
  }
  Availability probe(const std::filesystem::path&) const override {
    std::ifstream knob("/proc/sys/kernel/io_uring_disabled");
    int disabled = 0;
    if (knob >> disabled && disabled == 2) return {false, "io_uring is disabled by the kernel (kernel.io_uring_disabled=2)"};
    io_uring ring{};
    int r = ::io_uring_queue_init(2, &ring, 0);
    if (r < 0) {
      std::string why = std::string("io_uring_setup failed: ") + std::strerror(-r);
      if (disabled == 1) why += " (kernel.io_uring_disabled=1: only the io_uring_group may use it)";
      return {false, why};
    }
    ::io_uring_queue_exit(&ring);
    return {};
  }
  std::unique_ptr<File> open(const std::filesystem::path& p, Access a, const FileOptions& o) const override {
    return std::make_unique<IoUringFile>(p, a, o);
  }
};

}  // namespace

const Method& io_uring_method() {
  static const IoUringMethod m;
  return m;
}

}  // namespace iolab::io
