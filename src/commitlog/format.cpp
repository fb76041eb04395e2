#include "iolab/commitlog/format.h"
#include "iolab/base/names.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "iolab/base/crc32c.h"
#include "iolab/base/le.h"

namespace iolab::commitlog {
namespace {

constexpr std::size_t kSegmentDigits = 20;

}  // namespace

std::uint32_t body_crc(std::span<const std::byte> body) noexcept { return crc32c(body); }

std::uint32_t frame_crc(std::uint32_t crc_of_body, std::uint32_t length, std::uint64_t sequence) noexcept {
  std::byte fields[12];
  le::store(fields, length);
  le::store(fields + 4, sequence);
  return crc32c(crc_of_body, fields);
}

void encode_header(std::byte* out, std::uint32_t body_size, std::uint32_t crc_of_body,
                   std::uint64_t sequence) noexcept {
  le::store(out, body_size);
  le::store(out + 4, frame_crc(crc_of_body, body_size, sequence));
  le::store(out + 8, sequence);
}

void encode_frame(std::byte* out, std::uint64_t sequence, std::span<const std::byte> body) noexcept {
  auto length = static_cast<std::uint32_t>(body.size());
  encode_header(out, length, body_crc(body), sequence);
  if (!body.empty()) std::memcpy(out + kFrameHeaderSize, body.data(), body.size());
}

FrameHeader decode_header(const std::byte* in) noexcept {
  return FrameHeader{le::load<std::uint32_t>(in), le::load<std::uint32_t>(in + 4), le::load<std::uint64_t>(in + 8)};
}

namespace {
constexpr NameTable<FrameCheck, 6> kFrameChecks{
    {{FrameCheck::Valid, "valid"}, {FrameCheck::Unwritten, "unwritten"},
     {FrameCheck::Truncated, "frame runs past the end of the file"}, {FrameCheck::BadLength, "length too large"},
     {FrameCheck::BadCrc, "CRC32C mismatch"}, {FrameCheck::BadSequence, "unexpected sequence number"}}};
}  // namespace

std::string_view to_string(FrameCheck c) noexcept { return name_of(kFrameChecks, c); }

FrameCheck check_frame(std::span<const std::byte> bytes, std::uint64_t expected_sequence, Frame& frame) noexcept {
  if (bytes.size() < kFrameHeaderSize) {
    bool zero = std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
    return zero ? FrameCheck::Unwritten : FrameCheck::Truncated;
  }
  FrameHeader h = decode_header(bytes.data());
  // A zero sequence is never written: this is preallocated (or zero-filled) space.
  if (h.sequence == 0 && h.length == 0 && h.crc == 0) return FrameCheck::Unwritten;
  if (h.length > kMaxBodySize) return FrameCheck::BadLength;
  if (h.length > bytes.size() - kFrameHeaderSize) return FrameCheck::Truncated;
  auto body = bytes.subspan(kFrameHeaderSize, h.length);
  if (frame_crc(body_crc(body), h.length, h.sequence) != h.crc) return FrameCheck::BadCrc;
  frame.sequence = h.sequence;
  frame.body = body;
  if (expected_sequence != 0 && h.sequence != expected_sequence) return FrameCheck::BadSequence;
  return FrameCheck::Valid;
}

std::string segment_name(std::uint64_t base_position, std::string_view suffix) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(base_position));
  return std::string(buf) + std::string(suffix);
}

bool parse_segment_name(std::string_view name, std::uint64_t& base_position, std::string_view suffix) noexcept {
  if (name.size() != kSegmentDigits + suffix.size() || !name.ends_with(suffix)) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < kSegmentDigits; ++i) {
    char c = name[i];
    if (c < '0' || c > '9') return false;
    std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  base_position = v;
  return true;
}

}  // namespace iolab::commitlog
