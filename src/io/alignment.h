// Internal: O_DIRECT alignment, discovered per file and checked in one place
// (after Seastar and RocksDB's aligned_buffer: every rounding lives here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace iolab::io::direct_io {

struct Alignment {
  std::size_t memory = 4096;  // buffer address
  std::size_t offset = 4096;  // file offset and length
  const char* source = "default";  // "statx", "sysfs" or "default"
  std::size_t strictest() const { return memory > offset ? memory : offset; }
};

// statx(STATX_DIOALIGN), then the device's logical block size from sysfs,
// then 4096. Every value is checked to be a power of two.
Alignment discover(int fd, const std::filesystem::path& path);

// Throws Error(EINVAL) naming what is misaligned, when buffer address,
// offset or length breaks `a`.
void require_aligned(const Alignment& a, const void* buffer, std::uint64_t offset, std::size_t length,
                     const char* op, const std::filesystem::path& path);
bool is_aligned(const Alignment& a, const void* buffer, std::uint64_t offset, std::size_t length);

inline std::uint64_t round_down(std::uint64_t v, std::size_t a) { return v / a * a; }
inline std::uint64_t round_up(std::uint64_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace iolab::io::direct_io
