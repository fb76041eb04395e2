// Sizes and durations as people write and read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iolab {

// Bytes in a binary megabyte and gigabyte, for rates shown in MiB/s and GiB.
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = kMiB * 1024.0;

// "4096", "4k", "4KiB", "1m", "1.5g", "10MiB": binary multiples (k = 1024),
// exact up to 2^64 - 1 bytes. Throws UsageError naming `what` (e.g. "--bs")
// and the text for anything else ("12q", "", "-1", " 4k", "1.3b", "16e").
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

// A whole number in decimal ("4267") or hexadecimal ("0x10AB"), no sign, no
// spaces, from `min` to `max`. Throws UsageError naming `what` and the text
// ("-5", "1.5", "", "99999999999999999999").
std::uint64_t parse_count(std::string_view text, std::string_view what, std::uint64_t min = 0,
                          std::uint64_t max = UINT64_MAX);

// A duration: seconds ("0.1", "2"), or with a unit: ns, us, µs, ms, s, min,
// h ("100ms", "1.5min"). Finite and not negative; at most `max_seconds`.
// Throws UsageError naming `what` and the text ("nan", "-1", "1e999", "5x").
double parse_seconds(std::string_view text, std::string_view what, double max_seconds);

// "1 KiB", "1.5 MiB", "512 B": binary units, at most 3 significant digits.
std::string format_bytes(double bytes);
// "1.23 GiB/s", from bytes per second.
std::string format_rate(double bytes_per_second);
// "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
std::string format_duration(double seconds);
// "1.2 M", "950 k", "12": counts and rates.
std::string format_count(double n);
// A fraction as a percentage: "97%", "5%", "0.5%" (two significant digits,
// one under 10%); "n/a" when not finite.
std::string format_percent(double fraction);
// Compact size for labels: "4k", "1m", "1g", "1000".
std::string size_label(std::uint64_t bytes);
// A size exactly, in the largest unit that divides it: "63 B", "4095 B",
// "4 KiB", "1020 KiB", "8 MiB".
std::string exact_size(std::uint64_t bytes);

}  // namespace iolab
