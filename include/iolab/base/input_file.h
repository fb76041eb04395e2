// Input files iolab reads whole (job files, results files), bounded before
// any parsing: a FIFO, a device or /dev/zero never ends, a huge file would
// take the machine's memory, and a parser recurses once per level of nesting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace iolab {

inline constexpr std::uint64_t kJobFileMaxBytes = 1 << 20;           // 1 MiB: a job file is a few lines
inline constexpr std::uint64_t kResultsFileMaxBytes = 1ull << 30;    // 1 GiB: ~300,000 records
inline constexpr std::size_t kJsonMaxDepth = 256;                    // results nest ~8 levels
inline constexpr std::size_t kTomlMaxDepth = 32;                     // job files are flat
inline constexpr std::size_t kTomlMaxKeyParts = 16;                  // a dotted key's parts

// What a file that cannot be opened or read (no permission, an I/O error)
// is: bad input (a job file: UsageError, exit 2), or a failure (a results
// file: Error "read results file x: cannot be read: ...", exit 1, as a
// missing one is).
enum class Unreadable { BadInput, Failure };

// The file's bytes: a regular file of at most `limit` bytes. UsageError
// naming `what` and the path ("results file x: is not a regular file")
// otherwise; one that cannot be read, as `unreadable` says.
std::string read_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t limit,
                            Unreadable unreadable = Unreadable::BadInput);

// The deepest nesting of [ and { in JSON text, strings skipped.
std::size_t json_nesting_depth(std::string_view text);

// The deepest nesting of inline [ and { in TOML text (table headers count
// as one), and the most parts of one dotted key or table header; strings
// and comments skipped.
struct TomlShape {
  std::size_t depth = 0, key_parts = 0;
};
TomlShape toml_shape(std::string_view text);

}  // namespace iolab
