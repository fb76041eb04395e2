// Deterministic test data for the store's tests and bench/crash_states (no
// gtest here, so the explorer can use it).
#pragma once

#include <cstdint>
#include <string>

#include "iolab/store/employee.h"

namespace iolab::testing {

// splitmix64: a cheap, good-enough generator (mt19937's 2.5 KB state made
// building thousands of records slow under ASan).
struct SplitMix {
  std::uint64_t x;
  std::uint64_t operator()() {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// An employee whose size varies widely: one in `long_one_in` has a comment
// of long_min + [0, long_span) bytes, the others [0, short_max); the
// comment ends with " v<version>".
template <typename Rng>
store::Employee random_employee(const std::string& key, std::uint64_t version, Rng& rng, std::uint64_t long_one_in,
                         std::uint64_t long_min, std::uint64_t long_span, std::uint64_t short_max) {
  store::Employee e;
  e.last = key;
  e.first = "First" + std::to_string(rng() % 1000);
  e.id = static_cast<std::int32_t>(rng());
  e.zip = static_cast<std::int32_t>(rng() % 100000);
  e.employed = (rng() & 1) != 0;
  std::uint64_t n = rng() % long_one_in == 0 ? long_min + rng() % long_span : rng() % short_max;
  e.comments.assign(n, static_cast<char>('a' + rng() % 26));
  e.comments += " v" + std::to_string(version);
  return e;
}

}  // namespace iolab::testing
