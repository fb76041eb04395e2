// The one clock of iolab's measurements: steady (monotonic, not adjusted),
// read in nanoseconds. Passes, latency samples and per-second series all
// use it, so their figures line up.
#pragma once

#include <chrono>
#include <cstdint>

namespace iolab {

inline std::uint64_t steady_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace iolab
