// The workload driver: its counts add up, in both loops, for every design;
// the consumer reads everything; durable designs report time-to-durable.
// Speed is never asserted here (bench/commitlog_bench.cpp measures it).
#include <numeric>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/traffic.h"
#include "iolab/base/error.h"

namespace iolab::commitlog {
namespace {

TrafficConfig small_workload(Design d) {
  TrafficConfig c;
  c.log = testing::small_options(d, 4);
  c.message_size = 200;
  c.producers = 2;
  c.messages = 3000;
  return c;
}

void check_counts(const TrafficResult& r, const TrafficConfig& c) {
  EXPECT_EQ(r.messages, c.messages);
  EXPECT_EQ(r.bytes, c.messages * c.message_size);
  EXPECT_EQ(r.append_latency.count(), c.messages);
  EXPECT_EQ(r.log.messages, c.messages);
  std::uint64_t per_second = 0, bytes = 0;
  for (const auto& s : r.per_second) {
    per_second += s.messages;
    bytes += s.bytes;
    EXPECT_LE(s.p99_ns, s.max_ns);
  }
  EXPECT_EQ(per_second, c.messages);
  EXPECT_EQ(bytes, r.bytes);
  EXPECT_GE(r.slower_than_1ms, r.slower_than_10ms);
  EXPECT_GE(r.slower_than_10ms, r.slower_than_100ms);
  EXPECT_GE(r.slower_than_100ms, r.slower_than_1s);
  EXPECT_GT(r.seconds, 0);
  EXPECT_GT(r.messages_per_second, 0);
  EXPECT_GT(r.producer_cpu_seconds, 0);
  if (c.consumer) {
    EXPECT_EQ(r.consumed, c.messages);
    EXPECT_EQ(r.consumer_delay.count(), c.messages);
  }
  EXPECT_GT(r.log.flushes, 0u) << "close syncs at least once";
  EXPECT_GT(r.bytes_per_flush(), 0);
}

class CommitLogWorkload : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogWorkload, ClosedLoopCountsAddUp) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(GetParam());
  TrafficResult r = run_traffic(scratch.path(), c);
  check_counts(r, c);
  EXPECT_EQ(r.design, GetParam());
  EXPECT_EQ(r.ack, traits(GetParam()).ack);
  if (traits(GetParam()).batches) {
    EXPECT_LT(r.log.appends, c.messages) << "kafka sends batches";
  } else {
    EXPECT_EQ(r.log.appends, c.messages);
  }
  if (r.ack == AckLevel::Durable) {
    // Every acknowledgement waited for its sync: all samples are durable.
    EXPECT_GT(r.durable_samples, 0u);
    EXPECT_EQ(r.not_durable_during_run, 0u);
    EXPECT_GT(r.messages_per_flush(), 0);
    // Its sync ends before its acknowledgement: never later than the latency.
    EXPECT_LE(r.time_to_durable.max(), r.append_latency.max());
  }
  // The window's CPU by kind of thread: the producers' own count under
  // their name; the log's threads, where the design has them, alive and named.
  EXPECT_DOUBLE_EQ(r.thread_cpu_seconds.at("log-producer"), r.producer_cpu_seconds);
  EXPECT_EQ(r.thread_cpu_seconds.contains("log-flush"), traits(GetParam()).flush_thread);
  EXPECT_EQ(r.thread_cpu_seconds.contains("log-commit"), traits(GetParam()).commit_thread);
  EXPECT_EQ(r.thread_cpu_seconds.contains("log-consumer"), c.consumer);
  // The log is left for catch-up reads, then removed.
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(scratch.path())) {
    std::string name = e.path().filename();
    if (name == "log" || name.starts_with("topic-")) dirs.push_back(e.path());
  }
  CatchUpResult cu = catch_up(dirs, ReadPath::Pread, false);
  EXPECT_EQ(cu.messages, c.messages);
}

TEST_P(CommitLogWorkload, OpenLoopMeasuresFromIntendedSendTimes) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(GetParam());
  c.loop = Loop::Open;
  c.rate = 20'000;  // 3000 messages: 0.15 s
  c.messages = 3000;
  TrafficResult r = run_traffic(scratch.path(), c);
  check_counts(r, c);
  // The run cannot end before the last message's intended send time.
  EXPECT_GE(r.seconds, (static_cast<double>(c.messages) / c.rate) * 0.9);
}

// A throughput run (what the engine times) reads no clock per message: the
// producers and the consumer count their clock reads, and none are made.
TEST_P(CommitLogWorkload, AThroughputRunReadsNoClockPerMessage) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(GetParam());
  TrafficRun run(scratch.path(), c, Clocking::None);
  Produced p = run.produce();
  EXPECT_EQ(p.messages, c.messages);
  EXPECT_EQ(p.bytes, c.messages * c.message_size);
  TrafficResult r = run.finish();
  EXPECT_EQ(r.message_clock_reads, 0u);
  EXPECT_EQ(r.messages, c.messages);
  EXPECT_EQ(r.log.messages, c.messages);
  EXPECT_EQ(r.consumed, c.messages) << "the consumer still reads everything";
  EXPECT_EQ(r.append_latency.count(), 0u) << "latency is the clocked run's";
  EXPECT_EQ(r.consumer_delay.count(), 0u);
  EXPECT_TRUE(r.per_second.empty());
  EXPECT_EQ(r.seconds, 0);
  EXPECT_GT(r.producer_cpu_seconds, 0);
  EXPECT_GT(r.process_cpu_seconds, 0) << "every thread's CPU over the run, beside the producers'";
  EXPECT_GT(r.close_start_ns, 0u);
  // The run ends when the producers are done, before the consumer's catch-up and close.
  EXPECT_GT(r.run_end_ns, 0u);
  EXPECT_LE(r.run_end_ns, r.close_start_ns);
  std::uint64_t closing = 0;
  for (const FlushEvent& e : r.log.flush_events) closing += e.done_ns > r.close_start_ns;
  const TrafficResult::RunSyncs syncs = r.syncs();
  EXPECT_EQ(syncs.during_run + syncs.after_run, r.log.flushes);
  EXPECT_GE(syncs.after_run, closing) << "close's syncs are never the run's";
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, CommitLogWorkload, ::testing::ValuesIn(kAllDesigns), testing::test_name);

// Issue 40 item 2: a run's syncs stop at its end (the last acknowledgement),
// not at close's start: a flush thread's syncs during the consumer's catch-up
// are counted with close's, apart, and make no message "durable at run end".
TEST(CommitLogWorkloadConfig, SyncsAfterTheLastAcknowledgementAreNotTheRuns) {
  TrafficResult r;
  r.messages = 16;
  r.log.flushes = 4;
  r.log.flush_events = {{0, 5, 10}, {1, 3, 20}, {0, 9, 30}, {1, 7, 45}};
  r.run_end_ns = 25;      // the last acknowledgement
  r.close_start_ns = 40;  // after the consumer's catch-up
  const TrafficResult::RunSyncs s = r.syncs();
  EXPECT_EQ(s.during_run, 2u);         // not 3: the sync at 30 came in the catch-up
  EXPECT_EQ(s.durable_messages, 8u);   // 5 of log 0 and 3 of log 1, not 9 + 3
  EXPECT_EQ(s.after_run, 2u);          // the catch-up's and close's
  r.run_end_ns = 5;                    // before any sync
  EXPECT_EQ(r.syncs().during_run, 0u);
  EXPECT_EQ(r.syncs().durable_messages, 0u);
  EXPECT_EQ(r.syncs().after_run, 4u);
}

TEST(CommitLogWorkloadConfig, BadConfigurationsAreRefused) {
  testing::TestDir scratch;
  TrafficConfig c = small_workload(Design::Qmq);
  c.message_size = 8;
  EXPECT_THROW(run_traffic(scratch.path(), c), UsageError);
  c = small_workload(Design::Qmq);
  c.messages = 0;
  c.seconds = 0;
  EXPECT_THROW(run_traffic(scratch.path(), c), UsageError);
  c = small_workload(Design::Qmq);
  c.loop = Loop::Open;
  EXPECT_THROW(run_traffic(scratch.path(), c), UsageError);
  c = small_workload(Design::Qmq);
  c.producers = 0;
  EXPECT_THROW(run_traffic(scratch.path(), c), UsageError);
}

TEST(CommitLogWorkloadConfig, AClockedRunCountsItsClockReads) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(Design::Qmq);
  TrafficResult r = run_traffic(scratch.path(), c);
  // One per message at least: the seam the throughput test relies on counts.
  EXPECT_GE(r.message_clock_reads, c.messages);
}

TEST(CommitLogWorkloadConfig, AThroughputRunSendsACountNotADuration) {
  testing::TestDir scratch;
  TrafficConfig c = small_workload(Design::Qmq);
  c.messages = 0;
  c.seconds = 0.05;
  EXPECT_THROW(TrafficRun(scratch.path(), c, Clocking::None), UsageError);
}

TEST(CommitLogWorkloadConfig, ARunNeverProducedStopsAndCloses) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(Design::Kafka);
  {
    TrafficRun run(scratch.path(), c, Clocking::None);
  }  // producers waiting, consumer polling: both stop, the log closes
  TrafficRun again(scratch.path(), c, Clocking::None);  // the same (empty) log, reopened
  TrafficResult r = again.finish();  // finish() without produce() sends nothing
  EXPECT_EQ(r.messages, 0u);
}

TEST(CommitLogWorkloadConfig, DurationBoundRunsStop) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  TrafficConfig c = small_workload(Design::ActiveMq);
  c.messages = 0;
  c.seconds = 0.05;
  c.consumer = false;
  TrafficResult r = run_traffic(scratch.path(), c);
  EXPECT_GT(r.messages, 0u);
  EXPECT_EQ(r.append_latency.count(), r.messages);
  EXPECT_EQ(r.consumed, 0u);
}

}  // namespace
}  // namespace iolab::commitlog
