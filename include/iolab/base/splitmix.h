// splitmix64 (Steele, Lea and Flood): a fast, well-mixed 64-bit function of
// a seed and an index, for data that must not compress and streams that
// must be independent, each value computable on its own.
#pragma once

#include <cstdint>

namespace iolab {

inline std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace iolab
