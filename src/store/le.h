// Internal: little-endian loads and stores at unaligned addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace iolab::store::le {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the journal format is little-endian; add byte swaps");

inline std::byte* put32(std::byte* p, std::uint32_t v) noexcept {
  std::memcpy(p, &v, 4);
  return p + 4;
}
inline std::byte* put64(std::byte* p, std::uint64_t v) noexcept {
  std::memcpy(p, &v, 8);
  return p + 8;
}
inline std::uint32_t get32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t get64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace iolab::store::le
