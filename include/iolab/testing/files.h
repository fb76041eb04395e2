#pragma once
// Whole-file reads and writes for tests: the referee, with plain open/read(2)
// and write(2), independent of every file method under test. A read or write
// that fails throws iolab::Error naming the file.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iolab::testing {

// The whole file as bytes, and as text (the same bytes).
std::vector<std::byte> read_bytes(const std::filesystem::path& p);
std::string read_file(const std::filesystem::path& p);

// Creates or truncates `p` and writes exactly these bytes.
void write_bytes(const std::filesystem::path& p, std::span<const std::byte> bytes);
void write_file(const std::filesystem::path& p, std::string_view text);

// Everything under `dir`, as paths relative to it, sorted; empty when `dir`
// is missing. A scratch directory's own list (io::kScratchListName) is left
// out: it is how the directory is reclaimed, not something a test made.
std::vector<std::string> names_in(const std::filesystem::path& dir);

}  // namespace iolab::testing
