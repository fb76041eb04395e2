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

#include "fake_kernel.h"
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
using testing::BlockSource;
using testing::FakeKernel;
using testing::file_byte;
using testing::kBlock;
using testing::kPath;
using testing::read_back_matches;
using testing::settings;

// One slow request must not stop the queue. With request 0 held back,
// every other request is issued and completed through the remaining slots
// before request 0 completes.
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
