// CRC32C (Castagnoli, the polynomial of iSCSI, ext4 and LevelDB), used by
// the record store and the commit log to check what they read back. SSE4.2's crc32 instruction (three
// streams, joined with PCLMULQDQ) when the CPU has both (checked once at
// run time), a slicing-by-8 table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace iolab {

// Extends `crc` (0 to start) over `data`; crc32c(crc32c(0, a), b) == crc32c(0, a + b).
std::uint32_t crc32c(std::uint32_t crc, std::span<const std::byte> data) noexcept;
inline std::uint32_t crc32c(std::span<const std::byte> data) noexcept { return crc32c(0, data); }

// The portable table version, whatever the CPU (for tests comparing the two).
std::uint32_t crc32c_portable(std::uint32_t crc, std::span<const std::byte> data) noexcept;
// True when crc32c() uses the SSE4.2 instruction (and PCLMULQDQ) on this CPU.
bool crc32c_hardware() noexcept;

}  // namespace iolab
