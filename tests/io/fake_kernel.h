// A fake kernel for the queue engine of io_uring and libaio
// (src/io/queue_pump.h): completion order, results and failures as the test
// decides; and a source of block requests with a buffer each.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "internal/io/queue_pump.h"
#include "iolab/base/error.h"

namespace iolab::testing {

inline std::byte file_byte(std::uint64_t offset) { return static_cast<std::byte>((offset * 7 + 3) & 0xff); }

// A kernel in miniature over an in-memory file. Transfers complete oldest
// first, except those at a `held` offset, which complete only when nothing
// else is in flight: the slow request of a real device.
class FakeKernel {
 public:
  struct Op {
    std::uint32_t slot;
    io::queue::Piece piece;
  };

  explicit FakeKernel(std::size_t file_size) : file_(file_size) {
    for (std::size_t i = 0; i < file_size; ++i) file_[i] = file_byte(i);
  }

  // ---- what the test sets ----
  std::set<std::uint64_t> held;                              // piece offsets completed last
  std::map<std::uint64_t, std::deque<std::int64_t>> script;  // piece offset -> next results (bytes moved, or -errno)
  std::size_t accept_per_submit = SIZE_MAX;                  // the kernel takes at most this many per call
  std::optional<std::uint64_t> refuse_offset;                // check() refuses this request
  int fail_submit_call = 0;                                  // this submit call (1-based) fails ...
  int fail_submit_errno = 0;                                 // ... with this errno, taking nothing
  std::function<void(const Op&)> on_complete;                // sees every transfer as it completes

  // ---- the Backend ----
  void check(const io::IoRequest& r) const {
    if (refuse_offset && r.offset == *refuse_offset) throw Error("check", "fake", "refused", EINVAL);
  }
  void prepare(std::uint32_t slot, const io::queue::Piece& p) {
    EXPECT_LE(p.length, max_piece_seen_limit);
    prepared_.push_back({slot, p});
    max_outstanding = std::max(max_outstanding, outstanding());
  }
  io::queue::Submitted submit_prepared(unsigned wait_for) {
    ++submit_calls;
    io::queue::Submitted s;
    if (submit_calls == fail_submit_call) {
      s.error = fail_submit_errno;
      s.call = "fake_submit";
      return s;
    }
    const std::size_t n = std::min(prepared_.size(), accept_per_submit);
    max_batch = std::max(max_batch, n);
    for (std::size_t i = 0; i < n; ++i) {
      in_flight_.push_back(prepared_.front());
      prepared_.pop_front();
    }
    transfers_submitted += n;
    s.went = n;
    if (!prepared_.empty()) return s;  // like io_uring: no wait unless everything went
    EXPECT_LE(wait_for, in_flight_.size() + ready_.size()) << "the pump waits for more than it has in flight";
    while (ready_.size() < wait_for && !in_flight_.empty()) complete_one();
    return s;
  }
  std::size_t discard_unsubmitted() {
    const std::size_t n = prepared_.size();
    discarded += n;
    prepared_.clear();
    return n;
  }
  std::size_t reap(std::span<io::queue::Completion> out) {
    const std::size_t n = std::min(ready_.size(), out.size());
    max_reaped = std::max(max_reaped, n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = ready_.front();
      ready_.pop_front();
    }
    return n;
  }

  // ---- what the test reads ----
  std::size_t outstanding() const { return prepared_.size() + in_flight_.size() + ready_.size(); }
  std::size_t in_flight() const { return in_flight_.size(); }
  const std::vector<std::byte>& file() const { return file_; }
  std::size_t max_outstanding = 0, max_batch = 0, transfers_submitted = 0, discarded = 0, max_reaped = 0;
  int submit_calls = 0;
  std::vector<std::uint64_t> completion_offsets;  // piece offsets, in completion order
  std::size_t max_piece_seen_limit = SIZE_MAX;

 private:
  void complete_one() {
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [&](const Op& o) { return !held.contains(o.piece.offset); });
    if (it == in_flight_.end()) it = in_flight_.begin();  // only held ones left: the device finishes them now
    Op op = *it;
    in_flight_.erase(it);
    completion_offsets.push_back(op.piece.offset);
    if (on_complete) on_complete(op);
    ready_.push_back({op.slot, run(op.piece)});
  }
  std::int64_t run(const io::queue::Piece& p) {
    std::size_t len = p.length;
    if (auto s = script.find(p.offset); s != script.end() && !s->second.empty()) {
      std::int64_t r = s->second.front();
      s->second.pop_front();
      if (r < 0) return r;
      len = std::min(len, static_cast<std::size_t>(r));
    }
    if (p.kind == io::IoRequest::Kind::Read) {
      if (p.offset >= file_.size()) return 0;
      std::size_t n = std::min<std::size_t>(len, file_.size() - p.offset);
      std::memcpy(p.data, file_.data() + p.offset, n);
      return static_cast<std::int64_t>(n);
    }
    if (file_.size() < p.offset + len) file_.resize(p.offset + len);
    std::memcpy(file_.data() + p.offset, p.data, len);
    return static_cast<std::int64_t>(len);
  }

  std::vector<std::byte> file_;
  std::deque<Op> prepared_, in_flight_;
  std::deque<io::queue::Completion> ready_;
};

// `count` requests of `block` bytes at consecutive offsets, each with its own buffer.
class BlockSource final : public io::RequestSource {
 public:
  BlockSource(std::size_t count, std::size_t block, io::IoRequest::Kind kind = io::IoRequest::Kind::Read)
      : block_(block), kind_(kind), buffers_(count, std::vector<std::byte>(block)), done_(count, 0) {}

  bool next(io::IoRequest& r) override {
    ++next_calls;
    if (issued_ == buffers_.size()) {
      exhausted = true;
      return false;
    }
    r.kind = kind_;
    r.offset = issued_ * block_;
    r.data = buffers_[issued_];
    r.tag = issued_;
    if (kind_ == io::IoRequest::Kind::Write) std::fill(buffers_[issued_].begin(), buffers_[issued_].end(), std::byte{0x5a});
    ++issued_;
    return true;
  }
  void done(io::IoRequest& r) override {
    ++done_[r.tag];
    done_order.push_back(r.tag);
    finished.push_back(r);
    if (throw_at && r.tag == *throw_at) throw std::runtime_error("done() refused request " + std::to_string(r.tag));
  }

  std::vector<std::byte>& buffer(std::size_t i) { return buffers_[i]; }
  std::size_t issued() const { return issued_; }
  int times_done(std::size_t i) const { return done_[i]; }

  std::optional<std::size_t> throw_at;
  bool exhausted = false;
  int next_calls = 0;
  std::vector<std::uint64_t> done_order;
  std::vector<io::IoRequest> finished;

 private:
  std::size_t block_;
  io::IoRequest::Kind kind_;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<int> done_;
  std::size_t issued_ = 0;
};

inline io::queue::Settings settings(unsigned depth, unsigned batch = 0, std::size_t granularity = 1) {
  io::queue::Settings s;
  s.depth = depth;
  s.batch = batch;
  s.eof_granularity = granularity;
  s.name = "fake";
  return s;
}

inline bool read_back_matches(const std::vector<std::byte>& buf, std::uint64_t offset, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (buf[i] != file_byte(offset + i)) return false;
  return true;
}

inline constexpr std::size_t kBlock = 64;
inline const std::filesystem::path kPath = "/fake/file";

}  // namespace iolab::testing
