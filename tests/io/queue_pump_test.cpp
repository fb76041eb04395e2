// The queue engine of io_uring and libaio (src/io/queue_pump.h), driven
// against a fake kernel whose completion order, results and failures the
// test decides: deterministic, no device, no sleeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "internal/io/queue_pump.h"
#include "io_test_support.h"
#include "iolab/base/error.h"

namespace iolab::io {
namespace {

using queue::Completion;
using queue::Piece;
using queue::QueuePump;
using queue::Settings;
using queue::Submitted;
using testing::expect_error;

std::byte file_byte(std::uint64_t offset) { return static_cast<std::byte>((offset * 7 + 3) & 0xff); }

// A kernel in miniature over an in-memory file. Transfers complete oldest
// first, except those at a `held` offset, which complete only when nothing
// else is in flight: the slow request of a real device.
class FakeKernel {
 public:
  struct Op {
    std::uint32_t slot;
    Piece piece;
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
  void check(const IoRequest& r) const {
    if (refuse_offset && r.offset == *refuse_offset) throw Error("check", "fake", "refused", EINVAL);
  }
  void prepare(std::uint32_t slot, const Piece& p) {
    EXPECT_LE(p.length, max_piece_seen_limit);
    prepared_.push_back({slot, p});
    max_outstanding = std::max(max_outstanding, outstanding());
  }
  Submitted submit(unsigned wait_for) {
    ++submit_calls;
    Submitted s;
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
  std::size_t reap(std::span<Completion> out) {
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
  std::int64_t run(const Piece& p) {
    std::size_t len = p.length;
    if (auto s = script.find(p.offset); s != script.end() && !s->second.empty()) {
      std::int64_t r = s->second.front();
      s->second.pop_front();
      if (r < 0) return r;
      len = std::min(len, static_cast<std::size_t>(r));
    }
    if (p.kind == IoRequest::Kind::Read) {
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
  std::deque<Completion> ready_;
};

// `count` requests of `block` bytes at consecutive offsets, each with its own buffer.
class BlockSource final : public RequestSource {
 public:
  BlockSource(std::size_t count, std::size_t block, IoRequest::Kind kind = IoRequest::Kind::Read)
      : block_(block), kind_(kind), buffers_(count, std::vector<std::byte>(block)), done_(count, 0) {}

  bool next(IoRequest& r) override {
    ++next_calls;
    if (issued_ == buffers_.size()) {
      exhausted = true;
      return false;
    }
    r.kind = kind_;
    r.offset = issued_ * block_;
    r.data = buffers_[issued_];
    r.tag = issued_;
    if (kind_ == IoRequest::Kind::Write) std::fill(buffers_[issued_].begin(), buffers_[issued_].end(), std::byte{0x5a});
    ++issued_;
    return true;
  }
  void done(IoRequest& r) override {
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
  std::vector<IoRequest> finished;

 private:
  std::size_t block_;
  IoRequest::Kind kind_;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<int> done_;
  std::size_t issued_ = 0;
};

Settings settings(unsigned depth, unsigned batch = 0, std::size_t granularity = 1) {
  Settings s;
  s.depth = depth;
  s.batch = batch;
  s.eof_granularity = granularity;
  s.name = "fake";
  return s;
}

bool read_back_matches(const std::vector<std::byte>& buf, std::uint64_t offset, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (buf[i] != file_byte(offset + i)) return false;
  return true;
}

constexpr std::size_t kBlock = 64;
const std::filesystem::path kPath = "/fake/file";

// The complaint, as a test: one slow request must not stop the
// queue. With request 0 held back, every other request is issued and
// completed through the remaining slots before request 0 completes.
TEST(QueuePump, HeldBackCompletionDoesNotStopTheQueue) {
  for (bool timed : {false, true}) {
    SCOPED_TRACE(timed ? "timed" : "untimed");
    constexpr std::size_t kCount = 20;
    FakeKernel k(kCount * kBlock);
    k.held = {0};
    IoCounters counters;
    QueuePump pump(k, settings(4), kPath, counters);
    BlockSource src(kCount, kBlock);
    bool checked = false;
    k.on_complete = [&](const FakeKernel::Op& op) {
      if (op.piece.offset != 0) return;
      checked = true;
      EXPECT_EQ(k.transfers_submitted, kCount) << "the queue was not refilled while request 0 was held";
      EXPECT_TRUE(src.exhausted) << "the source was not drained while request 0 was held";
      EXPECT_EQ(k.in_flight(), 0u) << "request 0 completes only when nothing else is in flight";
    };
    pump.run(src, timed);
    EXPECT_TRUE(checked);
    EXPECT_EQ(k.completion_offsets.back(), 0u) << "held request completed last";
    ASSERT_EQ(src.done_order.size(), kCount);
    EXPECT_EQ(src.done_order.back(), 0u);
    for (std::size_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(src.times_done(i), 1) << i;
      EXPECT_TRUE(read_back_matches(src.buffer(i), i * kBlock, kBlock)) << i;
    }
    EXPECT_EQ(k.max_outstanding, 4u) << "the queue was kept at its depth";
    EXPECT_EQ(k.outstanding(), 0u);
    EXPECT_EQ(counters.bytes_read, kCount * kBlock);
  }
}

// The queue never holds more than its depth, and never hands over more than
// the batch per call; batch 0 hands over every free slot at once.
TEST(QueuePump, DepthAndBatchBoundEachSubmission) {
  struct Case {
    unsigned depth, batch;
    std::size_t max_batch;
  } cases[] = {{8, 3, 3}, {8, 0, 8}, {1, 0, 1}, {5, 7, 5}};
  for (const auto& c : cases) {
    SCOPED_TRACE("depth " + std::to_string(c.depth) + " batch " + std::to_string(c.batch));
    FakeKernel k(40 * kBlock);
    IoCounters counters;
    QueuePump pump(k, settings(c.depth, c.batch), kPath, counters);
    BlockSource src(40, kBlock);
    pump.run(src, false);
    EXPECT_EQ(src.done_order.size(), 40u);
    EXPECT_EQ(k.max_batch, c.max_batch);
    EXPECT_LE(k.max_outstanding, c.depth);
    EXPECT_EQ(k.max_outstanding, c.depth) << "the queue filled up";
  }
}

// The batch bounds each reap too (fio's iodepth_batch_complete_max): with
// batch 1 each freed slot is refilled and handed over before the next
// completion is taken, as fio's default loop does; completions left behind
// are taken by later calls, none lost. Batch 0 takes all that are ready.
TEST(QueuePump, BatchBoundsEachReap) {
  for (unsigned batch : {0u, 1u, 3u}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    FakeKernel k(40 * kBlock);
    IoCounters counters;
    QueuePump pump(k, settings(8, batch), kPath, counters);
    BlockSource src(40, kBlock);
    pump.run(src, false);
    EXPECT_EQ(src.done_order.size(), 40u);
    if (batch == 0) EXPECT_GT(k.max_reaped, 3u);  // the tail's wait makes all that remain ready at once
    else EXPECT_EQ(k.max_reaped, batch);
    EXPECT_EQ(k.max_outstanding, 8u) << "the queue filled up";
    EXPECT_EQ(k.outstanding(), 0u);
  }
}

// Short transfers, EAGAIN and EINTR are issued again for what is left.
TEST(QueuePump, ShortTransfersEagainAndEintrAreResubmitted) {
  FakeKernel k(8 * kBlock);
  k.script[0] = {10};                       // 10 bytes, then the other 54
  k.script[kBlock] = {-EAGAIN};             // refused once
  k.script[2 * kBlock] = {-EINTR, -EINTR};  // interrupted twice
  for (std::uint64_t i = 0; i < 3; ++i) k.script[3 * kBlock + i] = {1};  // one byte at a time, three times
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(8, kBlock);
  pump.run(src, false);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(src.times_done(i), 1) << i;
    EXPECT_TRUE(read_back_matches(src.buffer(i), i * kBlock, kBlock)) << i;
  }
  for (const auto& r : src.finished) EXPECT_EQ(r.result, kBlock) << r.tag;
  EXPECT_EQ(k.transfers_submitted, 8u + 1 + 1 + 2 + 3);
  EXPECT_EQ(counters.bytes_read, 8 * kBlock) << "bytes counted once";
}

// A read that reaches the end of the file comes back short; with an O_DIRECT
// granularity, a read ending off it is not retried (the kernel would refuse
// the unaligned rest), otherwise the retry reads 0 bytes and ends it.
TEST(QueuePump, ReadsAtEndOfFileComeBackShort) {
  for (std::size_t granularity : {std::size_t{1}, std::size_t{16}}) {
    SCOPED_TRACE("granularity " + std::to_string(granularity));
    FakeKernel k(2 * kBlock + 40);  // 40 is not a multiple of 16
    IoCounters counters;
    QueuePump pump(k, settings(4, 0, granularity), kPath, counters);
    BlockSource src(4, kBlock);
    pump.run(src, false);
    ASSERT_EQ(src.finished.size(), 4u);
    std::vector<std::size_t> results(4);
    for (const auto& r : src.finished) results[r.tag] = r.result;
    EXPECT_EQ(results, (std::vector<std::size_t>{kBlock, kBlock, 40, 0}));
    EXPECT_TRUE(read_back_matches(src.buffer(2), 2 * kBlock, 40));
    const auto tries_at_end = std::count(k.completion_offsets.begin(), k.completion_offsets.end(), 2 * kBlock + 40);
    EXPECT_EQ(tries_at_end, granularity == 1 ? 1 : 0);
  }
}

// Requests bigger than the largest transfer go in pieces.
TEST(QueuePump, LargeRequestsGoInPieces) {
  FakeKernel k(4 * kBlock);
  IoCounters counters;
  Settings s = settings(2);
  s.max_piece = 16;
  k.max_piece_seen_limit = 16;
  QueuePump pump(k, s, kPath, counters);
  BlockSource src(4, kBlock);
  pump.run(src, false);
  EXPECT_EQ(k.transfers_submitted, 4u * kBlock / 16);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(read_back_matches(src.buffer(i), i * kBlock, kBlock)) << i;
}

// A failed request: nothing new is issued, everything in flight completes
// before the pump throws, and the error names the request.
TEST(QueuePump, FailedRequestDrainsThenThrows) {
  FakeKernel k(40 * kBlock);
  k.script[5 * kBlock] = {-EIO};
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(40, kBlock);
  auto e = expect_error([&] { pump.run(src, false); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EIO);
  EXPECT_NE(std::string(e->what()).find("fake read /fake/file"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find("offset 320"), std::string::npos) << e->what();
  EXPECT_EQ(k.outstanding(), 0u) << "returned with requests in flight";
  EXPECT_LT(src.issued(), 40u) << "kept issuing after the failure";
  EXPECT_EQ(src.times_done(5), 0) << "a failed request is not handed to done()";
  for (auto tag : src.done_order) EXPECT_NE(tag, 5u);
  // The pump is whole again: the next stream runs.
  BlockSource again(8, kBlock);
  pump.run(again, false);
  EXPECT_EQ(again.done_order.size(), 8u);
}

TEST(QueuePump, ZeroByteWriteIsNoSpace) {
  FakeKernel k(0);
  k.script[2 * kBlock] = {0};
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(6, kBlock, IoRequest::Kind::Write);
  auto e = expect_error([&] { pump.run(src, false); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOSPC);
  EXPECT_NE(std::string(e->what()).find("fake write"), std::string::npos) << e->what();
  EXPECT_EQ(k.outstanding(), 0u);
}

// A submission call that fails: what the kernel did not take is discarded,
// what it holds is waited for, and the call is named.
TEST(QueuePump, FailedSubmitDiscardsAndDrains) {
  FakeKernel k(40 * kBlock);
  k.fail_submit_call = 3;
  k.fail_submit_errno = EBADF;
  k.held = {0};  // keeps request 0 in flight across the failure
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(40, kBlock);
  auto e = expect_error([&] { pump.run(src, false); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EBADF);
  EXPECT_EQ(e->operation(), "fake_submit");
  EXPECT_GT(k.discarded, 0u);
  EXPECT_EQ(k.outstanding(), 0u);
  EXPECT_EQ(k.completion_offsets.back(), 0u) << "the held request was waited for";
}

// A kernel that takes part of a batch: the rest goes in the next call.
TEST(QueuePump, PartialSubmissionIsCompleted) {
  FakeKernel k(30 * kBlock);
  k.accept_per_submit = 1;
  IoCounters counters;
  QueuePump pump(k, settings(8), kPath, counters);
  BlockSource src(30, kBlock);
  pump.run(src, false);
  EXPECT_EQ(src.done_order.size(), 30u);
  for (std::size_t i = 0; i < 30; ++i) EXPECT_TRUE(read_back_matches(src.buffer(i), i * kBlock, kBlock)) << i;
}

// The source itself failing: done() or check() throwing ends the stream the same way.
TEST(QueuePump, DoneThrowingStopsAndDrains) {
  FakeKernel k(40 * kBlock);
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(40, kBlock);
  src.throw_at = 3;
  EXPECT_THROW(pump.run(src, false), std::runtime_error);
  EXPECT_EQ(k.outstanding(), 0u);
  EXPECT_EQ(src.done_order.back(), 3u) << "no done() after the one that threw";
  EXPECT_LT(src.issued(), 40u);
}

TEST(QueuePump, RefusedRequestStopsAndDrains) {
  FakeKernel k(40 * kBlock);
  k.refuse_offset = 6 * kBlock;
  IoCounters counters;
  QueuePump pump(k, settings(4), kPath, counters);
  BlockSource src(40, kBlock);
  auto e = expect_error([&] { pump.run(src, false); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EINVAL);
  EXPECT_EQ(k.outstanding(), 0u);
  EXPECT_EQ(src.issued(), 7u) << "stopped at the refused request";
  for (auto tag : src.done_order) EXPECT_LT(tag, 6u);
}

// Timestamps: every request gets both, completion after submission,
// submission in issue order.
TEST(QueuePump, TimestampsFilledAndOrdered) {
  FakeKernel k(50 * kBlock);
  k.held = {3 * kBlock};
  IoCounters counters;
  QueuePump pump(k, settings(4, 2), kPath, counters);
  BlockSource src(50, kBlock);
  src.buffer(7).clear();  // a zero-length request completes without a transfer
  pump.run(src, true);
  ASSERT_EQ(src.finished.size(), 50u);
  std::vector<IoRequest> by_tag(50);
  for (const auto& r : src.finished) by_tag[r.tag] = r;
  for (std::size_t i = 0; i < 50; ++i) {
    EXPECT_GT(by_tag[i].submitted_ns, 0u) << i;
    EXPECT_GE(by_tag[i].completed_ns, by_tag[i].submitted_ns) << i;
    if (i > 0) {
      EXPECT_GE(by_tag[i].submitted_ns, by_tag[i - 1].submitted_ns) << i;
    }
  }
  EXPECT_EQ(by_tag[7].result, 0u);
  EXPECT_EQ(k.completion_offsets.back(), 3 * kBlock);
  EXPECT_GE(by_tag[3].completed_ns, by_tag[10].completed_ns) << "the held request finished last";
  // Untimed: nothing is filled.
  BlockSource plain(4, kBlock);
  pump.run(plain, false);
  for (const auto& r : plain.finished) EXPECT_EQ(r.submitted_ns + r.completed_ns, 0u);
}

// submit() on top of stream(): results come back in place, the caller's tags are kept.
TEST(QueuePump, SpanSourceWritesResultsBack) {
  FakeKernel k(3 * kBlock);
  IoCounters counters;
  QueuePump pump(k, settings(2), kPath, counters);
  std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(kBlock));
  std::vector<IoRequest> reqs;
  for (std::size_t i = 0; i < 4; ++i) {
    IoRequest r{IoRequest::Kind::Read, (3 - i) * kBlock, bufs[i]};
    r.tag = 100 + i;
    r.result = 999;  // stale: reset by the source
    reqs.push_back(r);
  }
  queue::SpanSource source(reqs);
  pump.run(source, false);
  EXPECT_EQ(reqs[0].result, 0u) << "past the end";
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(reqs[i].result, kBlock);
    EXPECT_TRUE(read_back_matches(bufs[i], (3 - i) * kBlock, kBlock));
  }
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(reqs[i].tag, 100 + i);
}

}  // namespace
}  // namespace iolab::io
