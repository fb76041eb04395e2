#include "iolab/base/crc32c.h"

#include <array>
#include <cstring>
#include <nmmintrin.h>
#include <wmmintrin.h>

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

// Three CRCs of adjacent blocks computed side by side (the crc32
// instruction's latency is three times its throughput), then joined:
// crc(A B) = shift_|B|(crc(A)) ^ crc(B), B started from 0. Appending n zero
// bytes multiplies the register by x^(8n) mod P; one carry-less multiply by
// the constant K_n = x^(8n - 33) mod P and a crc32 of the 64-bit product
// does it (the crc32 adds x^32, bit reflection one more x). The blocks are
// a third of what is left (a multiple of 8, at most kMaxBlock), so a 1 KiB
// body is three blocks of 336 bytes and 16 bytes after, not 768 bytes in
// three streams and 256 in one (the tables of fixed block sizes used until
// issue 28: the serial tail was half of a 1 KiB CRC's time).
constexpr std::size_t kMaxBlock = 8192;
constexpr std::size_t kMinThreeWay = 3 * 32;  // below this the join costs more than it saves

// K[b] shifts a register over 8 * b zero bytes (b = 1 .. kMaxBlock / 8), in
// the reflected 32-bit form the crc32 instruction uses (bit 31 is x^0).
constexpr std::array<std::uint32_t, kMaxBlock / 8 + 1> kShiftConstants = [] {
  std::array<std::uint32_t, kMaxBlock / 8 + 1> k{};
  std::uint32_t v = 0x80000000u;  // x^0
  auto times_x = [](std::uint32_t r) { return (r >> 1) ^ ((r & 1u) ? kPolyReflected : 0u); };
  for (int i = 0; i < 64 - 33; ++i) v = times_x(v);  // x^(64 - 33): b = 1
  for (std::size_t b = 1; b <= kMaxBlock / 8; ++b) {
    k[b] = v;
    for (int i = 0; i < 64; ++i) v = times_x(v);
  }
  return k;
}();

__attribute__((target("sse4.2,pclmul"))) inline std::uint64_t shift_by(std::uint64_t crc, std::uint32_t k) noexcept {
  __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(static_cast<std::uint32_t>(crc))),
                                         _mm_cvtsi32_si128(static_cast<int>(k)), 0);
  return _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(product)));
}

// Three adjacent blocks of `block` bytes (a multiple of 8, <= kMaxBlock) from p.
__attribute__((target("sse4.2,pclmul"))) std::uint64_t crc_3way(std::uint64_t c, const unsigned char* p,
                                                               std::size_t block) noexcept {
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
  std::uint32_t k = kShiftConstants[block / 8];
  return shift_by(shift_by(a, k) ^ b, k) ^ d;
}

// Compiled for SSE4.2 and PCLMUL alone; called only after the CPU check.
__attribute__((target("sse4.2,pclmul"))) std::uint32_t crc_sse42(std::uint32_t crc, const unsigned char* p,
                                                                std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n >= 3 * kMaxBlock) {
    c = crc_3way(c, p, kMaxBlock);
    p += 3 * kMaxBlock;
    n -= 3 * kMaxBlock;
  }
  if (n >= kMinThreeWay) {
    std::size_t block = n / 3 / 8 * 8;
    c = crc_3way(c, p, block);
    p += 3 * block;
    n -= 3 * block;
  }
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
  return __builtin_cpu_supports("sse4.2") != 0 && __builtin_cpu_supports("pclmul") != 0;
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
