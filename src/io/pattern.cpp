#include "iolab/io/pattern.h"

#include <xxhash.h>

#include <array>
#include <cstring>
#include <new>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/splitmix.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

// An XXH3 streaming state, reset and freed on every path (createState can fail).
class State {
 public:
  State() : s_(XXH3_createState()) {
    if (s_ == nullptr) throw std::bad_alloc();
    XXH3_64bits_reset(s_);
  }
  ~State() { XXH3_freeState(s_); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  XXH3_state_t* get() { return s_; }

 private:
  XXH3_state_t* s_;
};

}  // namespace

void fill_pattern(std::uint64_t seed, std::uint64_t offset, std::span<std::byte> out) {
  std::size_t i = 0;
  const std::size_t n = out.size();
  // Leading partial word.
  while (i < n && (offset + i) % 8 != 0) {
    std::uint64_t w = splitmix64(seed, (offset + i) / 8);
    out[i] = static_cast<std::byte>(w >> (8 * ((offset + i) % 8)));
    ++i;
  }
  // Whole words (little-endian byte order of each word).
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w = splitmix64(seed, (offset + i) / 8);
    std::memcpy(out.data() + i, &w, 8);
  }
  for (; i < n; ++i) {
    std::uint64_t w = splitmix64(seed, (offset + i) / 8);
    out[i] = static_cast<std::byte>(w >> (8 * ((offset + i) % 8)));
  }
}

bool matches_pattern(std::uint64_t seed, std::uint64_t offset, std::span<const std::byte> data) {
  std::array<std::byte, 64 * 1024> expected;
  for (std::size_t done = 0; done < data.size();) {
    std::size_t n = std::min(expected.size(), data.size() - done);
    fill_pattern(seed, offset + done, std::span(expected.data(), n));
    if (std::memcmp(expected.data(), data.data() + done, n) != 0) return false;
    done += n;
  }
  return true;
}

std::uint64_t pattern_digest(std::uint64_t seed, std::uint64_t offset, std::uint64_t length) {
  State state;
  std::array<std::byte, 64 * 1024> chunk;
  for (std::uint64_t done = 0; done < length;) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), length - done));
    fill_pattern(seed, offset + done, std::span(chunk.data(), n));
    XXH3_64bits_update(state.get(), chunk.data(), n);
    done += n;
  }
  return XXH3_64bits_digest(state.get());
}

std::uint64_t digest(std::span<const std::byte> data) { return XXH3_64bits(data.data(), data.size()); }

std::uint64_t digest_file(const std::filesystem::path& path) {
  sys::Fd fd = sys::open_existing(path, Access::Read);
  State state;
  std::vector<std::byte> chunk(256 * 1024);  // heap: workers may run on small stacks
  IoCounters unused;
  for (;;) {
    std::size_t n = sys::read_full(fd.get(), chunk, path, unused);
    XXH3_64bits_update(state.get(), chunk.data(), n);
    if (n < chunk.size()) break;
  }
  return XXH3_64bits_digest(state.get());
}

}  // namespace iolab::io
