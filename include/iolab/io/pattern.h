// Incompressible, reproducible file contents that can be checked anywhere.
//
// Byte i of a pattern with seed s is a pure function of (s, i), so any range
// of a file can be generated or verified on its own, in any order, by any
// worker. Verification compares xxHash (XXH3-64) digests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace iolab::io {

// Fills `out` with the pattern bytes for file offsets [offset, offset + out.size()).
void fill_pattern(std::uint64_t seed, std::uint64_t offset, std::span<std::byte> out);

// True when `data` equals the pattern at `offset`.
bool matches_pattern(std::uint64_t seed, std::uint64_t offset, std::span<const std::byte> data);

// XXH3-64 digest of the pattern bytes [offset, offset + length), computed in chunks.
std::uint64_t pattern_digest(std::uint64_t seed, std::uint64_t offset, std::uint64_t length);

// XXH3-64 of a byte range, and streaming over a file's whole contents.
std::uint64_t digest(std::span<const std::byte> data);
// Equals digest() of the whole file's bytes. Does not follow a symlink;
// throws Error naming the path when the file cannot be read.
std::uint64_t digest_file(const std::filesystem::path& path);

}  // namespace iolab::io
