// The frame format: encoding round trips, and every way a frame can be wrong.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/format.h"
#include "iolab/base/crc32c.h"

namespace iolab::commitlog {
namespace {

std::vector<std::byte> frame_of(std::uint64_t seq, std::span<const std::byte> body) {
  std::vector<std::byte> f(frame_size(body.size()));
  encode_frame(f.data(), seq, body);
  return f;
}

TEST(CommitLogFormat, RoundTripsFrames) {
  for (std::uint64_t n : {0ull, 1ull, 7ull, 1000ull}) {
    auto body = testing::message(n);
    auto f = frame_of(n + 1, body);
    Frame out;
    ASSERT_EQ(check_frame(f, n + 1, out), FrameCheck::Valid);
    EXPECT_EQ(out.sequence, n + 1);
    ASSERT_EQ(out.body.size(), body.size());
    EXPECT_EQ(std::memcmp(out.body.data(), body.data(), body.size()), 0);
    EXPECT_EQ(out.size(), f.size());
    FrameHeader h = decode_header(f.data());
    EXPECT_EQ(h.length, body.size());
    EXPECT_EQ(h.sequence, n + 1);
  }
  // An empty body is a valid message.
  auto f = frame_of(5, {});
  Frame out;
  EXPECT_EQ(check_frame(f, 5, out), FrameCheck::Valid);
  EXPECT_TRUE(out.body.empty());
}

TEST(CommitLogFormat, TheCrcIsTheBodysExtendedOverTheHeaderFields) {
  auto body = testing::message(3);
  auto f = frame_of(42, body);
  std::uint32_t crc;
  std::memcpy(&crc, f.data() + 4, 4);
  std::byte fields[12];
  std::uint32_t len = static_cast<std::uint32_t>(body.size());
  std::uint64_t seq = 42;
  std::memcpy(fields, &len, 4);
  std::memcpy(fields + 4, &seq, 8);
  EXPECT_EQ(crc, crc32c(crc32c(body), fields));
  EXPECT_EQ(body_crc(body), crc32c(body));
}

// Frames of every size go through the CRC's three-lane paths (256- and
// 8192-byte blocks, three at a time): each must agree with the plain table.
TEST(CommitLogFormat, BodyCrcMatchesThePortableCrcAtEverySize) {
  std::vector<std::byte> buf(3 * 8192 * 2 + 100);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(testing::mix(i));
  for (std::size_t len : {0u, 7u, 255u, 767u, 768u, 769u, 1024u, 1040u, 4096u, 24575u, 24576u, 24577u, 49249u}) {
    auto s = std::span<const std::byte>(buf).subspan(3, len);
    EXPECT_EQ(body_crc(s), crc32c_portable(0, s)) << len;
    EXPECT_EQ(crc32c(crc32c(s.first(len / 2)), s.subspan(len / 2)), body_crc(s)) << len;
  }
}

TEST(CommitLogFormat, EveryFlippedBitIsCaught) {
  auto body = testing::message(11);
  auto f = frame_of(9, body);
  for (std::size_t byte = 0; byte < f.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      auto g = f;
      g[byte] ^= static_cast<std::byte>(1 << bit);
      Frame out;
      FrameCheck c = check_frame(g, 9, out);
      EXPECT_NE(c, FrameCheck::Valid) << "byte " << byte << " bit " << bit;
    }
}

TEST(CommitLogFormat, NamesWhatIsWrong) {
  auto body = testing::message(1);
  auto f = frame_of(3, body);
  Frame out;
  EXPECT_EQ(check_frame(f, 4, out), FrameCheck::BadSequence);
  EXPECT_EQ(out.sequence, 3u);
  EXPECT_EQ(check_frame(f, 0, out), FrameCheck::Valid);  // 0: any sequence
  // Cut short: the header promises more than the file holds.
  EXPECT_EQ(check_frame(std::span(f).first(f.size() - 1), 3, out), FrameCheck::Truncated);
  EXPECT_EQ(check_frame(std::span(f).first(10), 3, out), FrameCheck::Truncated);
  // Zeros are unwritten space, whatever their length.
  std::vector<std::byte> zeros(64);
  EXPECT_EQ(check_frame(zeros, 3, out), FrameCheck::Unwritten);
  EXPECT_EQ(check_frame(std::span(zeros).first(5), 3, out), FrameCheck::Unwritten);
  EXPECT_EQ(check_frame({}, 3, out), FrameCheck::Unwritten);
  // A length no frame may have.
  auto g = f;
  std::uint32_t huge = kMaxBodySize + 1;
  std::memcpy(g.data(), &huge, 4);
  EXPECT_EQ(check_frame(g, 3, out), FrameCheck::BadLength);
  g = f;
  g[kFrameHeaderSize + 2] ^= std::byte{0x40};
  EXPECT_EQ(check_frame(g, 3, out), FrameCheck::BadCrc);
  for (FrameCheck c : {FrameCheck::Valid, FrameCheck::Unwritten, FrameCheck::Truncated, FrameCheck::BadLength,
                       FrameCheck::BadCrc, FrameCheck::BadSequence})
    EXPECT_FALSE(to_string(c).empty());
}

TEST(CommitLogFormat, SegmentNames) {
  EXPECT_EQ(segment_name(0), "00000000000000000000.log");
  EXPECT_EQ(segment_name(1073741824), "00000000001073741824.log");
  EXPECT_EQ(segment_name(20, ".cq"), "00000000000000000020.cq");
  std::uint64_t base = 1;
  EXPECT_TRUE(parse_segment_name("00000000001073741824.log", base));
  EXPECT_EQ(base, 1073741824u);
  EXPECT_TRUE(parse_segment_name("00000000000000000020.cq", base, ".cq"));
  EXPECT_EQ(base, 20u);
  for (const char* bad : {"0000000000000000000.log", "0000000000000000000x.log", "00000000000000000000.idx",
                          "99999999999999999999.log", "", ".log", "00000000000000000000.log.tmp"})
    EXPECT_FALSE(parse_segment_name(bad, base)) << bad;
}

}  // namespace
}  // namespace iolab::commitlog
