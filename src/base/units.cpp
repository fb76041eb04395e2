#include "iolab/base/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <string>

#include "iolab/base/error.h"

namespace iolab {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "<digits>[.<digits>]" at the start of `text`: its length, 0 when there is none.
std::size_t number_length(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i == 0) return 0;
  if (i < text.size() && text[i] == '.') {
    std::size_t fraction = i + 1;
    while (fraction < text.size() && is_digit(text[fraction])) ++fraction;
    if (fraction == i + 1) return 0;  // "1." is not a number
    i = fraction;
  }
  return i;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

UsageError invalid(std::string_view what, std::string_view text, const std::string& why) {
  return UsageError(std::string(what) + " '" + std::string(text) + "'", why);
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  const std::size_t n = number_length(text);
  if (n == 0) throw invalid(what, text, "expected a number with an optional unit, like 4k, 1m, 1.5g or 4096");
  const std::string unit = lowercase(text.substr(n));
  unsigned shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  else throw invalid(what, text, "unknown unit; use b, k, m, g or t (powers of 1024)");
  // Exactly: the whole part shifted, plus the fraction n / 10^k times 2^shift,
  // which is whole only when n / 5^k is, and is then (n / 5^k) * 2^(shift - k).
  const auto too_large = [&] { return invalid(what, text, "too large: more than 2^64 - 1 bytes"); };
  const auto not_whole = [&] { return invalid(what, text, "not a whole number of bytes"); };
  std::string_view number = text.substr(0, n);
  const std::size_t dot = number.find('.');
  std::uint64_t whole = 0;
  for (char c : number.substr(0, dot)) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (whole > (UINT64_MAX - d) / 10) throw too_large();
    whole = whole * 10 + d;
  }
  if (whole > (UINT64_MAX >> shift)) throw too_large();
  std::uint64_t bytes = whole << shift;
  if (dot != std::string_view::npos) {
    std::string_view digits = number.substr(dot + 1);
    while (!digits.empty() && digits.back() == '0') digits.remove_suffix(1);
    if (digits.size() > 18) throw not_whole();
    const auto k = static_cast<unsigned>(digits.size());
    std::uint64_t numerator = 0, pow5 = 1;
    for (char c : digits) {
      numerator = numerator * 10 + static_cast<std::uint64_t>(c - '0');
      pow5 *= 5;
    }
    if (numerator % pow5 != 0) throw not_whole();
    std::uint64_t q = numerator / pow5;  // < 2^k
    if (k > shift) {
      if (q % (std::uint64_t{1} << (k - shift)) != 0) throw not_whole();
      q >>= k - shift;
    } else {
      q <<= shift - k;
    }
    if (bytes > UINT64_MAX - q) throw too_large();
    bytes += q;
  }
  return bytes;
}

std::uint64_t parse_count(std::string_view text, std::string_view what, std::uint64_t min, std::uint64_t max) {
  const std::string range = "from " + std::to_string(min) + " to " + std::to_string(max);
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  std::string_view digits = hex ? text.substr(2) : text;
  const unsigned base = hex ? 16 : 10;
  if (digits.empty()) throw invalid(what, text, "expected a whole number " + range);
  std::uint64_t value = 0;
  bool overflow = false;
  for (char c : digits) {
    unsigned d = 0;
    if (is_digit(c)) d = static_cast<unsigned>(c - '0');
    else if (hex && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else throw invalid(what, text, "expected a whole number " + range);
    if (value > (UINT64_MAX - d) / base) overflow = true;
    else value = value * base + d;
  }
  if (overflow || value < min || value > max) throw invalid(what, text, "must be " + range);
  return value;
}

double parse_seconds(std::string_view text, std::string_view what, double max_seconds) {
  const std::size_t n = number_length(text);
  const auto bad = [&] {
    return invalid(what, text, "expected a duration: seconds (0.5) or a number with a unit (ns, us, ms, s, min, h)");
  };
  if (n == 0) throw bad();
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + n, number);
  if (ec != std::errc() || end != text.data() + n || !std::isfinite(number)) throw bad();
  const std::string unit = lowercase(text.substr(n));
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") scale = 1e-6;  // us, µs (micro or mu)
  else if (unit == "ns") scale = 1e-9;
  else if (unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else throw bad();
  const double seconds = number * scale;
  if (!(seconds <= max_seconds)) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "at most %g s", max_seconds);
    throw invalid(what, text, limit);
  }
  return seconds;
}

namespace {
std::string scaled(double v, const char* const* units, int n_units, double step, const char* suffix) {
  int u = 0;
  while (std::fabs(v) >= step && u + 1 < n_units) {
    v /= step;
    ++u;
  }
  // At most 3 significant digits, without trailing zeros: "1 KiB", "1.5 MiB", "12.3 GiB".
  char number[32];
  if (std::fabs(v) >= 100 || (u == 0 && v == std::floor(v))) std::snprintf(number, sizeof number, "%.0f", v);
  else std::snprintf(number, sizeof number, std::fabs(v) >= 10 ? "%.1f" : "%.2f", v);
  std::string n = number;
  if (n.find('.') != std::string::npos) {
    while (n.back() == '0') n.pop_back();
    if (n.back() == '.') n.pop_back();
  }
  return n + " " + units[u] + suffix;
}
constexpr const char* kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
}  // namespace

std::string format_bytes(double bytes) { return scaled(bytes, kByteUnits, 5, 1024, ""); }
std::string format_rate(double bps) { return scaled(bps, kByteUnits, 5, 1024, "/s"); }

std::string format_duration(double s) {
  char buf[64];
  if (s < 1e-6) std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(buf, sizeof buf, "%.3g µs", s * 1e6);
  else if (s < 1) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

std::string format_count(double n) {
  char buf[64];
  if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.3g G", n / 1e9);
  else if (n >= 1e6) std::snprintf(buf, sizeof buf, "%.3g M", n / 1e6);
  else if (n >= 1e4) std::snprintf(buf, sizeof buf, "%.3g k", n / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string size_label(std::uint64_t b) {
  const char* units = "kmgt";
  int u = -1;
  while (b >= 1024 && b % 1024 == 0 && u < 3) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + (u >= 0 ? std::string(1, units[u]) : "");
}

std::string exact_size(std::uint64_t b) {
  if (b != 0 && b % (1024 * 1024) == 0) return std::to_string(b >> 20) + " MiB";
  if (b != 0 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double p = fraction * 100;
  if (p == 0) return "0%";
  const int digits = std::fabs(fraction) < 0.1 ? 1 : 2;
  const int decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(p)))));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, p);
  return buf;
}

}  // namespace iolab
