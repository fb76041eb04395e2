// Sizes and durations as people write and read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iolab {

// "4096", "4k", "4KiB", "1m", "1.5g", "10MiB": binary multiples (k = 1024).
// Throws UsageError naming the text for anything else ("12q", "", "-1").
std::uint64_t parse_size(std::string_view text);

// "1 KiB", "1.5 MiB", "512 B": binary units, at most 3 significant digits.
std::string format_bytes(double bytes);
// "1.23 GiB/s", from bytes per second.
std::string format_rate(double bytes_per_second);
// "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
std::string format_duration(double seconds);
// "1.2 M", "950 k", "12": counts and rates.
std::string format_count(double n);
// Compact size for labels: "4k", "1m", "1g", "1000".
std::string size_label(std::uint64_t bytes);

}  // namespace iolab
