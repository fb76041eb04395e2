#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "iolab/base/crc32c.h"

namespace iolab {
namespace {

std::span<const std::byte> bytes(std::string_view s) { return {reinterpret_cast<const std::byte*>(s.data()), s.size()}; }

TEST(Crc32c, KnownVectors) {
  // RFC 3720 (iSCSI) B.4 and the usual check value.
  EXPECT_EQ(crc32c(bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(0, bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(bytes("")), 0u);
  std::vector<std::byte> zeros(32, std::byte{0}), ones(32, std::byte{0xFF}), inc(32);
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<std::byte>(i);
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(inc), 0x46DD794Eu);
}

TEST(Crc32c, HardwareMatchesTableAndExtends) {
  std::mt19937 rng(7);
  std::vector<std::byte> buf(60000);
  for (auto& b : buf) b = static_cast<std::byte>(rng());
  // Around the hardware path's joins: three streams from 96 bytes, blocks of
  // a third of what is left up to 8 KiB, whole 24 KiB rounds above.
  for (std::size_t len : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 95u, 96u, 97u, 119u, 1000u, 1024u, 1040u, 2999u, 24575u,
                          24576u, 24577u, 49159u, 59998u}) {
    auto s = std::span<const std::byte>(buf).subspan(1, len);  // unaligned start too
    EXPECT_EQ(crc32c(s), crc32c_portable(0, s)) << len;
    for (std::size_t cut : {std::size_t{0}, len / 3, len}) {
      EXPECT_EQ(crc32c(crc32c(s.first(cut)), s.subspan(cut)), crc32c(s)) << len << " " << cut;
    }
  }
  std::printf("crc32c uses %s\n", crc32c_hardware() ? "SSE4.2" : "the table");
}

}  // namespace
}  // namespace iolab
