#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "iolab/results/thresholds.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {
// A repetition shorter than this was not measured: no clock iolab uses resolves it.
constexpr double kShortestSample = 1e-9;

// Code points shown as escapes besides the control characters: the line and
// paragraph separators, and the marks that reorder text (a name could
// otherwise display as something it is not).
bool invisible(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Length and code point of the UTF-8 sequence at s[i]; 0 when it is not valid UTF-8.
std::size_t decode(std::string_view s, std::size_t i, char32_t& cp) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  std::size_t len = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  if (len == 1) {
    cp = b;
    return 1;
  }
  // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
  unsigned char lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  cp = b & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  return len;
}
}  // namespace

std::string visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    std::size_t len = decode(text, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if ((cp >= 0x80 && cp <= 0x9F) || invisible(cp)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char ch : visible(text)) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

namespace {
std::string markdown_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const auto& c : cells) {
    if (!c.empty()) row.append(" ").append(markdown_cell(c));
    row.append(" |");
  }
  return row + "\n";
}
}  // namespace

MarkdownTable::MarkdownTable(const std::vector<std::string>& header, std::vector<Align> align) : out_(markdown_row(header)) {
  out_ += "|";
  for (std::size_t i = 0; i < header.size(); ++i)
    out_ += i < align.size() && align[i] == Align::Right ? "---:|" : "---|";
  out_ += "\n";
}

void MarkdownTable::add(const std::vector<std::string>& cells) { out_ += markdown_row(cells); }

std::string MarkdownTable::render() const { return out_; }

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
  return script_safe(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string script_safe(std::string text) {
  // These characters occur only inside JSON strings, where \u escapes mean the same. Most
  // specs have none: the text is returned as it is, else copied in runs between them.
  auto special = [&](std::size_t from) {
    for (; from < text.size(); ++from)
      if (char c = text[from]; c == '<' || c == '>' || c == '&' || c == '\xE2') return from;
    return std::string::npos;
  };
  std::size_t at = special(0);
  if (at == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + 64);
  std::size_t done = 0;
  for (; at != std::string::npos; at = special(at)) {
    out.append(text, done, at - done);
    char c = text[at];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (at + 2 < text.size() && text[at + 1] == '\x80' && (text[at + 2] == '\xA8' || text[at + 2] == '\xA9')) {
      out += text[at + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      at += 2;
    } else {
      out += c;
    }
    done = ++at;
  }
  out.append(text, done, std::string::npos);
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

std::string count(double n) {
  if (!std::isfinite(n) || n <= 0) return "0";
  return grouped(static_cast<std::uint64_t>(std::round(std::min(n, 1.8e19))));
}

std::string sig(double v, int digits) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e15 || std::fabs(v) < 1e-12) {  // beyond exact integers, or below any figure: scientific notation
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


bool counts_bytes(const results::Result& r) { return r.bytes > 0; }

double work(const results::Result& r) {
  return counts_bytes(r) ? static_cast<double>(r.bytes) : static_cast<double>(r.ops);
}

bool measured(const results::Result& r) {
  if (r.skipped || r.samples_s.empty() || work(r) <= 0) return false;
  return std::all_of(r.samples_s.begin(), r.samples_s.end(),
                     [](double s) { return std::isfinite(s) && s >= kShortestSample; });
}

std::string unusable_reason(const results::Result& r) {
  if (r.skipped || measured(r)) return "";
  if (r.samples_s.empty()) return "no timed repetitions recorded: nothing to show";
  if (work(r) <= 0) return "no bytes or operations recorded: no rate";
  return "a repetition took 0 s (or less than 1 ns): no rate can be computed from it";
}

double passes(const results::Result& r) { return static_cast<double>(std::max(1u, r.passes)); }

double per_pass(const results::Result& r, double per_repetition) { return per_repetition / passes(r); }

namespace {
// The median, and the spread of single passes (Result::spread_seconds: a
// repetition of many passes averages them, so its range would shrink with them).
Rate rate_of(const results::Result& r, double amount) {
  if (!measured(r)) return {};
  results::Summary s = r.seconds();
  const results::Result::Spread spread = r.spread_seconds();
  auto per_s = [&](double sec) { return sec > 0 ? amount / sec : 0.0; };
  return {per_s(s.median), per_s(spread.slowest_s), per_s(spread.fastest_s)};
}
}  // namespace

Rate rate(const results::Result& r) { return rate_of(r, work(r) / (counts_bytes(r) ? kMiB : 1.0)); }

Rate ops_rate(const results::Result& r) { return rate_of(r, static_cast<double>(r.ops)); }

std::vector<double> rates(const results::Result& r) {
  std::vector<double> out;
  if (!measured(r)) return out;
  double unit = counts_bytes(r) ? kMiB : 1.0;
  for (double s : r.samples_s) out.push_back(work(r) / unit / s);
  return out;
}

double cpu_per_gib(const results::Result& r) {
  if (r.bytes == 0) return 0;
  return (r.user_s + r.sys_s) / (static_cast<double>(r.bytes) / kGiB);
}

double seconds_per_call(const results::Result& r) {
  if (!measured(r)) return 0;
  double calls = r.io_calls ? static_cast<double>(r.io_calls) : static_cast<double>(r.ops);
  return calls > 0 ? r.seconds().median / calls : 0;
}

bool clearly_faster(const results::Result& a, const results::Result& b) {
  if (!measured(a) || !measured(b) || counts_bytes(a) != counts_bytes(b)) return false;
  auto spread_known = [](const results::Result& r) { return r.pass_s ? r.pass_s->n >= 2 : r.samples_s.size() >= 2; };
  if (!spread_known(a) || !spread_known(b)) return false;
  // Per-pass spreads apart (rate()), not the repetitions' ranges.
  Rate ra = rate(a), rb = rate(b);
  return ra.slowest > rb.fastest && ra.median > rb.median * results::thresholds::kTieRatio;
}

std::vector<std::string> distrust(const results::Result& r) {
  using results::WarningKind;
  std::vector<std::string> out;
  auto add = [&](WarningKind kind) {
    std::string k(results::to_string(kind));
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  };
  for (const auto& w : r.warnings)
    if (w.kind == WarningKind::TooShort || w.kind == WarningKind::Outliers || w.kind == WarningKind::NotWarm ||
        w.kind == WarningKind::NotCold)
      add(w.kind);
  if (measured(r)) {
    results::Summary s = r.seconds();
    if (s.min < results::thresholds::kTooShortSeconds) add(WarningKind::TooShort);
    if (!s.outliers.empty()) add(WarningKind::Outliers);
  }
  if (r.resident_fraction && r.cache == results::CacheState::Warm &&
      *r.resident_fraction < results::thresholds::kWarmResidentMin)
    add(WarningKind::NotWarm);
  if (r.resident_fraction && r.cache == results::CacheState::Cold &&
      *r.resident_fraction > results::thresholds::kColdResidentMax)
    add(WarningKind::NotCold);
  return out;
}

std::string method_label(const results::Result& r) {
  if (!r.buffer || *r.buffer == io::BufferKind::Heap) return r.method;
  return r.method + " (" + results::buffer_name(r) + ")";
}

std::string queue_label(const results::Result& r) {
  if (!r.queue_depth) return "";
  return "qd" + std::to_string(*r.queue_depth) + io_options_text(r);
}

std::string io_options_text(const results::Result& r) {
  std::string s;
  if (auto it = r.extra.find("io_options"); it != r.extra.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_string()) s.append("+").append(o.get_ref<const std::string&>());
  return s;
}

double total_depth(const results::Result& r) {
  auto it = r.extra.find("total_depth");
  if (it == r.extra.end() || !it->is_number()) return 0;
  double d = it->get<double>();
  return std::isfinite(d) && d >= 1 ? std::min(d, 1e9) : 0;
}

double working_set_ratio(const results::Result& r) {
  auto it = r.extra.find("working_set_ratio");
  if (it == r.extra.end() || !it->is_number()) return 0;
  double d = it->get<double>();
  return std::isfinite(d) && d > 0 ? std::min(d, 1e9) : 0;
}

std::string cache_class(const results::Result& r) {
  if (r.cache == results::CacheState::Cold || r.cache == results::CacheState::Direct) return "cold";
  if (r.cache == results::CacheState::Warm) return "warm";
  return "";
}

std::string sync_class(const results::Result& r) {
  switch (r.sync.schedule) {
    case io::FlushSchedule::None: return "none";
    case io::FlushSchedule::End: return "end";
    case io::FlushSchedule::EveryWrite: return "every";
    case io::FlushSchedule::EveryBytes:
      // Blocks of at least the interval flush after every write: the same experiment as "every".
      return results::flushes_every_write(r) ? "every" : "every-" + size_label(r.sync.interval);
    case io::FlushSchedule::AsyncBytes: return "async-" + size_label(r.sync.interval);
    case io::FlushSchedule::EveryOps: return "every-" + std::to_string(r.sync.interval) + "-ops";
  }
  return "none";
}

std::string flushes_text(const results::Result& r) {
  auto number = [&](const char* key) -> double {
    auto it = r.extra.find(key);
    if (it == r.extra.end() || !it->is_number()) return -1;
    double v = it->get<double>();
    return std::isfinite(v) && v >= 0 ? v : -1;
  };
  double flushes = number("flushes");
  if (flushes < 0 || !r.sync.flushes()) return "";
  // A median over passes: whole unless two middle passes differed.
  std::string n = flushes == std::floor(flushes) ? count(flushes) : sig(flushes, 3);
  std::string s = n + (flushes == 1 ? " flush per pass" : " flushes per pass");
  double each = number("bytes_per_flush");
  if (flushes > 0 && each > 0) s += ", " + format_bytes(each) + " each";
  return s;
}

std::string latency_source_text(const results::Result& r) {
  if (!r.latency_ns) return "";
  std::string s;
  switch (r.latency_ns->source) {
    case results::LatencySource::EveryCall: s = "every call timed in a separate pass"; break;
    case results::LatencySource::EveryRequest: s = "every request timed in a separate pass, submission to completion"; break;
    case results::LatencySource::EveryOp: s = "every operation timed as it ran"; break;
  }
  if (r.latency_ns->samples > 0) s += "; " + grouped(r.latency_ns->samples) + " samples";
  return s;
}

std::string interval_text(const harness::RatioInterval& r) {
  if (!r.available) return fmt::format("{}x (no interval at {} rounds)", sig(r.estimate, 3), r.n_a);
  return fmt::format("{}x ({}..{}, {:.1f}% interval, {} rounds)", sig(r.estimate, 3), sig(r.lo, 3), sig(r.hi, 3),
                     100 * r.coverage, r.n_a);
}

}  // namespace iolab::report
