#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "iolab/units.h"

namespace iolab::report {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string script_json(const nlohmann::json& j) {
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  // These characters occur only inside JSON strings, where \u escapes mean the same.
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out += ',';
    out += *it;
    ++count;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string sig(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e15) {  // beyond exact integers: plain scientific notation
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
  }
  double mag = std::floor(std::log10(std::fabs(v)));
  int decimals = std::max(0, digits - 1 - static_cast<int>(mag));
  double scale = std::pow(10.0, decimals);
  double rounded = std::round(v * scale) / scale;
  if (decimals == 0) {
    double whole = std::round(rounded);
    std::string s = grouped(static_cast<std::uint64_t>(std::fabs(whole)));
    return whole < 0 ? "-" + s : s;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, rounded);
  return buf;
}

std::string times(double ratio) { return sig(ratio, ratio < 2 ? 3 : 2) + "x"; }

std::string bytes_text(std::uint64_t b) {
  // Exact powers of two print without decimals ("1 KiB", not "1.00 KiB").
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t whole = b;
  while (whole >= 1024 && whole % 1024 == 0 && u < 4) {
    whole /= 1024;
    ++u;
  }
  if (whole < 1024) return std::to_string(whole) + " " + units[u];
  return format_bytes(static_cast<double>(b));
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s <= 0) return "0 s";
  if (s < 1e-6) return sig(s * 1e9, 2) + " ns";
  if (s < 1e-3) return sig(s * 1e6, 2) + " µs";
  if (s < 1) return sig(s * 1e3, 2) + " ms";
  return sig(s, 2) + " s";
}

std::string percent(double fraction) { return sig(fraction * 100, fraction < 0.1 ? 1 : 2) + "%"; }

bool measured(const harness::Result& r) { return !r.skipped && !r.samples_s.empty(); }

bool counts_bytes(const harness::Result& r) { return r.bytes > 0; }

double work(const harness::Result& r) {
  return counts_bytes(r) ? static_cast<double>(r.bytes) : static_cast<double>(r.ops);
}

Rate rate(const harness::Result& r) {
  if (!measured(r)) return {};
  harness::Summary s = r.seconds();
  double unit = counts_bytes(r) ? kMiB : 1.0;
  auto per_s = [&](double sec) { return sec > 0 ? work(r) / unit / sec : 0.0; };
  return {per_s(s.median), per_s(s.max), per_s(s.min)};
}

double cpu_per_gib(const harness::Result& r) {
  if (r.bytes == 0) return 0;
  return (r.user_s + r.sys_s) / (static_cast<double>(r.bytes) / kGiB);
}

double seconds_per_call(const harness::Result& r) {
  if (!measured(r)) return 0;
  double calls = r.io_calls ? static_cast<double>(r.io_calls) : static_cast<double>(r.ops);
  return calls > 0 ? r.seconds().median / calls : 0;
}

Speedup speedup(const harness::Result& a, const harness::Result& b) {
  Speedup out;
  if (!measured(a) || !measured(b) || work(a) <= 0 || work(b) <= 0) return out;
  harness::Summary sa = a.seconds(), sb = b.seconds();
  double ta = sa.mean / work(a), tb = sb.mean / work(b);
  if (ta <= 0 || tb <= 0) return out;
  out.ratio = tb / ta;
  double rel = std::sqrt(sa.cv * sa.cv + sb.cv * sb.cv);
  out.stddev = out.ratio * rel;
  out.noise_known = sa.n >= 2 && sb.n >= 2;
  if (out.noise_known) {
    bool separate = sa.max / work(a) < sb.min / work(b);
    out.beyond_noise = separate || out.ratio - 2 * out.stddev > 1;
  }
  return out;
}

std::string method_label(const harness::Result& r) {
  if (!r.buffer || *r.buffer == io::BufferKind::Heap) return r.method;
  return r.method + " (" + harness::buffer_name(r) + ")";
}

std::string cache_class(const harness::Result& r) {
  if (r.cache == harness::CacheState::Cold || r.cache == harness::CacheState::Direct) return "cold";
  if (r.cache == harness::CacheState::Warm) return "warm";
  return "";
}

std::string sync_class(const harness::Result& r) {
  switch (r.sync.schedule) {
    case harness::FlushSchedule::None: return "none";
    case harness::FlushSchedule::End: return "end";
    case harness::FlushSchedule::EveryWrite: return "every";
    case harness::FlushSchedule::EveryBytes: return "every-" + size_label(r.sync.interval);
    case harness::FlushSchedule::AsyncBytes: return "async-" + size_label(r.sync.interval);
    case harness::FlushSchedule::EveryOps: return "every-" + std::to_string(r.sync.interval) + "-ops";
  }
  return "none";
}

}  // namespace iolab::report
