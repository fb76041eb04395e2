// Internal: what the queued methods' files (io_uring, libaio) share: a
// descriptor opened buffered or O_DIRECT, the O_DIRECT alignment check, and
// single calls and batches run as streams through the method's queue.
#pragma once

#include <fcntl.h>

#include <string>
#include <string_view>

#include "alignment.h"
#include "iolab/io/file.h"
#include "iolab/io/syscall.h"
#include "queue_pump.h"

namespace iolab::io {

class QueuedFile : public File {
 public:
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    IoRequest r{IoRequest::Kind::Read, offset, dst};
    submit(std::span(&r, 1));
    return r.result;
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    IoRequest r{IoRequest::Kind::Write, offset, std::span(const_cast<std::byte*>(src.data()), src.size())};
    submit(std::span(&r, 1));
  }
  // Every request is checked before any is issued: a refused batch changes nothing.
  void submit(std::span<IoRequest> requests) override {
    for (const auto& r : requests)
      if (!r.data.empty()) check_request(r);
    queue::SpanSource source(requests);
    stream(source, false);
  }

  void sync(Durability d) override {
    if (!supports(d)) sys::unsupported(d, method_, path());
    sys::sync_fd(fd_.get(), d, path(), counters_);
  }
  bool supports(Durability d) const override { return sys::fd_supports(d); }
  std::uint64_t size() override { return sys::file_size(fd_.get(), path()); }
  std::size_t alignment() const override { return direct_ ? align_.strictest() : 1; }

  // Throws Error(EINVAL) for a request the kernel would refuse: O_DIRECT
  // needs buffer address, offset and length aligned (there is no bounce path).
  virtual void check_request(const IoRequest& r) const {
    if (direct_)
      direct_io::require_aligned(align_, r.data.data(), r.offset, r.data.size(),
                                 (r.kind == IoRequest::Kind::Read ? read_op_ : write_op_).c_str(), path());
  }
  // The queue pump's backend check (queue_pump.h).
  void check(const IoRequest& r) const { check_request(r); }

 protected:
  QueuedFile(const std::filesystem::path& p, Access a, bool direct, std::string_view method)
      : File(p),
        fd_(sys::open_existing(p, a, direct ? O_DIRECT : 0)),
        direct_(direct),
        method_(method),
        read_op_(std::string(method) + " read O_DIRECT"),
        write_op_(std::string(method) + " write O_DIRECT") {
    if (direct_) align_ = direct_io::discover(fd_.get(), p);
  }

  // The queue's settings for files opened with `o`.
  queue::Settings queue_settings(const FileOptions& o) const {
    queue::Settings s;
    s.depth = o.queue_depth == 0 ? 1 : o.queue_depth;
    s.batch = o.submit_batch;
    s.eof_granularity = direct_ ? align_.offset : 1;
    s.name = std::string(method_);
    return s;
  }

  sys::Fd fd_;
  const bool direct_;
  direct_io::Alignment align_;

 private:
  std::string_view method_;
  std::string read_op_, write_op_;
};

}  // namespace iolab::io
