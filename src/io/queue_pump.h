// Internal: the one queue engine of the queued methods (io_uring, libaio).
//
// QueuePump streams the requests of a RequestSource through a kernel queue
// of `depth` slots, the way fio keeps its iodepth: every slot freed by a
// completion is refilled before the next wait, so the device never sees
// the queue drain until the source runs dry. At most `batch` new transfers
// go to the kernel per submission call (fio's iodepth_batch_submit; 0 =
// every free slot), and at most `batch` completions are taken per reap
// (fio's iodepth_batch_complete_max). A short transfer, or a completion
// failed with EINTR or EAGAIN, is resubmitted for what is left. After any failure (a failed
// request or call, or next()/done()/check() throwing) nothing new is
// issued: the pump takes back what the kernel has not taken, waits until
// nothing is in flight, then throws the first failure, so no buffer is
// touched after run() returns.
//
// A Backend is the kernel interface, small enough to fake in a test:
//   void check(const IoRequest&)
//       throws Error when the kernel would refuse the request (O_DIRECT
//       alignment, unregistered fixed buffer); called before it is issued.
//   void prepare(std::uint32_t slot, const queue::Piece&)
//       queues one transfer for the next submit; throws only when it cannot.
//   queue::Submitted submit_prepared(unsigned wait_for)
//       hands every prepared transfer to the kernel; when all of them went,
//       waits until at least wait_for completions are ready. Says how many
//       went, and the errno and name of a call that failed (EINTR retried).
//   std::size_t discard_unsubmitted()
//       makes sure no prepared transfer the kernel has not taken ever
//       touches its buffer; returns how many there were.
//   std::size_t reap(std::span<queue::Completion>)
//       moves the completions ready now (never waits) into the span, as many
//       as fit; the rest stay for the next call.
//
// Timestamps (IoRequest::submitted_ns/completed_ns, when asked): one clock
// read per submission batch, as it is prepared just before the call that
// hands it over, and one per reap batch, just after the call that waited.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/io/file.h"

namespace iolab::io::queue {

// One transfer for the kernel: what is left of a request.
struct Piece {
  IoRequest::Kind kind = IoRequest::Kind::Read;
  std::byte* data = nullptr;
  std::size_t length = 0;
  std::uint64_t offset = 0;
};

// A finished transfer: the slot it ran in, bytes moved or -errno.
struct Completion {
  std::uint32_t slot = 0;
  std::int64_t result = 0;
};

// What one submission call did.
struct Submitted {
  std::size_t went = 0;         // transfers the kernel took
  int error = 0;                // errno of a failed call, 0 when none failed
  const char* call = nullptr;   // the call that failed ("io_uring_enter", "io_submit", ...)
};

// Largest transfer handed over at once: an io_uring sqe carries a 32-bit
// length and Linux moves at most 2 GiB - 4 KiB per call; 1 GiB keeps every
// O_DIRECT alignment. Larger requests complete piece by piece.
inline constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

struct Settings {
  unsigned depth = 32;              // most requests in flight (0 means 1)
  unsigned batch = 0;               // most new transfers per submission call; 0 = every free slot
  std::size_t eof_granularity = 1;  // O_DIRECT: a read that ends off this multiple stopped at end of file
  std::size_t max_piece = kMaxPiece;  // most bytes per transfer (a multiple of eof_granularity)
  std::string name = "queue";       // method name for errors: "<name> read <path>: ..."
};

template <typename Backend>
class QueuePump {
 public:
  QueuePump(Backend& backend, Settings settings, const std::filesystem::path& path, IoCounters& counters)
      : backend_(backend),
        s_(std::move(settings)),
        path_(path),
        counters_(counters),
        slots_(s_.depth == 0 ? 1 : s_.depth),
        reaped_(slots_.size()) {
    free_.reserve(slots_.size());
    retry_.reserve(slots_.size());
    reset();
  }
  QueuePump(const QueuePump&) = delete;
  QueuePump& operator=(const QueuePump&) = delete;

  unsigned depth() const { return static_cast<unsigned>(slots_.size()); }

  // Streams every request of `source`; see the top of this file.
  void run(RequestSource& source, bool time_requests) {
    source_ = &source;
    time_ = time_requests;
    exhausted_ = false;
    failure_ = nullptr;
    try {
      while (!failure_) {
        fill();
        if (prepared_ + in_flight_ == 0) break;
        cycle(wait_target());
      }
    } catch (...) {
      if (!failure_) failure_ = std::current_exception();
    }
    if (!failure_) return;
    drain();
    reset();
    std::rethrow_exception(failure_);
  }

 private:
  void reset() {
    free_.clear();
    for (std::size_t i = slots_.size(); i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
    retry_.clear();
    prepared_ = in_flight_ = 0;
  }

  std::size_t batch_limit() const { return s_.batch == 0 ? slots_.size() : s_.batch; }

  // Prepares retries first, then new requests, while slots and the batch allow.
  void fill() {
    std::uint64_t now = 0;
    while (prepared_ < batch_limit()) {
      if (!retry_.empty()) {
        std::uint32_t slot = retry_.back();
        retry_.pop_back();
        issue(slot);
        continue;
      }
      if (exhausted_ || free_.empty()) break;
      const std::uint32_t slot = free_.back();
      IoRequest& r = slots_[slot];
      r = IoRequest{};
      if (!source_->next(r)) {
        exhausted_ = true;
        break;
      }
      free_.pop_back();
      r.result = 0;
      r.completed_ns = 0;
      if (time_) {
        if (now == 0) now = steady_ns();
        r.submitted_ns = now;
      }
      if (r.data.empty()) {  // nothing to move: complete it here
        r.completed_ns = r.submitted_ns;
        finish(slot);
        continue;
      }
      backend_.check(r);
      issue(slot);
    }
  }

  void issue(std::uint32_t slot) {
    const IoRequest& r = slots_[slot];
    Piece p{r.kind, r.data.data() + r.result, std::min(r.data.size() - r.result, s_.max_piece), r.offset + r.result};
    backend_.prepare(slot, p);
    ++prepared_;
  }

  // How many completions to wait for after this submission.
  unsigned wait_target() const {
    // Stopped only by the batch limit: hand this batch over and keep filling.
    if (!retry_.empty() || (!exhausted_ && !free_.empty())) return 0;
    // The tail (nothing more to issue): wait for all of it in one call,
    // unless each request's completion time is wanted.
    if (exhausted_ && !time_) return static_cast<unsigned>(prepared_ + in_flight_);
    return 1;  // the queue is full: refill as soon as one completes
  }

  void cycle(unsigned wait_for) {
    Submitted s = backend_.submit_prepared(wait_for);
    prepared_ -= s.went;
    in_flight_ += s.went;
    if (s.error != 0) failure_ = std::make_exception_ptr(Error(s.call, path_.string(), s.error));
    reap();
  }

  // At most `batch` completions per call (fio's iodepth_batch_complete_max
  // follows its submit batch the same way): with batch 1, each freed slot is
  // refilled and handed over before the next completion is taken, as fio's
  // default loop does; the rest wait in the kernel's completion queue.
  void reap() {
    std::size_t n = backend_.reap(std::span(reaped_).first(std::min(reaped_.size(), batch_limit())));
    if (n == 0) return;
    const std::uint64_t now = time_ ? steady_ns() : 0;
    for (std::size_t i = 0; i < n; ++i) complete(reaped_[i], now);
  }

  void complete(const Completion& c, std::uint64_t now) {
    --in_flight_;
    IoRequest& r = slots_[c.slot];
    const bool read = r.kind == IoRequest::Kind::Read;
    if (c.result < 0) {
      const int err = static_cast<int>(-c.result);
      if ((err == EINTR || err == EAGAIN) && !failure_) {
        retry_.push_back(c.slot);
        return;
      }
      fail(r, err);
      free_.push_back(c.slot);
      return;
    }
    const auto got = static_cast<std::size_t>(c.result);
    r.result += got;
    (read ? counters_.bytes_read : counters_.bytes_written) += got;
    if (got == 0 && !read) {  // no space was left
      fail(r, ENOSPC);
      free_.push_back(c.slot);
      return;
    }
    // 0 bytes read is end of file; an O_DIRECT read ending off the
    // alignment stopped there too (the unaligned rest would be refused).
    const bool whole = r.result == r.data.size() || got == 0 ||
                       (read && (r.offset + r.result) % s_.eof_granularity != 0);
    if (!whole && !failure_) {
      retry_.push_back(c.slot);
      return;
    }
    r.completed_ns = now;
    finish(c.slot);
  }

  // Hands a finished request back to the source, unless a failure came first.
  void finish(std::uint32_t slot) {
    free_.push_back(slot);
    if (failure_) return;
    try {
      source_->done(slots_[slot]);
    } catch (...) {
      failure_ = std::current_exception();
    }
  }

  void fail(const IoRequest& r, int err) {
    if (failure_) return;
    const bool read = r.kind == IoRequest::Kind::Read;
    failure_ = std::make_exception_ptr(Error(
        s_.name + (read ? " read" : " write"), path_.string(),
        std::string(std::strerror(err)) + " (" + std::to_string(r.data.size()) + " bytes at offset " +
            std::to_string(r.offset) + ")",
        err));
  }

  // After a failure: nothing new; wait until the kernel holds no buffer.
  void drain() {
    retry_.clear();
    prepared_ -= std::min(prepared_, backend_.discard_unsubmitted());
    while (prepared_ + in_flight_ > 0) {
      Submitted s = backend_.submit_prepared(static_cast<unsigned>(prepared_ + in_flight_));
      prepared_ -= s.went;
      in_flight_ += s.went;
      if (s.error != 0 && s.error != EAGAIN && s.error != EBUSY && s.error != ENOMEM) {
        // Returning now would let the kernel write into buffers the caller
        // frees; no error message is worth that.
        std::fprintf(stderr, "iolab: %s %s: %s with %zu requests in flight; aborting\n", s.call, path_.c_str(),
                     std::strerror(s.error), in_flight_);
        std::abort();
      }
      reap();
    }
  }

  Backend& backend_;
  const Settings s_;
  const std::filesystem::path& path_;
  IoCounters& counters_;
  std::vector<IoRequest> slots_;  // the request in each slot; result = bytes done so far
  std::vector<Completion> reaped_;
  std::vector<std::uint32_t> free_;   // slots with no request
  std::vector<std::uint32_t> retry_;  // slots whose remainder waits to be issued again
  std::size_t prepared_ = 0;          // transfers prepared, not yet taken by the kernel
  std::size_t in_flight_ = 0;         // transfers the kernel holds
  RequestSource* source_ = nullptr;
  bool time_ = false;
  bool exhausted_ = false;
  std::exception_ptr failure_;
};

// The requests of File::submit as a source: results and times go back into the span.
class SpanSource final : public RequestSource {
 public:
  explicit SpanSource(std::span<IoRequest> requests) : requests_(requests) {
    for (auto& r : requests_) r.result = 0;
  }
  bool next(IoRequest& r) override {
    if (next_ == requests_.size()) return false;
    r = requests_[next_];
    r.tag = next_++;
    return true;
  }
  void done(IoRequest& r) override {
    IoRequest& mine = requests_[r.tag];
    mine.result = r.result;
    mine.submitted_ns = r.submitted_ns;
    mine.completed_ns = r.completed_ns;
  }

 private:
  std::span<IoRequest> requests_;
  std::size_t next_ = 0;
};

}  // namespace iolab::io::queue
