// Option values as fio 3.33 reads them: sizes with its suffixes and kb_base,
// per-direction lists, ranges, times, booleans.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "options.h"
#include "iolab/base/units.h"

namespace iolab::fio::detail {

std::string_view trim_front(std::string_view s) {
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  return s;
}


// Whether `s` is UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): names and options go into the results' JSON, which holds UTF-8 only.
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}



// The options iolab maps (fio's names and aliases). Everything else is refused by name.
constexpr std::array<Spec, 29> kSpecs{{
    {"name", "", Kind::Text},
    {"description", "", Kind::Text},
    {"rw", "readwrite", Kind::Rw},
    {"bs", "blocksize", Kind::PerDir},
    {"bsrange", "blocksize_range", Kind::Ranges},
    {"size", "", Kind::Size},
    {"filename", "", Kind::Text},
    {"directory", "", Kind::Text},
    {"ioengine", "", Kind::Text},
    {"iodepth", "", Kind::Count},
    {"iodepth_batch", "iodepth_batch_submit", Kind::Count},
    {"iodepth_batch_complete_min", "iodepth_batch_complete", Kind::Count},
    {"iodepth_batch_complete_max", "", Kind::Count},
    {"direct", "", Kind::Bool},
    {"buffered", "", Kind::Bool},
    {"numjobs", "", Kind::Count},
    {"fsync", "", Kind::Count},
    {"fdatasync", "", Kind::Count},
    {"end_fsync", "", Kind::Bool},
    {"fsync_on_close", "", Kind::Bool},
    {"runtime", "timeout", Kind::Time},
    {"time_based", "", Kind::Flag},
    {"loops", "", Kind::Count},
    {"invalidate", "", Kind::Bool},
    {"pre_read", "", Kind::Bool},
    {"thread", "", Kind::Flag},
    {"group_reporting", "", Kind::Flag},
    {"stonewall", "wait_for_previous", Kind::Flag},
    {"kb_base", "", Kind::KbBase},
}};

const Spec* find_spec(std::string_view key) {
  for (const auto& s : kSpecs)
    if (s.name == key || (!s.alias.empty() && s.alias == key)) return &s;
  return nullptr;
}




std::string shown(const FioOption& o) { return printable(o.text); }

[[noreturn]] void bad_value(const FioOption& o, const std::string& why) { fail(o.place, "'" + shown(o) + "': " + why); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint64_t checked_multiply(std::uint64_t a, std::uint64_t b, const FioOption& o) {
  if (b != 0 && a > UINT64_MAX / b) bad_value(o, "too large");
  return a * b;
}

// A number as fio's str_to_decimal reads one for a data quantity: digits (or
// 0x and hex digits) and a unit. With kb_base=1024 (fio's default) k, kb and
// ki are 1024 and kib is 1000; with kb_base=1000 the other way round (fio
// 3.33's parser, checked with fio --debug=parse: its HOWTO says 4ki = 4000,
// the parser makes it 4096). 'b' is a byte.
std::uint64_t fio_number(std::string_view text, unsigned kb_base, const FioOption& o) {
  if (text.empty()) bad_value(o, "a number is missing");
  if (blank(text.front()))
    bad_value(o, "a blank after '=': fio reads the value as written (a number after a blank loses its unit, "
                 "'bs= 4k' is 4 bytes to fio); remove the blank");
  if (text.starts_with("0x") || text.starts_with("0X")) {
    std::string_view hex = text.substr(2);
    if (hex.empty() || hex.size() > 16 || !std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      bad_value(o, "a hexadecimal number is 0x and up to 16 hex digits, without a unit");
    return std::stoull(std::string(hex), nullptr, 16);
  }
  std::size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 0 && text.starts_with('$'))
    bad_value(o, "fio does not expand a bare $NAME (it reads it as written); write ${NAME} for an environment variable");
  if (n == 0) bad_value(o, "expected a number with an optional unit (4k, 256m, 1g; k = " + std::to_string(kb_base) + ")");
  std::string_view digits = text.substr(0, n);
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (digits.size() > 20) bad_value(o, "too large");
  errno = 0;
  const unsigned long long whole = std::strtoull(std::string(digits).c_str(), nullptr, 10);
  if (errno == ERANGE) bad_value(o, "too large");
  const std::string unit = lower(text.substr(n));
  if (unit.starts_with('.'))
    bad_value(o, "fio reads whole numbers only ('1.5k' is 1 byte to fio); write it in a smaller unit");
  if (unit == "%") bad_value(o, "a percentage of an existing file or device: iolab creates its own files; give a size");
  if (unit == "z") bad_value(o, "zones (zonemode): iolab has no zoned block devices; give a size");
  const std::uint64_t other = kb_base == 1024 ? 1000 : 1024;
  unsigned power = 0;
  std::uint64_t base = kb_base;
  if (unit.empty() || unit == "b") {
    power = 0;
  } else {
    static constexpr std::string_view kPrefixes = "kmgtp";
    const std::size_t at = kPrefixes.find(unit.front());
    const std::string_view rest = std::string_view(unit).substr(1);
    if (at == std::string_view::npos || !(rest.empty() || rest == "b" || rest == "i" || rest == "ib"))
      bad_value(o, "unknown unit '" + printable(text.substr(n)) + "' (fio's: b, k, kb, ki, kib, m... p; k = " +
                       std::to_string(kb_base) + ", kib = " + std::to_string(other) + " under kb_base=" +
                       std::to_string(kb_base) + ")");
    power = static_cast<unsigned>(at) + 1;
    if (rest == "ib") base = other;
  }
  std::uint64_t v = whole;
  for (unsigned i = 0; i < power; ++i) v = checked_multiply(v, base, o);
  return v;
}

// fio splits a per-direction value at ',' (then ':' and '-' when there is no
// ','), up to read, write, trim; an empty part keeps what was there; the
// last part given also fills the directions after it.
std::array<std::optional<std::uint64_t>, 3> per_dir(std::string_view text, unsigned kb_base, const FioOption& o) {
  std::array<std::optional<std::uint64_t>, 3> out;
  if (!text.empty() && text.back() == ',') text.remove_suffix(1);
  std::vector<std::string_view> parts;
  while (true) {
    std::size_t cut = text.find(',');
    if (cut == std::string_view::npos) cut = text.find_first_of(":-");
    parts.push_back(text.substr(0, cut));
    if (cut == std::string_view::npos) break;
    text = text.substr(cut + 1);
  }
  if (parts.size() > 3) bad_value(o, "at most three values: read, write, trim");
  bool any = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    out[i] = fio_number(parts[i], kb_base, o);
    if (*out[i] == 0) bad_value(o, "a block size must be at least 1 byte");
    any = true;
  }
  if (!any) bad_value(o, "no value");
  for (std::size_t i = parts.size(); i < 3; ++i) out[i] = out[parts.size() - 1];
  return out;
}

std::array<std::optional<std::pair<std::uint64_t, std::uint64_t>>, 3> ranges(std::string_view text, unsigned kb_base,
                                                                              const FioOption& o) {
  std::array<std::optional<std::pair<std::uint64_t, std::uint64_t>>, 3> out;
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t cut = text.find(',');
    parts.push_back(text.substr(0, cut));
    if (cut == std::string_view::npos) break;
    text = text.substr(cut + 1);
  }
  if (parts.size() > 3) bad_value(o, "at most three ranges: read, write, trim");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::size_t sep = parts[i].find('-');
    if (sep == std::string_view::npos) sep = parts[i].find(':');
    if (sep == std::string_view::npos) bad_value(o, "a range is LOW-HIGH or LOW:HIGH (4k-16k)");
    std::uint64_t a = fio_number(parts[i].substr(0, sep), kb_base, o), b = fio_number(parts[i].substr(sep + 1), kb_base, o);
    if (a > b) std::swap(a, b);  // fio swaps them
    if (a == 0) bad_value(o, "a block size must be at least 1 byte");
    out[i] = std::pair(a, b);
  }
  for (std::size_t i = parts.size(); i < 3; ++i) out[i] = out[parts.size() - 1];
  return out;
}

// fio's time: an integer, seconds unless a unit says otherwise (us, usec,
// ms, msec, s, m, h, d, any case). Microseconds.
std::uint64_t fio_time(std::string_view text, const FioOption& o) {
  if (text.empty()) bad_value(o, "a time is missing");
  if (blank(text.front())) bad_value(o, "a blank after '=': fio reads the value as written; remove the blank");
  std::size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  if (n == 0 || n > 12) bad_value(o, "expected a whole number of seconds, or with a unit: us, ms, s, m, h, d (10m = 10 minutes)");
  const std::uint64_t whole = std::stoull(std::string(text.substr(0, n)));
  const std::string unit = lower(text.substr(n));
  std::uint64_t us = 0;
  if (unit.empty() || unit == "s") us = 1000000;
  else if (unit == "us" || unit == "usec") us = 1;
  else if (unit == "ms" || unit == "msec") us = 1000;
  else if (unit == "m") us = 60ull * 1000000;
  else if (unit == "h") us = 3600ull * 1000000;
  else if (unit == "d") us = 86400ull * 1000000;
  else
    bad_value(o, "unknown time unit '" + printable(text.substr(n)) + "': fio's are us, ms, s, m, h, d (fio 3.33 reads "
                 "'10min' and '10sec' as 10 microseconds, '1.5s' as 1 second)");
  return checked_multiply(whole, us, o);
}

std::uint64_t fio_integer(std::string_view text, const FioOption& o) {
  if (blank(text.front())) bad_value(o, "a blank after '=': fio reads the value as written; remove the blank");
  if (text.starts_with("0x") || text.starts_with("0X")) return fio_number(text, 1024, o);
  if (!all_digits(text) || text.size() > 9) bad_value(o, "expected 0 or 1");
  return std::stoull(std::string(text));
}

Value parse_value(const Spec& spec, const FioOption& o, unsigned kb_base) {
  Value v;
  const bool needs_value = spec.kind != Kind::Flag;
  if (needs_value && !o.value) bad_value(o, "needs a value (" + std::string(spec.name) + "=...)");
  const bool substituted = o.text.find("${") != std::string::npos;
  const std::string empty =
      substituted ? "an empty value once ${...} is expanded (an unset variable is the empty string, as in fio)"
                  : "an empty value";
  if (needs_value && o.value->empty()) bad_value(o, empty);
  const std::string_view text = o.value ? std::string_view(*o.value) : std::string_view();
  switch (spec.kind) {
    case Kind::Text:
      v.text = std::string(trim_front(text));
      if (v.text.empty()) bad_value(o, empty);
      break;
    case Kind::PerDir: v.per_dir = per_dir(text, kb_base, o); break;
    case Kind::Ranges: v.ranges = ranges(text, kb_base, o); break;
    case Kind::Size:
      if (text.find_first_of(",:") != std::string_view::npos || text.find('-', 1) != std::string_view::npos)
        bad_value(o, "one size (fio reads only the first of a list here)");
      v.number = fio_number(text, kb_base, o);
      break;
    case Kind::Count:
      if (text.find_first_of(",:") != std::string_view::npos || text.find('-', 1) != std::string_view::npos)
        bad_value(o, "one number");
      v.number = fio_number(text, kb_base, o);
      break;
    case Kind::Bool:
      v.number = fio_integer(text, o);
      if (v.number > 1) bad_value(o, "expected 0 or 1");
      break;
    case Kind::Flag:
      if (o.value && o.value->empty()) bad_value(o, "an empty value (write the option alone, or =1)");
      v.number = o.value ? fio_integer(text, o) != 0 : 1;
      break;
    case Kind::Time: v.number = fio_time(text, o); break;
    case Kind::Rw: {
      if (blank(text.front())) bad_value(o, "a blank after '=': fio refuses it; remove the blank");
      if (text.find(',') != std::string_view::npos) bad_value(o, "one direction (read, write, randread, randwrite)");
      const std::size_t colon = text.find(':');
      v.text = std::string(text.substr(0, colon));
      if (colon != std::string_view::npos) v.postfix = std::string(text.substr(colon + 1));
      static constexpr std::array<std::string_view, 11> kKnown{
          "read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite", "randrw", "trimwrite",
          "randtrimwrite"};
      if (std::find(kKnown.begin(), kKnown.end(), v.text) == kKnown.end())
        bad_value(o, "not one of fio's directions (read, write, randread, randwrite, rw, randrw, trim, ...)");
      break;
    }
    case Kind::KbBase:
      if (text != "1024" && text != "1000") bad_value(o, "expected 1024 or 1000");
      v.number = text == "1024" ? 1024 : 1000;
      break;
  }
  return v;
}
std::string seconds_text(std::uint64_t us) { return format_duration(static_cast<double>(us) / 1e6); }

// The option `o` as a Setting read under `kb_base`, or nullopt when iolab
// does not map it (then refused, or ignored under lenient).
std::optional<Setting> setting(const FioOption& o, unsigned kb_base, bool lenient) {
  const Spec* spec = find_spec(o.key);
  if (!spec) {
    if (lenient) return std::nullopt;
    fail(o.place, "'" + shown(o) + "': iolab does not map this fio option (docs/fio-jobs.md lists those it maps); "
                  "--fio-lenient ignores it");
  }
  return Setting{spec, o, parse_value(*spec, o, kb_base)};
}

// A section's kb_base: fio applies it before the section's other options.
std::optional<unsigned> own_kb_base(const FioSection& s) {
  std::optional<unsigned> kb;
  for (const auto& o : s.options) {
    const Spec* spec = find_spec(o.key);
    if (spec && spec->kind == Kind::KbBase) kb = static_cast<unsigned>(parse_value(*spec, o, 1024).number);
  }
  return kb;
}

FioOption override_option(const std::string& text) {
  FioOption o;
  o.place = FioPlace{"--fio-set", 0};
  if (!valid_utf8(text)) fail(o.place, "'" + printable(text) + "': not UTF-8");
  o.text = text;
  const std::size_t eq = text.find('=');
  o.key = text.substr(0, eq);
  if (o.key.empty()) fail(o.place, "'" + printable(text) + "': expected KEY=VALUE");
  if (eq != std::string::npos) o.value = text.substr(eq + 1);
  return o;
}

}  // namespace iolab::fio::detail
