#include "iolab/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "iolab/error.h"

namespace iolab {

std::uint64_t parse_size(std::string_view text) {
  auto bad = [&](const char* why) -> UsageError { return UsageError("size '" + std::string(text) + "'", why); };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw bad("expected a number with an optional unit, like 4k, 1m, 1.5g or 4096");
  double number = 0;
  try {
    std::size_t used = 0;
    number = std::stod(std::string(text.substr(0, i)), &used);
    if (used != i) throw bad("not a number");
  } catch (const std::logic_error&) {
    throw bad("not a number");
  }
  std::string unit;
  for (char c : text.substr(i)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 0;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw bad("unknown unit; use b, k, m, g or t (powers of 1024)");
  double v = number * mult;
  if (v != std::floor(v)) throw bad("not a whole number of bytes");
  if (v > 1.8e19) throw bad("too large");
  return static_cast<std::uint64_t>(v);
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

}  // namespace iolab
