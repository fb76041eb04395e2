// The commit log's message format (docs/commitlog.md): frames of
// length, CRC32C, sequence number and body, appended to segment files.
//
// Everything here works on bytes already in memory and never trusts a length
// it has not checked: the readers (reader.h) and the fuzz target drive it with
// arbitrary input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iolab::commitlog {

// Frame header, little-endian: body length (4), CRC32C (4), sequence (8).
inline constexpr std::size_t kFrameHeaderSize = 16;
// Largest body a frame may carry (the workloads go up to 1 MiB).
inline constexpr std::uint32_t kMaxBodySize = 16u << 20;
// Sequence numbers start here; 0 marks never-written (zeroed) space.
inline constexpr std::uint64_t kFirstSequence = 1;

constexpr std::uint64_t frame_size(std::uint64_t body_size) noexcept { return kFrameHeaderSize + body_size; }

// CRC32C of the body alone: what a producer computes before it has a sequence number.
std::uint32_t body_crc(std::span<const std::byte> body) noexcept;
// The frame's CRC: the body's CRC extended over the length and sequence
// fields, so a flipped bit anywhere in the frame fails the check.
std::uint32_t frame_crc(std::uint32_t body_crc, std::uint32_t length, std::uint64_t sequence) noexcept;

// Writes a frame header for `body_size` bytes whose body CRC is `crc_of_body`.
void encode_header(std::byte* out, std::uint32_t body_size, std::uint32_t crc_of_body,
                   std::uint64_t sequence) noexcept;
// Writes a whole frame (header then body) to out[0 .. frame_size(body.size())).
void encode_frame(std::byte* out, std::uint64_t sequence, std::span<const std::byte> body) noexcept;

struct FrameHeader {
  std::uint32_t length = 0;
  std::uint32_t crc = 0;
  std::uint64_t sequence = 0;
};
FrameHeader decode_header(const std::byte* in) noexcept;

// What is at a position of a segment.
enum class FrameCheck {
  Valid,
  Unwritten,   // no frame: the end of the data (end of file, or a zeroed header in preallocated space)
  Truncated,   // a frame header whose frame runs past the end of the file
  BadLength,   // length above kMaxBodySize
  BadCrc,      // the CRC does not match the frame's bytes
  BadSequence, // a valid frame, but not the sequence number expected here
};
std::string_view to_string(FrameCheck c) noexcept;

struct Frame {
  std::uint64_t sequence = 0;
  std::span<const std::byte> body;
  std::size_t size() const noexcept { return kFrameHeaderSize + body.size(); }
};

// Checks the frame at the start of `bytes`, which hold everything from there
// to the end of the segment file. `expected_sequence` 0 accepts any sequence.
// Valid fills `frame`; Truncated means the bytes end inside the frame.
FrameCheck check_frame(std::span<const std::byte> bytes, std::uint64_t expected_sequence, Frame& frame) noexcept;

// Segment files are named by the log position of their first byte: 20
// decimal digits, then ".log" (RocketMQ's naming; Kafka names by offset).
// Index files use the same digits with their own suffix.
std::string segment_name(std::uint64_t base_position, std::string_view suffix = ".log");
// The number in a file name of that form, or false when `name` is not one.
bool parse_segment_name(std::string_view name, std::uint64_t& base_position,
                        std::string_view suffix = ".log") noexcept;

}  // namespace iolab::commitlog
