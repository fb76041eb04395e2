// The validating reader and recovery: torn tails, flipped bytes, holes,
// missing segments, stale frames; and the catch-up readers.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/reader.h"
#include "iolab/base/error.h"
#include "iolab/io/scratch.h"

namespace iolab::commitlog {
namespace {

using testing::message;
using testing::numbers_in;

constexpr std::uint64_t kReaderMessages = 600;

struct Written {
  std::filesystem::path log_dir;
  std::vector<std::pair<std::filesystem::path, std::uint64_t>> frames;  // (segment, offset) of message n
};

// A closed log of kReaderMessages messages 0..n-1 in several 64 KiB segments
// (kafka: pwrite segments, not preallocated, ending at their last frame).
Written write_log(const std::filesystem::path& dir, Design design = Design::Kafka) {
  auto log = open_commit_log(dir, testing::small_options(design));
  for (std::uint64_t n = 0; n < kReaderMessages; ++n) log->append(0, message(n));
  Written w;
  w.log_dir = log->log_dir(0);
  log->close();
  scan_log(w.log_dir, [&](const MessageView& m) {
    w.frames.emplace_back(testing::segment_files(w.log_dir)[m.segment], m.offset);
  });
  return w;
}

std::vector<std::uint64_t> iota(std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

void flip(const std::filesystem::path& file, std::uint64_t offset) {
  auto bytes = testing::read_bytes(file);
  bytes.at(offset) ^= std::byte{0x20};
  testing::write_bytes(file, bytes);
}

TEST(CommitLogReader, ReadsEveryMessageInOrderAcrossSegments) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  LogScan scan;
  EXPECT_EQ(numbers_in(w.log_dir, &scan), iota(kReaderMessages));
  EXPECT_FALSE(scan.damage);
  EXPECT_EQ(scan.messages, kReaderMessages);
  EXPECT_EQ(scan.last_sequence, kReaderMessages);
  EXPECT_GT(scan.segments.size(), 2u) << "the test wants several segments";
  EXPECT_EQ(scan.end_segment, scan.segments.size() - 1);
  std::uint64_t total = 0;
  for (const auto& s : scan.segments) {
    EXPECT_EQ(s.base % (64 * 1024), 0u);
    EXPECT_EQ(s.valid_end, s.file_size);  // pwrite segments end at their last frame
    total += s.messages;
  }
  EXPECT_EQ(total, kReaderMessages);
}

TEST(CommitLogReader, TornTailIsReportedAndCutOnReopen) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  auto [last_segment, last_offset] = w.frames.back();
  std::filesystem::resize_file(last_segment, std::filesystem::file_size(last_segment) - 10);

  LogScan scan;
  EXPECT_EQ(numbers_in(w.log_dir, &scan), iota(kReaderMessages - 1));
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->check, FrameCheck::Truncated);
  EXPECT_EQ(scan.damage->at.offset, last_offset);
  EXPECT_EQ(scan.damage->expected_sequence, kReaderMessages);
  EXPECT_TRUE(scan.damage->torn_tail());
  EXPECT_NE(scan.damage->describe().find("torn tail"), std::string::npos);

  // Refuse still cuts a torn tail: it is what a crash mid-append leaves.
  Options o = testing::small_options(Design::Kafka);
  o.recovery = Recovery::Refuse;
  auto log = open_commit_log(scratch.path(), o);
  ASSERT_EQ(log->open_report().logs.size(), 1u);
  const LogRecovery& rec = log->open_report().logs[0];
  EXPECT_TRUE(rec.damage && rec.damage->torn_tail());
  EXPECT_EQ(rec.messages, kReaderMessages - 1);
  EXPECT_GT(rec.truncated_bytes, 0u);
  EXPECT_EQ(std::filesystem::file_size(last_segment), last_offset);
  Ack a = log->append(0, message(kReaderMessages - 1));
  EXPECT_EQ(a.first_sequence, kReaderMessages);
  log->close();
  EXPECT_EQ(numbers_in(w.log_dir), iota(kReaderMessages));
}

TEST(CommitLogReader, FlippedByteMidSegmentStopsTheReaderAtItsOffset) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  const std::uint64_t bad = 40;  // in the first segment, with valid frames after it
  auto [segment, offset] = w.frames[bad];
  ASSERT_EQ(segment, w.frames[bad + 1].first);
  flip(segment, offset + kFrameHeaderSize + 3);

  LogScan scan;
  auto got = numbers_in(w.log_dir, &scan);
  EXPECT_EQ(got, iota(bad)) << "nothing after the damage is returned";
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->check, FrameCheck::BadCrc);
  EXPECT_EQ(scan.damage->at.segment, segment);
  EXPECT_EQ(scan.damage->at.offset, offset);
  EXPECT_EQ(scan.damage->expected_sequence, bad + 1);
  ASSERT_TRUE(scan.damage->next_valid);
  EXPECT_FALSE(scan.damage->torn_tail());
  EXPECT_EQ(scan.damage->next_valid->sequence, bad + 2);
  EXPECT_EQ(scan.damage->next_valid->offset, w.frames[bad + 1].second);
  std::string text = scan.damage->describe();
  EXPECT_NE(text.find("offset " + std::to_string(offset)), std::string::npos) << text;
  EXPECT_NE(text.find("CRC32C"), std::string::npos) << text;

  // Refuse: open fails, naming the offset; nothing is changed.
  Options o = testing::small_options(Design::Kafka);
  o.recovery = Recovery::Refuse;
  try {
    open_commit_log(scratch.path(), o);
    ADD_FAILURE() << "open should refuse mid-log damage";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(offset)), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::segment_files(w.log_dir).size(), scan.segments.size());

  // Truncate (the default, Kafka's and RocketMQ's way): everything from the
  // damage on goes, later segments too; appending continues after it.
  auto log = open_commit_log(scratch.path(), testing::small_options(Design::Kafka));
  const LogRecovery& rec = log->open_report().logs[0];
  ASSERT_TRUE(rec.damage);
  EXPECT_EQ(rec.damage->at.offset, offset);
  EXPECT_EQ(rec.messages, bad);
  EXPECT_EQ(rec.removed_segments, scan.segments.size() - 1);
  EXPECT_EQ(log->append(0, message(bad)).first_sequence, bad + 1);
  log->close();
  EXPECT_EQ(numbers_in(w.log_dir), iota(bad + 1));
}

TEST(CommitLogReader, ZeroedFrameBeforeValidOnesIsDamageNotTheEnd) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  const std::uint64_t hole = 10;
  auto [segment, offset] = w.frames[hole];
  auto bytes = testing::read_bytes(segment);
  std::memset(bytes.data() + offset, 0, frame_size(message(hole).size()));
  testing::write_bytes(segment, bytes);
  LogScan scan;
  EXPECT_EQ(numbers_in(w.log_dir, &scan), iota(hole));
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->check, FrameCheck::Unwritten);
  EXPECT_EQ(scan.damage->at.offset, offset);
  ASSERT_TRUE(scan.damage->next_valid);
  EXPECT_EQ(scan.damage->next_valid->sequence, hole + 2);
}

TEST(CommitLogReader, MissingSegmentIsASequenceGap) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  auto files = testing::segment_files(w.log_dir);
  ASSERT_GE(files.size(), 3u);
  std::filesystem::remove(files[1]);
  LogScan scan;
  auto got = numbers_in(w.log_dir, &scan);
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->check, FrameCheck::BadSequence);
  EXPECT_EQ(scan.damage->at.segment, files[2]);
  EXPECT_EQ(scan.damage->at.offset, 0u);
  EXPECT_EQ(scan.damage->expected_sequence, got.size() + 1);
  EXPECT_GT(scan.damage->at.sequence, got.size() + 1);
  EXPECT_EQ(got, iota(got.size()));
  EXPECT_EQ(scan.end_segment, 0u);
}

TEST(CommitLogReader, StaleFrameAfterTheEndIsCut) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  // A frame of an old sequence number right after the last one: what reusing
  // a file without zeroing it could leave behind.
  auto [segment, offset] = w.frames[3];
  auto bytes = testing::read_bytes(segment);
  std::vector<std::byte> stale(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                               bytes.begin() + static_cast<std::ptrdiff_t>(offset + frame_size(message(3).size())));
  auto last = testing::segment_files(w.log_dir).back();
  auto tail = testing::read_bytes(last);
  tail.insert(tail.end(), stale.begin(), stale.end());
  testing::write_bytes(last, tail);
  LogScan scan;
  EXPECT_EQ(numbers_in(w.log_dir, &scan), iota(kReaderMessages));
  ASSERT_TRUE(scan.damage);
  EXPECT_EQ(scan.damage->check, FrameCheck::BadSequence);
  EXPECT_EQ(scan.damage->at.sequence, 4u);
  EXPECT_TRUE(scan.damage->torn_tail());
  auto log = open_commit_log(scratch.path(), testing::small_options(Design::Kafka));
  EXPECT_EQ(log->open_report().logs[0].truncated_bytes, stale.size());
  log->close();
  LogScan again;
  numbers_in(w.log_dir, &again);
  EXPECT_FALSE(again.damage);
}

TEST(CommitLogReader, GarbageInPreallocatedSpaceIsZeroedOnReopen) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path(), Design::RocketMq);
  auto last = testing::segment_files(w.log_dir).back();
  LogScan scan;
  numbers_in(w.log_dir, &scan);
  ASSERT_FALSE(scan.damage);
  std::uint64_t end = scan.segments.back().valid_end;
  EXPECT_EQ(scan.segments.back().file_size, 64u * 1024);  // preallocated
  auto bytes = testing::read_bytes(last);
  for (std::uint64_t i = end; i < end + 100; ++i) bytes[i] = std::byte{0x5A};
  testing::write_bytes(last, bytes);
  auto log = open_commit_log(scratch.path(), testing::small_options(Design::RocketMq));
  EXPECT_TRUE(log->open_report().logs[0].damage);
  log->close();
  bytes = testing::read_bytes(last);
  ASSERT_EQ(bytes.size(), 64u * 1024);
  for (std::uint64_t i = end; i < bytes.size(); ++i) ASSERT_EQ(bytes[i], std::byte{0}) << i;
  EXPECT_EQ(numbers_in(w.log_dir), iota(kReaderMessages));
}

TEST(CommitLogReader, RefusesADirectoryThatIsNotALog) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  testing::write_bytes(w.log_dir / "notes.txt", testing::message(1));
  EXPECT_THROW(scan_log(w.log_dir), Error);
  EXPECT_THROW(open_commit_log(scratch.path(), testing::small_options(Design::Kafka)), Error);
  // Removing the log leaves the file it did not make.
  remove_log_files(scratch.path());
  EXPECT_TRUE(std::filesystem::exists(w.log_dir / "notes.txt"));
  EXPECT_TRUE(testing::segment_files(w.log_dir).empty());
  std::filesystem::remove(w.log_dir / "notes.txt");
}

TEST(CommitLogReader, CatchUpReadsTheWholeLogThroughEveryPath) {
  testing::TestDir scratch;
  Written w = write_log(scratch.path());
  LogScan scan = scan_log(w.log_dir);
  std::vector<std::filesystem::path> dirs{w.log_dir};
  for (ReadPath path : kAllReadPaths)
    for (bool cold : {false, true}) {
      SCOPED_TRACE(std::string(to_string(path)) + (cold ? " cold" : " warm"));
      CatchUpResult r = catch_up(dirs, path, cold);
      EXPECT_EQ(r.messages, kReaderMessages);
      std::uint64_t frames = 0;
      for (const auto& s : scan.segments) frames += s.valid_end;
      EXPECT_EQ(r.bytes, frames);
      EXPECT_GT(r.calls + (path == ReadPath::Mmap ? 1 : 0), 0u);
      EXPECT_GE(r.resident_before, 0.0);
      EXPECT_LE(r.resident_before, 1.0);
      if (!cold) {
        EXPECT_GT(r.resident_before, 0.5);
      }
    }
  // A corrupt log is an error naming the segment, never silently short.
  auto [segment, offset] = w.frames[100];
  flip(segment, offset + kFrameHeaderSize);
  for (ReadPath path : kAllReadPaths) EXPECT_THROW(catch_up(dirs, path, false), Error) << to_string(path);
}

TEST(CommitLogReader, ReadPathNames) {
  for (ReadPath p : kAllReadPaths) EXPECT_EQ(parse_read_path(to_string(p)), p);
  EXPECT_THROW(parse_read_path("splice"), UsageError);
}

}  // namespace
}  // namespace iolab::commitlog
