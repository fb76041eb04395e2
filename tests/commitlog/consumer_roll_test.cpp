// A tailing consumer reading through a mapping of a segment's whole capacity
// reached the end of a segment that was not preallocated: when the writer's
// frames ended exactly on a page boundary, the check for the next frame read
// a page wholly past the file's end and the process died of SIGBUS (seen in
// `iolab run commitlog`, 4 KiB messages in 256 MiB qmq segments, when qmq still appended by pwrite). The
// consumer now stops at the file's end once the writer has rolled.
#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/traffic.h"

namespace iolab::commitlog {
namespace {

TEST(TailingConsumer, ReadsPastASegmentThatEndsOnAPageBoundary) {
  testing::TestDir scratch;
  TrafficConfig c;
  // Appends by pwrite, no preallocation (the file ends where the data
  // does), read through a mapping of each segment's capacity.
  c.log.design = Design::Kafka;
  c.consumer_read_path = ReadPath::Mmap;
  // One 8 KiB frame per 12 KiB segment: the file ends on a page boundary
  // and its last 4 KiB of capacity stay unwritten (past the end of the file).
  c.log.segment_size = 3 * 4096;
  c.message_size = 2 * 4096 - kFrameHeaderSize;
  c.messages = 40;
  c.consumer = true;
  TrafficResult r = run_traffic(scratch.path(), c);
  EXPECT_EQ(r.messages, c.messages);
  EXPECT_EQ(r.consumed, c.messages) << "the consumer followed every roll";
  EXPECT_EQ(r.log.messages, c.messages);
}

}  // namespace
}  // namespace iolab::commitlog
