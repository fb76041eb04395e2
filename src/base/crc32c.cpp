#include "iolab/base/crc32c.h"

#include <array>
#include <cstring>
#include <nmmintrin.h>

namespace iolab {
namespace {

constexpr std::uint32_t kPolyReflected = 0x82F63B78u;

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPolyReflected : 0u);
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  return t;
}
constexpr auto kTables = make_tables();

std::uint32_t crc_table(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    w ^= crc;  // little-endian: the CRC lines up with the first four bytes
    crc = kTables[7][w & 0xFF] ^ kTables[6][(w >> 8) & 0xFF] ^ kTables[5][(w >> 16) & 0xFF] ^
          kTables[4][(w >> 24) & 0xFF] ^ kTables[3][(w >> 32) & 0xFF] ^ kTables[2][(w >> 40) & 0xFF] ^
          kTables[1][(w >> 48) & 0xFF] ^ kTables[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFFu];
  return crc;
}

// Appending n zero bytes to a CRC register is a linear map; Shift holds it
// as four byte-lookup tables, so three CRCs of adjacent blocks computed side
// by side (the crc32 instruction's latency is three times its throughput)
// can be joined: crc(A B) = shift_|B|(crc(A)) ^ crc(B), B started from 0.
struct Shift {
  std::array<std::array<std::uint32_t, 256>, 4> table{};

  explicit Shift(std::size_t zero_bytes) {
    // The map as 32 columns (the image of each register bit): one zero bit
    // first, squared up to a byte, then combined bit by bit of the length.
    using Matrix = std::array<std::uint32_t, 32>;
    auto apply = [](const Matrix& m, std::uint32_t v) {
      std::uint32_t r = 0;
      for (unsigned i = 0; v != 0; ++i, v >>= 1)
        if (v & 1u) r ^= m[i];
      return r;
    };
    auto compose = [&](const Matrix& a, const Matrix& b) {  // a after b
      Matrix r{};
      for (unsigned i = 0; i < 32; ++i) r[i] = apply(a, b[i]);
      return r;
    };
    Matrix step{};
    step[0] = kPolyReflected;
    for (unsigned i = 1; i < 32; ++i) step[i] = 1u << (i - 1);
    for (int i = 0; i < 3; ++i) step = compose(step, step);  // one byte
    Matrix op{};
    for (unsigned i = 0; i < 32; ++i) op[i] = 1u << i;  // identity
    for (std::size_t n = zero_bytes; n != 0; n >>= 1) {
      if (n & 1u) op = compose(step, op);
      step = compose(step, step);
    }
    for (unsigned k = 0; k < 4; ++k)
      for (std::uint32_t b = 0; b < 256; ++b) table[k][b] = apply(op, b << (8 * k));
  }

  std::uint32_t operator()(std::uint32_t crc) const noexcept {
    return table[0][crc & 0xFFu] ^ table[1][(crc >> 8) & 0xFFu] ^ table[2][(crc >> 16) & 0xFFu] ^ table[3][crc >> 24];
  }
};

constexpr std::size_t kShortBlock = 256, kLongBlock = 8192;
const Shift kShiftShort(kShortBlock), kShiftLong(kLongBlock);

// Three adjacent blocks of `block` bytes at a time, joined with `shift`.
__attribute__((target("sse4.2"))) std::uint64_t crc_sse42_3way(std::uint64_t c, const unsigned char*& p,
                                                               std::size_t& n, std::size_t block,
                                                               const Shift& shift) noexcept {
  while (n >= 3 * block) {
    std::uint64_t a = c, b = 0, d = 0;
    for (std::size_t i = 0; i < block; i += 8) {
      std::uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + block + i, 8);
      std::memcpy(&wd, p + 2 * block + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      d = _mm_crc32_u64(d, wd);
    }
    c = shift(shift(static_cast<std::uint32_t>(a)) ^ static_cast<std::uint32_t>(b)) ^ static_cast<std::uint32_t>(d);
    p += 3 * block;
    n -= 3 * block;
  }
  return c;
}

// Compiled for SSE4.2 alone; called only after the CPU check.
__attribute__((target("sse4.2"))) std::uint32_t crc_sse42(std::uint32_t crc, const unsigned char* p,
                                                          std::size_t n) noexcept {
  std::uint64_t c = crc;
  c = crc_sse42_3way(c, p, n, kLongBlock, kShiftLong);
  c = crc_sse42_3way(c, p, n, kShortBlock, kShiftShort);
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

const bool kHaveSse42 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") != 0;
}();

}  // namespace

std::uint32_t crc32c(std::uint32_t crc, std::span<const std::byte> data) noexcept {
  auto* p = reinterpret_cast<const unsigned char*>(data.data());
  crc = ~crc;
  crc = kHaveSse42 ? crc_sse42(crc, p, data.size()) : crc_table(crc, p, data.size());
  return ~crc;
}

std::uint32_t crc32c_portable(std::uint32_t crc, std::span<const std::byte> data) noexcept {
  return ~crc_table(~crc, reinterpret_cast<const unsigned char*>(data.data()), data.size());
}

bool crc32c_hardware() noexcept { return kHaveSse42; }

}  // namespace iolab
