// Every design behind the CommitLog interface: what it writes reads back,
// survives a reopen, is acknowledged at the promised level, can be tailed,
// found and indexed; bad input is refused without breaking the log.
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/consumer.h"
#include "iolab/base/error.h"

namespace iolab::commitlog {
namespace {

using testing::message;

constexpr std::uint32_t kDesignTopics = 3;
constexpr std::uint64_t kDesignMessages = 1500;  // ~130 KiB per topic: rolls 64 KiB segments

// Messages [from, to) go round robin over the topics; a batching design
// (kafka) gets each topic's messages in runs of 1 to 4 per append.
void append_range(CommitLog& log, std::uint64_t from, std::uint64_t to, std::uint32_t topics = kDesignTopics) {
  const DesignTraits t = traits(log.options().design);
  std::map<std::uint32_t, std::vector<std::vector<std::byte>>> pending;
  auto send = [&](std::uint32_t topic) {
    auto& bodies = pending[topic];
    std::vector<std::span<const std::byte>> spans(bodies.begin(), bodies.end());
    Ack a = log.append(topic, spans);
    EXPECT_EQ(a.count, bodies.size());
    EXPECT_EQ(a.level, t.ack);
    EXPECT_EQ(a.log, log.log_of(topic));
    bodies.clear();
  };
  for (std::uint64_t n = from; n < to; ++n) {
    std::uint32_t topic = testing::topic_of(n, topics);
    pending[topic].push_back(message(n));
    if (!t.batches || pending[topic].size() >= 1 + n % 4) send(topic);
  }
  for (auto& [topic, bodies] : pending)
    if (!bodies.empty()) send(topic);
}

// Message numbers per log, in log order, as append_range wrote them (the
// order of a shared log interleaves topics exactly as the appends did).
std::map<std::uint32_t, std::vector<std::uint64_t>> sorted_per_topic(
    const std::map<std::uint32_t, std::vector<std::uint64_t>>& got, std::uint32_t topics) {
  std::map<std::uint32_t, std::vector<std::uint64_t>> out;
  for (const auto& [log, numbers] : got)
    for (std::uint64_t n : numbers) out[testing::topic_of(n, topics)].push_back(n);
  return out;
}

std::vector<std::uint64_t> topic_numbers(std::uint32_t topic, std::uint64_t count, std::uint32_t topics = kDesignTopics) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t n = topic; n < count; n += topics) v.push_back(n);
  return v;
}

class CommitLogDesign : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogDesign, ReadsBackWhatItWroteAcrossRollsAndReopens) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  Options o = testing::small_options(GetParam(), kDesignTopics);
  {
    auto log = open_commit_log(scratch.path(), o);
    EXPECT_EQ(log->log_count(), traits(GetParam()).log_per_topic ? kDesignTopics : 1u);
    append_range(*log, 0, kDesignMessages);
    log->close();
    Stats s = log->stats();
    EXPECT_EQ(s.messages, kDesignMessages);
    EXPECT_GT(s.rolls, 0u) << "64 KiB segments should roll";
    EXPECT_GT(s.flushes, 0u) << "close syncs what was appended";
  }
  auto log = open_commit_log(scratch.path(), o);
  for (const auto& rec : log->open_report().logs) EXPECT_FALSE(rec.damage) << rec.dir;
  auto got = testing::numbers_in(*log);
  auto per_topic = sorted_per_topic(got, kDesignTopics);
  for (std::uint32_t t = 0; t < kDesignTopics; ++t) EXPECT_EQ(per_topic[t], topic_numbers(t, kDesignMessages)) << "topic " << t;
  for (std::uint32_t l = 0; l < log->log_count(); ++l) {
    LogPositions p = log->positions(l);
    EXPECT_EQ(p.written, got[l].size());
    EXPECT_EQ(p.durable, p.written) << "a reopened log is synced";
  }
  append_range(*log, kDesignMessages, kDesignMessages + 100);
  log->close();
  per_topic = sorted_per_topic(testing::numbers_in(*log), kDesignTopics);
  for (std::uint32_t t = 0; t < kDesignTopics; ++t) EXPECT_EQ(per_topic[t], topic_numbers(t, kDesignMessages + 100));
}

TEST_P(CommitLogDesign, AcknowledgesAtItsLevel) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam()));
  for (std::uint64_t n = 0; n < 50; ++n) {
    Ack a = log->append(0, message(n));
    LogPositions p = log->positions(a.log);
    EXPECT_GE(p.written, a.first_sequence);
    switch (a.level) {
      case AckLevel::Durable:
        EXPECT_GE(p.durable, a.first_sequence);
        [[fallthrough]];
      case AckLevel::Written: EXPECT_GE(p.committed, a.first_sequence); break;
      case AckLevel::Buffered: break;
    }
    EXPECT_LE(p.durable, p.committed);
    EXPECT_LE(p.committed, p.written);
  }
  log->close();
  LogPositions p = log->positions(0);
  EXPECT_EQ(p.durable, 50u) << "close makes everything durable";
}

TEST_P(CommitLogDesign, TailingConsumerReadsEveryMessageThroughEveryPath) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam(), kDesignTopics));
  std::vector<std::unique_ptr<TailingConsumer>> consumers;
  for (ReadPath path : kAllReadPaths) consumers.push_back(std::make_unique<TailingConsumer>(*log, path));
  std::vector<std::map<std::uint32_t, std::vector<std::uint64_t>>> seen(consumers.size());
  auto visitor = [&](std::size_t i) {
    return [&, i](std::uint32_t l, const Frame& f) { seen[i][l].push_back(testing::message_number(f.body)); };
  };
  auto poll_all = [&] {
    for (std::size_t i = 0; i < consumers.size(); ++i) consumers[i]->poll(visitor(i));
  };
  // Read along while writing, across several rolls.
  for (std::uint64_t from = 0; from < kDesignMessages; from += 150) {
    append_range(*log, from, from + 150);
    poll_all();
  }
  // Whatever a commit thread still held becomes visible within its interval.
  for (int i = 0; i < 2000 && consumers[0]->consumed() < kDesignMessages; ++i) {
    consumers[0]->poll_wait(std::chrono::milliseconds(5), visitor(0));
    poll_all();
  }
  poll_all();
  auto in_files = testing::numbers_in(*log);
  for (std::size_t i = 0; i < consumers.size(); ++i) {
    SCOPED_TRACE(std::string(to_string(kAllReadPaths[i])));
    EXPECT_EQ(consumers[i]->consumed(), kDesignMessages);
    for (std::uint32_t l = 0; l < log->log_count(); ++l) EXPECT_EQ(seen[i][l], in_files[l]);
  }
  consumers.clear();
  log->close();
}

TEST_P(CommitLogDesign, FindsMessagesBySequence) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam()));
  append_range(*log, 0, kDesignMessages, 1);
  log->close();
  auto reopened = open_commit_log(scratch.path(), testing::small_options(GetParam()));
  LogScan scan = scan_log(reopened->log_dir(0));
  std::map<std::uint64_t, std::uint64_t> expected_pos;  // sequence -> log position
  scan_log(reopened->log_dir(0), [&](const MessageView& m) {
    expected_pos[m.sequence] = scan.segments[m.segment].base + m.offset;
  });
  for (std::uint64_t seq : {1ull, 2ull, 77ull, 300ull, 699ull, 700ull}) {
    auto found = reopened->find(0, seq);
    ASSERT_TRUE(found) << seq;
    EXPECT_EQ(*found, expected_pos.at(seq)) << seq;
  }
  EXPECT_FALSE(reopened->find(0, 0));
  EXPECT_FALSE(reopened->find(0, kDesignMessages + 1));
  reopened->close();
}

TEST_P(CommitLogDesign, TopicIndexPointsAtTheTopicsFrames) {
  if (!traits(GetParam()).topic_index) GTEST_SKIP() << "no per-topic index in this design";
  testing::TestDir scratch(testing::fast_scratch_parent());
  Options o = testing::small_options(GetParam(), kDesignTopics);
  auto log = open_commit_log(scratch.path(), o);
  append_range(*log, 0, kDesignMessages);
  log->close();
  auto reopened = open_commit_log(scratch.path(), o);
  EXPECT_EQ(reopened->open_report().index_entries_dropped, 0u);
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>> frame_at;  // position -> (number, size)
  LogScan scan = scan_log(reopened->log_dir(0));
  scan_log(reopened->log_dir(0), [&](const MessageView& m) {
    frame_at[scan.segments[m.segment].base + m.offset] = {testing::message_number(m.body),
                                                           static_cast<std::uint32_t>(frame_size(m.body.size()))};
  });
  for (std::uint32_t t = 0; t < kDesignTopics; ++t) {
    auto entries = reopened->topic_index(t);
    std::vector<std::uint64_t> numbers;
    for (auto [pos, size] : entries) {
      auto it = frame_at.find(pos);
      ASSERT_NE(it, frame_at.end()) << "entry points between frames: " << pos;
      EXPECT_EQ(it->second.second, size);
      numbers.push_back(it->second.first);
    }
    EXPECT_EQ(numbers, topic_numbers(t, kDesignMessages)) << "topic " << t;
  }
  reopened->close();
}

// Options::indexes off (the bare mechanism issue 45 measures): no index
// file anywhere under the log, every message reads back, and a message is
// still found by its sequence, by scanning.
TEST_P(CommitLogDesign, WithoutIndexesWritesNoIndexFileAndStillReadsAndFinds) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  Options o = testing::small_options(GetParam(), 1);
  o.indexes = false;
  auto log = open_commit_log(scratch.path(), o);
  append_range(*log, 0, kDesignMessages, 1);
  log->close();
  for (const auto& e : std::filesystem::recursive_directory_iterator(scratch.path())) {
    EXPECT_NE(e.path().extension(), ".index") << e.path();
    EXPECT_NE(e.path().filename(), "index") << e.path();
  }
  auto reopened = open_commit_log(scratch.path(), o);
  EXPECT_TRUE(reopened->topic_index(0).empty());
  EXPECT_EQ(sorted_per_topic(testing::numbers_in(*reopened), 1)[0], topic_numbers(0, kDesignMessages, 1));
  EXPECT_TRUE(reopened->find(0, 700).has_value());
  reopened->close();
}

TEST_P(CommitLogDesign, RefusesBadInputAndStaysUsable) {
  testing::TestDir scratch;
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam()));
  std::vector<std::byte> too_big(64 * 1024);
  EXPECT_THROW(log->append(0, too_big), Error);
  EXPECT_THROW(log->append(1, message(0)), Error);  // one topic only
  EXPECT_THROW(log->append(0, std::span<const std::span<const std::byte>>{}), Error);
  EXPECT_EQ(log->append(0, message(0)).first_sequence, 1u);
  log->close();
  log->close();  // twice is harmless
  EXPECT_EQ(testing::numbers_in(log->log_dir(0)), std::vector<std::uint64_t>{0});
}

// A producer batch laid out as frames (append_framed): the log writes each
// header into its room in the caller's buffer, and the log holds the same
// frames a plain append of the bodies writes, across rolls; sizes that do
// not fill the buffer are refused and the log stays usable.
TEST_P(CommitLogDesign, AFramedBatchIsWrittenAsThePlainAppendWouldWriteIt) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam()));
  std::uint64_t next = 0;
  for (std::size_t batch : {1u, 3u, 40u, 7u, 120u}) {  // 120 messages cross a 64 KiB segment
    std::vector<std::byte> frames;
    std::vector<std::uint32_t> sizes;
    for (std::size_t i = 0; i < batch; ++i) {
      auto body = message(next++);
      frames.resize(frames.size() + kFrameHeaderSize);
      frames.insert(frames.end(), body.begin(), body.end());
      sizes.push_back(static_cast<std::uint32_t>(body.size()));
    }
    Ack a = log->append_framed(0, frames, sizes);
    EXPECT_EQ(a.count, batch);
    // The first header now in the caller's buffer: its body's length and the batch's first sequence.
    Frame f;
    ASSERT_EQ(check_frame(frames, 0, f), FrameCheck::Valid);
    EXPECT_EQ(f.sequence, a.first_sequence);
  }
  std::vector<std::byte> frames(kFrameHeaderSize + 10);
  const std::uint32_t too_long[] = {11};
  EXPECT_THROW(log->append_framed(0, frames, too_long), Error);
  const std::uint32_t too_short[] = {9};
  EXPECT_THROW(log->append_framed(0, frames, too_short), Error);
  log->append(0, message(next++));
  log->close();
  std::vector<std::uint64_t> expected(next);
  std::iota(expected.begin(), expected.end(), 0u);
  EXPECT_EQ(testing::numbers_in(log->log_dir(0)), expected);
}

TEST_P(CommitLogDesign, AppendsFromManyThreads) {
  testing::TestDir scratch(testing::fast_scratch_parent());
  auto log = open_commit_log(scratch.path(), testing::small_options(GetParam(), 2));
  constexpr unsigned kThreads = 4;
  constexpr std::uint64_t kEach = 150;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < kEach; ++i) log->append(t % 2, message(t * 1000 + i));
    });
  for (auto& th : threads) th.join();
  log->close();
  std::map<unsigned, std::vector<std::uint64_t>> per_thread;
  for (const auto& [l, numbers] : testing::numbers_in(*log))
    for (std::uint64_t n : numbers) per_thread[static_cast<unsigned>(n / 1000)].push_back(n % 1000);
  for (unsigned t = 0; t < kThreads; ++t) {
    std::vector<std::uint64_t> want(kEach);
    for (std::uint64_t i = 0; i < kEach; ++i) want[i] = i;
    EXPECT_EQ(per_thread[t], want) << "thread " << t << "'s messages, in its order";
  }
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, CommitLogDesign, ::testing::ValuesIn(kAllDesigns), testing::test_name);

TEST(CommitLogOptions, BadOptionsAndLayoutsAreRefused) {
  testing::TestDir scratch;
  Options o = testing::small_options(Design::Qmq);
  o.segment_size = 1000;
  EXPECT_THROW(open_commit_log(scratch.path(), o), UsageError);
  o = testing::small_options(Design::Qmq);
  o.topics = 0;
  EXPECT_THROW(open_commit_log(scratch.path(), o), UsageError);
  EXPECT_THROW(open_commit_log(scratch.path() / "missing", testing::small_options(Design::Qmq)), Error);
  open_commit_log(scratch.path(), testing::small_options(Design::Qmq))->close();
  // A shared log's directory is not a kafka one.
  EXPECT_THROW(open_commit_log(scratch.path(), testing::small_options(Design::Kafka)), Error);
  // The shared designs read each other's logs (one format, one layout).
  auto other = open_commit_log(scratch.path(), testing::small_options(Design::RocketMq));
  other->append(0, message(1));
  other->close();
}

TEST(CommitLogOptions, DesignNamesAndTraits) {
  for (Design d : kAllDesigns) {
    EXPECT_EQ(parse_design(to_string(d)), d);
    EXPECT_FALSE(describe(d).empty());
  }
  EXPECT_THROW(parse_design("pulsar"), UsageError);
  EXPECT_TRUE(traits(Design::Kafka).log_per_topic);
  EXPECT_EQ(traits(Design::GroupCommit).ack, AckLevel::Durable);
  EXPECT_EQ(traits(Design::RocketMqTransient).ack, AckLevel::Buffered);
  EXPECT_TRUE(traits(Design::RocketMq).writes_through_map);
}

}  // namespace
}  // namespace iolab::commitlog
