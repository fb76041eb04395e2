// Options::touch_ahead: the mapped designs fault pages in ahead of the
// writer from a thread of their own, never more than the window past it,
// and what they write reads back; the other designs ignore it.
#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog {
namespace {

using testing::message;

constexpr std::uint64_t kMessages = 1500;                // ~400 KiB: rolls 64 KiB segments
constexpr std::uint64_t kLargestFrame = kFrameHeaderSize + 16 + 480;  // message() bodies are at most 16 + 479 bytes
constexpr std::size_t kWindow = 4096;

class CommitLogTouchAhead : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogTouchAhead, StaysWithinTheWindowAndReadsBack) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  Options o = testing::small_options(GetParam());
  o.touch_ahead = kWindow;
  auto log = open_commit_log(scratch.path(), o);
  for (std::uint64_t n = 0; n < kMessages; ++n) log->append(0, message(n));
  log->close();
  Stats s = log->stats();
  ASSERT_GT(s.rolls, 2u);
  if (!traits(GetParam()).writes_through_map) {
    EXPECT_EQ(s.touched_ahead_bytes, 0u) << "only a mapping is faulted in ahead";
  } else {
    EXPECT_GE(s.touched_ahead_bytes, kWindow) << "the first window is faulted in at open";
    // Through the log's end (frames, plus the padding a roll leaves) and one
    // window past it; a segment made ahead has its first window faulted in
    // when made, and again by the toucher once the writer is in it.
    std::uint64_t bound = s.bytes + s.rolls * kLargestFrame + kWindow * (1 + 2 * s.segments_allocated_ahead);
    EXPECT_LE(s.touched_ahead_bytes, bound) << "faulted in more than the window ahead of the writer";
  }
  std::vector<std::uint64_t> want(kMessages);
  for (std::uint64_t n = 0; n < kMessages; ++n) want[n] = n;
  EXPECT_EQ(testing::numbers_in(log->log_dir(0)), want);
}

INSTANTIATE_TEST_SUITE_P(MappedAndNot, CommitLogTouchAhead,
                         ::testing::Values(Design::RocketMq, Design::Qmq, Design::Kafka), testing::test_name);

}  // namespace
}  // namespace iolab::commitlog
