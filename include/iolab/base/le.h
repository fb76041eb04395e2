// Little-endian loads and stores at unaligned addresses: the one codec of the
// on-disk formats (the store's journal, the commit log's frames and indexes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace iolab::le {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the on-disk formats are little-endian; add byte swaps");

// An integer of type T at `p`, and T stored at `p` (returns the byte after it).
template <typename T>
  requires std::is_integral_v<T>
T load(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
  requires std::is_integral_v<T>
std::byte* store(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
  return p + sizeof v;
}

inline std::byte* put32(std::byte* p, std::uint32_t v) noexcept { return store(p, v); }
inline std::byte* put64(std::byte* p, std::uint64_t v) noexcept { return store(p, v); }
inline std::uint32_t get32(const std::byte* p) noexcept { return load<std::uint32_t>(p); }
inline std::uint64_t get64(const std::byte* p) noexcept { return load<std::uint64_t>(p); }

}  // namespace iolab::le
