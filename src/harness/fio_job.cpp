#include "iolab/harness/fio_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

namespace iolab::harness {

std::string to_string(const FioPlace& place) {
  return place.line == 0 ? place.file : place.file + ":" + std::to_string(place.line);
}

namespace {

[[noreturn]] void fail(const FioPlace& place, const std::string& why) {
  throw UsageError("fio job " + to_string(place), why);
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim_front(std::string_view s) {
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  return s;
}

// fio's strip_blank_end: the line ends at its first ';' or '#' (a comment),
// and trailing blanks and control characters go.
std::string_view strip_end(std::string_view s) {
  if (auto c = s.find_first_of(";#"); c != std::string_view::npos) s = s.substr(0, c);
  while (!s.empty() && (blank(s.back()) || static_cast<unsigned char>(s.back()) < 0x20)) s.remove_suffix(1);
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

// ---- parsing ---------------------------------------------------------------

class Parser {
 public:
  explicit Parser(const FioParseContext& context) : context_(context) {}

  FioJobFile run(std::string_view text, const std::string& source) {
    FioJobFile file;
    file.path = source;
    stack_.push_back(std::filesystem::path(source).lexically_normal());
    total_ = text.size();
    parse(text, source, file, std::nullopt, 0);
    return file;
  }

 private:
  // Parses `text` (from `source`) into `file`; `nested` is the section an
  // include splices into (fio: no sections there).
  void parse(std::string_view text, const std::string& source, FioJobFile& file, std::optional<std::size_t> nested,
             unsigned depth) {
    if (!valid_utf8(source)) fail({printable(source), 0}, "the file's name is not UTF-8");
    if (text.find('\0') != std::string_view::npos)
      fail({source, 0}, "holds a NUL byte: not a text job file");
    std::optional<std::size_t> current = nested;
    unsigned number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      start = end + 1;
      ++number;
      const FioPlace place{source, number};
      if (line.size() > kFioMaxLineBytes)
        fail(place, "a line longer than " + std::to_string(kFioMaxLineBytes) + " bytes (fio's limit)");
      if (!valid_utf8(line)) fail(place, "not UTF-8 text");
      line = strip_end(trim_front(line));
      if (line.empty()) continue;
      if (line.front() == '[') {
        if (nested) fail(place, "a [section] in an included file (fio refuses them)");
        if (line.back() != ']' || line.size() < 3)
          fail(place, "'" + printable(line) + "': a section header is [name]");
        std::string name(line.substr(1, line.size() - 2));
        if (name.size() > 255) fail(place, "a section name longer than 255 characters (fio's limit)");
        if (file.sections.size() >= kFioMaxJobs)
          fail(place, "more than " + std::to_string(kFioMaxJobs) + " sections in one job file");
        FioSection s;
        s.global = name.starts_with("global");  // fio: strncmp(name, "global", 6)
        s.name = std::move(name);
        s.place = place;
        file.sections.push_back(std::move(s));
        current = file.sections.size() - 1;
        continue;
      }
      if (!current)
        fail(place, "'" + printable(line) + "' outside of a [section] (every option belongs to a job or [global])");
      if (line.starts_with("include") && line.size() > 7 && blank(line[7])) {
        include(std::string(trim_front(line.substr(8))), place, file, *current, depth);
        continue;
      }
      file.sections[*current].options.push_back(option(line, place));
    }
  }

  FioOption option(std::string_view line, const FioPlace& place) const {
    FioOption o;
    o.text = std::string(line);
    o.place = place;
    const std::size_t eq = line.find('=');
    std::string_view key = line.substr(0, eq);
    while (!key.empty() && blank(key.back())) key.remove_suffix(1);
    if (key.empty()) fail(place, "'" + printable(line) + "': an option without a name");
    o.key = std::string(key);
    if (eq != std::string_view::npos) o.value = expand(line.substr(eq + 1), place);
    return o;
  }

  // fio's substitutions in a value: ${NAME} from the environment (unset:
  // empty), then its keywords $pagesize, $mb_memory, $ncpus. fio leaves any
  // other $NAME as written (filename_format's $jobnum is fio's own), and so
  // does iolab: an option that needs a number then refuses it, saying so.
  std::string expand(std::string_view value, const FioPlace& place) const {
    std::string out;
    bool keyword = false;
    for (std::size_t i = 0; i < value.size();) {
      if (out.size() > kFioMaxLineBytes)  // before a long variable repeated grows it further
        fail(place, "the value is longer than " + std::to_string(kFioMaxLineBytes) + " bytes once expanded");
      if (value[i] != '$') {
        out += value[i++];
        continue;
      }
      if (i + 1 < value.size() && value[i + 1] == '{') {
        const std::size_t close = value.find('}', i + 2);
        if (close == std::string_view::npos)
          fail(place, "'" + printable(value) + "': '${' without its '}'");
        const std::string name(value.substr(i + 2, close - i - 2));
        if (auto v = name.empty() || !context_.getenv ? std::nullopt : context_.getenv(name)) out += *v;
        i = close + 1;
        continue;
      }
      bool replaced = false;
      for (const auto& [word, number] : {std::pair<std::string_view, std::uint64_t>{"$pagesize", context_.page_size},
                                         {"$mb_memory", context_.mb_memory},
                                         {"$ncpus", context_.ncpus}}) {
        if (value.substr(i).starts_with(word)) {
          out += std::to_string(number);
          i += word.size();
          replaced = keyword = true;
          break;
        }
      }
      if (replaced) continue;
      out += value[i++];
    }
    if (keyword && out.find_first_of("+-*/%^()") != std::string::npos)
      fail(place, "'" + printable(value) + "': arithmetic on fio's keywords is not supported; write the number");
    if (!out.empty() && trim_front(out).starts_with('('))
      fail(place, "'" + printable(value) + "': fio's arithmetic expressions are not supported; write the number");
    if (out.size() > kFioMaxLineBytes)
      fail(place, "the value is longer than " + std::to_string(kFioMaxLineBytes) + " bytes once expanded");
    if (!valid_utf8(out)) fail(place, "'" + printable(value) + "': not UTF-8 once ${...} is expanded");
    return out;
  }

  void include(const std::string& name, const FioPlace& place, FioJobFile& file, std::size_t section,
               unsigned depth) {
    if (name.empty()) fail(place, "'include' without a file name");
    if (depth + 1 > kFioMaxIncludeDepth)
      fail(place, "includes nested deeper than " + std::to_string(kFioMaxIncludeDepth) + " files");
    if (!context_.read_include) fail(place, "include " + printable(name) + ": includes are not read here");
    // fio looks for the file as written first, then beside the file that includes it.
    std::filesystem::path path(name);
    if (path.is_relative() && !(context_.exists && context_.exists(path))) {
      std::filesystem::path beside = std::filesystem::path(place.file).parent_path() / path;
      if (!std::filesystem::path(place.file).parent_path().empty()) path = beside;
    }
    const std::filesystem::path key = path.lexically_normal();
    for (const auto& open : stack_)
      if (open == key) fail(place, "include " + printable(path.string()) + ": includes itself (an include loop)");
    std::string text;
    try {
      text = context_.read_include(path);
    } catch (const UsageError& e) {
      // The reader names the file; say it once.
      std::string why = e.what();
      const std::string prefix = "invalid fio job " + printable(path.string()) + ": ";
      if (why.starts_with(prefix)) why = why.substr(prefix.size());
      fail(place, "include " + printable(path.string()) + ": " + why);
    }
    total_ += text.size();
    if (total_ > kFioMaxTotalBytes)
      fail(place, "include " + printable(path.string()) + ": the job file and its includes exceed " +
                      format_bytes(static_cast<double>(kFioMaxTotalBytes)));
    stack_.push_back(key);
    parse(text, path.string(), file, section, depth + 1);
    stack_.pop_back();
  }

  const FioParseContext& context_;
  std::vector<std::filesystem::path> stack_;  // the files being read, outermost first
  std::uint64_t total_ = 0;
};

}  // namespace

std::string read_fio_text(const std::filesystem::path& file, std::uint64_t limit) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw UsageError("fio job " + file.string(), "is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > limit)
    throw UsageError("fio job " + file.string(),
                     "larger than " + format_bytes(static_cast<double>(limit)) + " (a job file is text)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  std::string text(static_cast<std::size_t>(limit) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limit)  // it grew while being read
    throw UsageError("fio job " + file.string(), "larger than " + format_bytes(static_cast<double>(limit)));
  return text;
}

FioParseContext system_fio_context() {
  FioParseContext c;
  c.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  c.read_include = [](const std::filesystem::path& p) { return read_fio_text(p); };
  c.exists = [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
  };
  const long page = ::sysconf(_SC_PAGESIZE);
  c.page_size = page > 0 ? static_cast<std::uint64_t>(page) : 4096;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  c.mb_memory = pages > 0 ? static_cast<std::uint64_t>(pages) * c.page_size / (1024 * 1024) : 0;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  c.ncpus = cpus > 0 ? static_cast<std::uint64_t>(cpus) : 1;
  return c;
}

FioJobFile parse_fio_job(std::string_view text, const std::string& source, const FioParseContext& context) {
  if (text.size() > kFioMaxFileBytes)
    fail({source, 0}, "larger than " + format_bytes(static_cast<double>(kFioMaxFileBytes)) + " (a job file is text)");
  return Parser(context).run(text, source);
}

FioJobFile read_fio_job(const std::filesystem::path& file, const FioParseContext& context) {
  return parse_fio_job(read_fio_text(file), file.string(), context);
}

// ---- values, as fio 3.33 reads them ------------------------------------------

namespace {

enum class Kind {
  Text,     // a string
  PerDir,   // a number per direction: "4k", "4k,8k" (read, write, trim), also split at ':' and '-'
  Ranges,   // a range per direction: "4k-16k", "4k:16k,8k-8k"
  Size,     // one number with a size suffix
  Count,    // one integer (fio's int: a size suffix is allowed, as fio allows it)
  Bool,     // 0 or 1, value required
  Flag,     // alone, or with an integer value (0 = off)
  Time,     // an integer with us/ms/s/m/h/d (seconds when none)
  Rw,       // the I/O direction
  KbBase,   // 1024 or 1000
};

struct Spec {
  std::string_view name, alias;
  Kind kind;
};

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

enum Dir { kRead = 0, kWrite = 1, kTrim = 2 };

struct Value {
  std::string text;                                            // Text, Rw (the direction), ioengine
  std::string postfix;                                         // Rw: after ':'
  std::array<std::optional<std::uint64_t>, 3> per_dir;          // PerDir
  std::array<std::optional<std::pair<std::uint64_t, std::uint64_t>>, 3> ranges;  // Ranges
  std::uint64_t number = 0;                                    // Size, Count, Bool, Flag, Time (µs), KbBase
};

struct Setting {
  const Spec* spec = nullptr;
  FioOption option;
  Value value;
  // direct and buffered set one thing (O_DIRECT): the later of the two wins.
  std::string_view key() const { return spec->name == "buffered" ? "direct" : spec->name; }
};

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

// ---- mapping a job -------------------------------------------------------------

std::string seconds_text(std::uint64_t us) { return format_duration(static_cast<double>(us) / 1e6); }

// A job's options once [global] sections, its own and --fio-set are applied.
class JobOptions {
 public:
  void add(Setting s) { settings_.push_back(std::move(s)); }
  // The setting in effect for `key` (the last one), or null.
  const Setting* get(std::string_view key) const {
    for (auto it = settings_.rbegin(); it != settings_.rend(); ++it)
      if (it->key() == key) return &*it;
    return nullptr;
  }
  // The settings in effect, in the order they were written.
  std::vector<const Setting*> in_effect() const {
    std::vector<const Setting*> out;
    for (const auto& s : settings_)
      if (get(s.key()) == &s) out.push_back(&s);
    return out;
  }

 private:
  std::vector<Setting> settings_;
};

struct EngineMapping {
  std::string_view fio;           // fio's ioengine
  std::string_view buffered, direct;  // iolab's method for buffered and O_DIRECT I/O ("" = none)
  std::string_view why_not_buffered, why_not_direct;
  std::string_view how;           // what the pair does, said once
};
constexpr std::array<EngineMapping, 7> kJobEngines{{
    {"psync", "pread", "direct", "", "", "pread(2)/pwrite(2) at explicit offsets, as fio's psync"},
    {"sync", "syscall", "", "",
     "iolab's O_DIRECT method calls pread(2)/pwrite(2) (fio's psync), not read(2)/write(2); use ioengine=psync",
     "read(2)/write(2) at the file position, as fio's sync"},
    {"pvsync", "vectored", "", "", "iolab's vectored method has no O_DIRECT mode; use ioengine=psync or io_uring",
     "preadv(2)/pwritev(2) with one iovec per call, as fio's pvsync"},
    {"pvsync2", "vectored", "", "", "iolab's vectored method has no O_DIRECT mode; use ioengine=psync or io_uring",
     "preadv(2)/pwritev(2) with one iovec per call; fio's pvsync2 calls preadv2(2)/pwritev2(2) with no flags, "
     "the same work"},
    {"mmap", "mmap", "", "", "fio's mmap engine with direct=1 msyncs and drops every block; iolab maps without that",
     "a shared mapping, blocks copied with memcpy; iolab maps the file once, fio maps it each time it opens it"},
    {"libaio", "", "libaio",
     "fio's libaio on a buffered file does each I/O inside io_submit (Linux has no buffered AIO), and iolab's "
     "libaio method is O_DIRECT only; use direct=1, or ioengine=io_uring or psync",
     "", "Linux AIO (io_submit/io_getevents) on an O_DIRECT file, as fio's libaio"},
    {"io_uring", "io_uring", "io_uring", "", "",
     "io_uring through liburing; fio 3.33 sets COOP_TASKRUN, SINGLE_ISSUER and DEFER_TASKRUN on its ring, iolab "
     "only when asked (iolab crosscheck does)"},
}};

struct MapContext {
  std::filesystem::path cwd;
};

class JobMapper {
 public:
  JobMapper(const FioSection& section, const JobOptions& options, std::vector<FioMappedOption> ignored,
            const MapContext& context)
      : section_(section), options_(options), context_(context) {
    job_.section = section.name;
    job_.name = section.name;
    job_.place = section.place;
    job_.ignored = std::move(ignored);
  }

  FioMappedJob map() {
    FileExperiment& e = job_.experiment;
    e.suite = "fio";
    names();
    direction();
    engine();
    block_size();
    file_size();
    depth();
    cache();
    flushes();
    threads();
    repetitions();
    paths();
    reporting();
    e.experiment = job_.name + " · " + std::string(to_string(e.op)) + " " + std::string(to_string(e.pattern)) + " " +
                   size_label(e.block_size) + " " +
                   (e.cache == CacheState::Direct ? "direct" : e.op == Op::Read ? std::string(to_string(e.cache)) : "buffered");
    if (e.sync.flushes()) e.experiment += " sync " + to_string(e.sync);
    if (job_.threads > 1) e.experiment += " x" + std::to_string(job_.threads);
    job_.notes.push_back(traits_.needs_alignment
                             ? "buffers: page-aligned, as fio's for O_DIRECT"
                             : "buffers: iolab's heap buffer starts 64 bytes past a page boundary; fio's starts where "
                               "malloc put it (page-aligned only for O_DIRECT or mem_align)");
    if (e.op == Op::Write && job_.threads == 1)
      job_.notes.push_back(
          "writes: iolab writes a fresh file every pass, its blocks allocated as it writes; fio writes into the file "
          "it created (preallocated by its default fallocate=native) and overwrites it in later loops");
    job_.notes.push_back("latency: iolab's percentiles come from a separate pass timing every call, never from the "
                         "throughput passes; fio times every I/O of its run");
    for (const Setting* s : options_.in_effect()) {
      auto it = mapped_.find(s);
      job_.options.push_back({s->option.text, s->option.place, it == mapped_.end() ? "no effect here" : it->second});
    }
    for (auto& d : defaults_) job_.options.push_back(std::move(d));
    return job_;
  }

 private:
  const Setting* get(std::string_view key) const { return options_.get(key); }
  void say(const Setting* s, std::string text) {
    if (s) mapped_[s] = std::move(text);
  }
  // A default of fio's that decides something, listed with the options.
  void say_default(std::string option, std::string text) {
    defaults_.push_back({std::move(option), FioPlace{"fio's default", 0}, std::move(text)});
  }
  [[noreturn]] void refuse(const Setting* s, const std::string& why) const {
    if (s) fail(s->option.place, "'" + shown(s->option) + "': " + why);
    fail(section_.place, "job [" + printable(section_.name) + "]: " + why);
  }
  bool on(std::string_view key) const {
    const Setting* s = get(key);
    return s && s->value.number != 0;
  }
  std::uint64_t number(std::string_view key, std::uint64_t fallback) const {
    const Setting* s = get(key);
    return s ? s->value.number : fallback;
  }

  void names() {
    if (const Setting* s = get("name")) {
      job_.name = s->value.text;
      say(s, "the job's name in the results (section [" + section_.name + "])");
    }
    if (const Setting* s = get("description")) {
      job_.description = s->value.text;
      say(s, "recorded with the job");
    }
  }

  void direction() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("rw");
    const std::string rw = s ? s->value.text : "read";
    if (rw == "rw" || rw == "readwrite" || rw == "randrw")
      refuse(s, "mixed reads and writes: iolab measures reads or writes, not a mix (not yet)");
    if (rw.find("trim") != std::string::npos) refuse(s, "trim: iolab does not measure trims");
    e.op = rw.find("read") != std::string::npos ? Op::Read : Op::Write;
    e.pattern = rw.starts_with("rand") ? AccessPattern::Rand : AccessPattern::Seq;
    if (s && !s->value.postfix.empty()) {
      const bool none = e.pattern == AccessPattern::Rand ? s->value.postfix == "1" : s->value.postfix == "0";
      if (!none)
        refuse(s, e.pattern == AccessPattern::Rand
                      ? "':" + printable(s->value.postfix) + "': fio issues that many I/Os per random offset; iolab one"
                      : "':" + printable(s->value.postfix) + "': fio skips that much between blocks (or goes backwards); "
                        "iolab reads consecutive blocks");
    }
    std::string text = std::string(to_string(e.op)) + ", " +
                       (e.pattern == AccessPattern::Rand
                            ? "random: every block of the file once, in a fixed-seed order (fio's random map, "
                              "norandommap unset, also touches each block once)"
                            : "sequential");
    if (s) say(s, text);
    else say_default("rw=read", text);
  }

  void engine() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("ioengine");
    const std::string name = s ? s->value.text : "psync";
    const Setting* d = get("direct");
    direct_ = d && (d->spec->name == "buffered" ? d->value.number == 0 : d->value.number != 0);
    const EngineMapping* engine = nullptr;
    for (const auto& candidate : kJobEngines)
      if (candidate.fio == name) engine = &candidate;
    if (!engine) {
      if (name == "posixaio") refuse(s, "iolab has no POSIX AIO (aio_read/aio_write) method");
      refuse(s, "ioengine=" + printable(name) +
                    ": not a file engine iolab has a method for (iolab maps psync, sync, pvsync, pvsync2, mmap, "
                    "libaio, io_uring)");
    }
    const std::string_view method = direct_ ? engine->direct : engine->buffered;
    if (method.empty()) {
      const std::string why(direct_ ? engine->why_not_direct : engine->why_not_buffered);
      refuse(s ? s : d, "ioengine=" + name + " with " + (direct_ ? "direct=1" : "buffered I/O (direct=0)") + ": " + why);
    }
    e.method = std::string(method);
    const io::Method& m = io::find_file_method(e.method);
    io::FileOptions& opts = e.options;
    if (m.traits(opts).direct_optional) opts.direct = direct_;
    traits_ = m.traits(opts);
    const std::string text = "iolab's " + e.method + " method: " + std::string(engine->how);
    if (s) say(s, text);
    else say_default("ioengine=psync", text);
    if (d)
      say(d, direct_ ? "O_DIRECT: iolab opens the file O_DIRECT, buffers page-aligned (as fio's for O_DIRECT)"
                     : "buffered I/O through the page cache");
  }

  void block_size() {
    FileExperiment& e = job_.experiment;
    const Dir dir = e.op == Op::Read ? kRead : kWrite;
    const char* which = dir == kRead ? "read" : "write";
    const Setting* range = get("bsrange");
    const Setting* bs = get("bs");
    std::uint64_t block = 4096;
    if (bs && bs->value.per_dir[dir]) block = *bs->value.per_dir[dir];
    if (range && range->value.ranges[dir]) {
      const auto [low, high] = *range->value.ranges[dir];
      if (low != high)
        refuse(range, "a range of block sizes (" + size_label(low) + " to " + size_label(high) +
                          "): iolab moves one block size per experiment; give one size (bs=)");
      block = low;
      say(range, fmt::format("{} blocks of {} (a range of one size)", which, format_bytes(static_cast<double>(low))));
      if (bs) say(bs, "replaced by bsrange (fio: bsrange wins)");
    } else if (bs) {
      std::string text = fmt::format("{} blocks of {}", which, format_bytes(static_cast<double>(block)));
      const bool list = bs->value.per_dir[kRead] != bs->value.per_dir[kWrite];
      if (list) text += " (fio reads '" + printable(*bs->option.value) + "' as read,write[,trim] sizes, not a range)";
      say(bs, text);
    } else {
      say_default("bs=4k", fmt::format("{} blocks of 4 KiB", which));
    }
    e.block_size = block;
    // One iovec per call, as fio's pvsync engines pass (methods without iovecs ignore it).
    e.options.iov_segment = static_cast<std::size_t>(block);
  }

  void file_size() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("size");
    if (!s)
      refuse(nullptr, "no size=: fio would use the size of the existing file, and iolab creates its own files; give "
                      "size= (or --fio-set size=64m)");
    if (s->value.number == 0) refuse(s, "size 0: the file must hold at least one byte");
    e.file_size = s->value.number;
    say(s, fmt::format("a file of {} per {} (fio: the bytes each job moves; iolab: its file, {} per pass)",
                       format_bytes(static_cast<double>(e.file_size)), "worker",
                       e.op == Op::Read ? "read whole" : "written whole"));
  }

  void depth() {
    io::FileOptions& opts = job_.experiment.options;
    const Setting* qd = get("iodepth");
    const Setting* batch = get("iodepth_batch");
    const Setting* cmin = get("iodepth_batch_complete_min");
    const Setting* cmax = get("iodepth_batch_complete_max");
    const std::uint64_t depth = number("iodepth", 1);
    if (depth == 0 || depth > 4096) refuse(qd, "iodepth from 1 to 4096");
    if (!traits_.queued) {
      opts.queue_depth = 1;
      const std::string why = "no effect: a synchronous engine has one I/O in flight (fio caps the depth at 1 too)";
      say(qd, depth > 1 ? why : "1: one I/O in flight");
      say(batch, why);
      say(cmin, why);
      say(cmax, why);
      return;
    }
    opts.queue_depth = static_cast<unsigned>(depth);
    // fio submits `iodepth_batch` I/Os per call (default 1: each as it is
    // queued; 0 or more than the depth: the depth).
    std::uint64_t submit = number("iodepth_batch", 1);
    if (submit == 0 || submit > depth) submit = depth;
    opts.submit_batch = static_cast<unsigned>(submit);
    say(qd, fmt::format("queue depth {}: {} requests kept in flight", depth, depth));
    const std::string submitted = fmt::format("at most {} request{} per submission call, as fio", submit, submit == 1 ? "" : "s");
    if (batch) say(batch, submitted);
    else say_default("iodepth_batch=1", submitted + " (each as it is queued)");
    if (number("iodepth_batch_complete_min", 1) != 1)
      refuse(cmin, "iolab's queue waits for one completion when it must wait, then reaps up to its submission "
                   "batch of those ready; it cannot wait for more, or poll without waiting");
    say(cmin, "1: wait for at least one completion, as iolab's queue");
    const std::uint64_t reap = std::max<std::uint64_t>(1, number("iodepth_batch_complete_max", 1));
    // iolab's queue reaps at most its submission batch per call.
    const std::uint64_t fio_reap = std::min(reap, depth);
    const std::string reaped =
        fio_reap == submit
            ? fmt::format("reap up to {} completion{} per call, as iolab's queue", fio_reap, fio_reap == 1 ? "" : "s")
            : fmt::format("fio reaps at most {} completion{} per call; iolab's queue reaps up to its submission batch "
                          "({}), {} calls than fio's",
                          fio_reap, fio_reap == 1 ? "" : "s", submit, submit > fio_reap ? "fewer" : "more");
    if (cmax) say(cmax, reaped);
    else say_default("iodepth_batch_complete_max=1", reaped);
  }

  void cache() {
    FileExperiment& e = job_.experiment;
    const Setting* inv = get("invalidate");
    const Setting* pre = get("pre_read");
    if (traits_.bypasses_page_cache) {
      e.cache = CacheState::Direct;
      say(inv, "no effect: O_DIRECT bypasses the page cache");
      say(pre, "no effect: O_DIRECT bypasses the page cache");
      return;
    }
    if (e.op == Op::Write) {
      e.cache = CacheState::Warm;  // not used by writes: each pass writes a fresh file
      const std::string why = "no effect: iolab writes a fresh file every pass, nothing of it cached before";
      say(inv, why);
      say(pre, why);
      return;
    }
    if (on("pre_read")) {
      e.cache = CacheState::Warm;
      say(pre, "warm: iolab reads the file once and proves it resident (mincore) before every pass");
      say(inv, "no effect with pre_read (fio ignores it too)");
    } else if (inv && inv->value.number == 0) {
      e.cache = CacheState::Warm;
      say(inv, "warm: fio leaves the file's pages as they are (a file it just laid out is cached); iolab reads it "
               "once and proves it resident before every pass");
      say(pre, "0: no pre-read");
    } else {
      e.cache = CacheState::Cold;
      const std::string text =
          "cold: iolab evicts the file (fdatasync + fadvise DONTNEED) and proves it evicted before every pass; fio "
          "drops it once, when it opens the file, so its later loops (time_based, loops) read what stayed cached";
      if (inv) say(inv, text);
      else say_default("invalidate=1", text);
      say(pre, "0: no pre-read");
    }
  }

  void flushes() {
    FileExperiment& e = job_.experiment;
    const Setting* fs = get("fsync");
    const Setting* fds = get("fdatasync");
    const Setting* end = get("end_fsync");
    const Setting* close = get("fsync_on_close");
    if (e.op == Op::Read) {
      for (const Setting* s : {fs, fds, end, close}) say(s, "no effect on reads (fio syncs only after writes)");
      return;
    }
    const std::uint64_t every_fsync = number("fsync", 0), every_fdatasync = number("fdatasync", 0);
    const bool at_end = on("end_fsync") || on("fsync_on_close");
    if (every_fsync && every_fdatasync)
      refuse(fds, "both fsync= and fdatasync=: iolab has one flush policy per experiment");
    if ((every_fsync || every_fdatasync) && at_end)
      refuse(on("end_fsync") ? end : close, "a flush every N writes and one at the end: iolab has one flush policy "
                                            "per experiment");
    // fio's mmap engine syncs with msync(MS_SYNC), as iolab's mmap does (its own data sync).
    const bool own_sync = traits_.maps_file;
    SyncPolicy& p = e.sync;
    const std::uint64_t every = every_fsync ? every_fsync : every_fdatasync;
    const Setting* periodic = every_fsync ? fs : fds;
    const io::Durability call = every_fdatasync ? io::Durability::Fdatasync : io::Durability::Fsync;
    const std::string call_name = own_sync ? "msync(MS_SYNC)" : std::string(io::to_string(call));
    if (every) {
      p.call = own_sync ? io::Durability::None : call;
      if (every == 1) {
        p.schedule = FlushSchedule::EveryWrite;
        say(periodic, "an " + call_name + " after every write (iolab's sync policy " + to_string(p) + ")");
      } else {
        p.schedule = FlushSchedule::EveryBytes;
        p.interval = checked_multiply(every, e.block_size, periodic->option);
        say(periodic, fmt::format("an {} after every {} writes ({} written; iolab's sync policy {})", call_name, every,
                                  format_bytes(static_cast<double>(p.interval)), to_string(p)));
      }
    } else if (at_end) {
      p.schedule = FlushSchedule::End;
      p.call = own_sync ? io::Durability::None : io::Durability::Fsync;
      const std::string text = "one " + (own_sync ? std::string("msync(MS_SYNC)") : std::string("fsync")) +
                               " after the last write of each pass, timed (iolab's sync policy " + to_string(p) + ")";
      if (on("end_fsync")) say(end, text);
      else say(end, "0: no flush of its own");
      if (on("fsync_on_close")) say(close, on("end_fsync") ? "the same flush (iolab closes the file once per pass)" : text);
      else say(close, "0: no flush of its own");
    } else {
      say(fs, "0: no flush");
      say(fds, "0: no flush");
      say(end, "0: no flush");
      say(close, "0: no flush");
      if (!traits_.bypasses_page_cache)
        say_default("fsync=0", "no flush: the written data ends in the page cache, as fio's");
    }
  }

  void threads() {
    const Setting* s = get("numjobs");
    const std::uint64_t n = number("numjobs", 1);
    if (n == 0 || n > 1024) refuse(s, "numjobs from 1 to 1024");
    job_.threads = static_cast<unsigned>(n);
    if (n == 1) {
      say(s, "1: one worker");
      return;
    }
    FileExperiment& e = job_.experiment;
    if (get("filename"))
      refuse(s, fmt::format("numjobs={} with one filename: fio's jobs then share the file, each doing all of its I/O; "
                            "iolab's threads each own a file (leave out filename= to give each job its own, as fio "
                            "does then)",
                            n));
    if (e.cache == CacheState::Cold)
      refuse(s, fmt::format("numjobs={} with a cold cache (invalidate=1, fio's default): iolab's threads read warm or "
                            "O_DIRECT files only; add invalidate=0 (warm) or direct=1",
                            n));
    if (e.sync.schedule != FlushSchedule::None && e.sync.schedule != FlushSchedule::End)
      refuse(s, fmt::format("numjobs={} with a flush every N writes: iolab's threads flush only at the end", n));
    if (e.pattern == AccessPattern::Rand && e.op == Op::Write && traits_.maps_file)
      refuse(s, "random writes through a shared mapping on several threads are not an iolab workload");
    std::string text = fmt::format(
        "{} threads (workers released together by a barrier), each with a file of its own of {}, as fio's {} clones "
        "each with its own file; one record for all, first done and last done",
        n, format_bytes(static_cast<double>(e.file_size)), n);
    if (e.sync.schedule == FlushSchedule::End)
      text += "; each worker's flush at the end is the method's data sync (fdatasync, msync), where fio calls fsync";
    if (e.op == Op::Write) text += "; each pass writes fresh files, preallocated (untimed) as fio's fallocate does";
    say(s, text);
  }

  void repetitions() {
    const Setting* rt = get("runtime");
    const Setting* tb = get("time_based");
    const Setting* lp = get("loops");
    const std::uint64_t runtime_us = number("runtime", 0);
    const bool time_based = on("time_based");
    const std::uint64_t loops = number("loops", 1);
    if (loops == 0 || loops > 100000) refuse(lp, "loops from 1 to 100000");
    if (runtime_us > 86400ull * 1000000) refuse(rt, "at most a day");
    if (time_based && runtime_us == 0) refuse(tb, "time_based without a runtime: fio would run until stopped");
    if (time_based) {
      // The repetitions share the time: each at least runtime / repetitions
      // (the command knows how many), all within the runtime.
      job_.time_based_s = static_cast<double>(runtime_us) / 1e6;
      say(tb, "timed repetitions that together last the runtime (each at least runtime / repetitions); fio loops "
              "over the file until the time is up and stops mid-file, iolab repeats whole passes");
      say(rt, "the time the timed repetitions take in all: " + seconds_text(runtime_us));
      say(lp, "no effect with time_based (fio's time decides)");
      return;
    }
    say(tb, "0: the job ends when its I/O is done");
    if (loops > 1) {
      job_.reps = static_cast<unsigned>(loops);
      job_.min_time = 0.0;
      say(lp, fmt::format("{} timed repetitions of one pass each (fio's {} loops; fio reports them as one figure, "
                          "iolab each as a repetition, with their spread)",
                          loops, loops));
    } else {
      say(lp, "1: iolab's repetitions (several passes, for a spread)");
    }
    if (runtime_us) {
      job_.max_time = static_cast<double>(runtime_us) / 1e6;
      say(rt, "caps the time the timed repetitions may take when lengthened at " + seconds_text(runtime_us) +
                  " (iolab never cuts a pass short; fio stops when the time is up)");
    }
  }

  void paths() {
    const Setting* dir = get("directory");
    const Setting* name = get("filename");
    const std::filesystem::path cwd = context_.cwd.empty() ? std::filesystem::current_path() : context_.cwd;
    auto absolute = [&](const std::filesystem::path& p) { return p.is_absolute() ? p : cwd / p; };
    std::filesystem::path parent = cwd;
    if (dir) {
      if (dir->value.text.find(':') != std::string::npos)
        refuse(dir, "several directories: iolab measures one filesystem per run");
      parent = absolute(dir->value.text);
    }
    if (name) {
      const std::string& f = name->value.text;
      if (f == "-") refuse(name, "stdin/stdout: iolab reads and writes files it creates");
      for (std::size_t i = 0; i < f.size(); ++i)
        if (f[i] == ':' && (i == 0 || f[i - 1] != '\\'))
          refuse(name, "several files: iolab's experiment has one file (per worker)");
      std::string unescaped;
      for (std::size_t i = 0; i < f.size(); ++i)
        if (!(f[i] == '\\' && i + 1 < f.size() && f[i + 1] == ':')) unescaped += f[i];
      // fio puts directory= in front of the filename, whatever it is.
      const std::filesystem::path full = dir ? parent / unescaped : absolute(unescaped);
      struct stat st {};
      const bool exists = ::lstat(full.c_str(), &st) == 0;
      if (full.lexically_normal().parent_path() == "/dev" || (exists && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))))
        refuse(name, "names a device (" + printable(full.string()) + "): iolab writes only files it creates in its "
                     "own scratch directory");
      if (exists)
        refuse(name, "names an existing " + std::string(S_ISDIR(st.st_mode) ? "directory" : "file") + " (" +
                         printable(full.string()) + "): iolab never touches files it did not create; name one that "
                         "does not exist, or use directory=");
      parent = full.parent_path();
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec))
      refuse(name ? name : dir, "the directory " + printable(parent.string()) + " does not exist (fio would not create "
                                "it either)");
    job_.scratch_parent = parent;
    const std::string where = "iolab's scratch directory (a fresh iolab-XXXXXX, removed afterwards) goes in " +
                              parent.string() + "; iolab writes only files it creates there";
    if (name) say(name, where + " (no file of this name is created)");
    if (dir) say(dir, name ? "where the filename is" : where);
    if (!name && !dir) say_default("directory=.", where + " (fio writes in the working directory)");
  }

  void reporting() {
    if (const Setting* kb = get("kb_base"))
      say(kb, kb->value.number == 1024 ? "k, m, g... are powers of 1024 and kib, mib... of 1000 (fio's default rule)"
                                       : "k, m, g... are powers of 1000 and kib, mib... of 1024");
    const Setting* th = get("thread");
    const Setting* gr = get("group_reporting");
    const Setting* sw = get("stonewall");
    say(th, "no effect: iolab's workers are always threads of one process");
    say(gr, "no effect: iolab reports a job's workers as one record (first done and last done)");
    job_.stonewall = on("stonewall");
    say(sw, "iolab runs every job alone, one after another, stonewall or not");
  }

  const FioSection& section_;
  const JobOptions& options_;
  const MapContext& context_;
  FioMappedJob job_;
  bool direct_ = false;
  io::MethodTraits traits_;
  std::map<const Setting*, std::string> mapped_;
  std::vector<FioMappedOption> defaults_;
};

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

}  // namespace

std::vector<FioMappedJob> map_fio_jobs(const FioJobFile& file, const FioMapSettings& settings) {
  const MapContext context{settings.cwd};
  std::vector<FioOption> overrides;
  for (const auto& text : settings.overrides) {
    FioOption o = override_option(text);
    setting(o, 1024, false);  // an unknown option or a bad value fails before any job is looked at
    overrides.push_back(std::move(o));
  }
  unsigned override_kb = 0;
  for (const auto& o : overrides)
    if (find_spec(o.key)->kind == Kind::KbBase) override_kb = static_cast<unsigned>(parse_value(*find_spec(o.key), o, 1024).number);

  JobOptions globals;
  std::vector<FioMappedOption> global_ignored;
  unsigned global_kb = 1024;
  std::vector<FioMappedJob> jobs;
  for (const FioSection& section : file.sections) {
    const unsigned kb = override_kb ? override_kb : own_kb_base(section).value_or(global_kb);
    JobOptions options = section.global ? JobOptions() : globals;
    std::vector<FioMappedOption> ignored = global_ignored;
    std::vector<Setting> own;
    for (const auto& o : section.options) {
      if (auto s = setting(o, kb, settings.lenient)) own.push_back(std::move(*s));
      else ignored.push_back({o.text, o.place, "ignored (--fio-lenient): iolab does not map this option"});
    }
    if (section.global) {
      for (auto& s : own) globals.add(std::move(s));
      global_ignored = std::move(ignored);
      global_kb = kb;
      continue;
    }
    for (auto& s : own) options.add(std::move(s));
    for (const auto& o : overrides) options.add(*setting(o, kb, false));
    jobs.push_back(JobMapper(section, options, std::move(ignored), context).map());
  }
  if (jobs.empty()) fail({file.path, 0}, "no job: only [global] sections (fio: \"No job(s) defined\")");
  // fio starts the jobs between two stonewalls together; iolab runs each alone.
  for (std::size_t first = 0; first < jobs.size();) {
    std::size_t end = first + 1;
    while (end < jobs.size() && !jobs[end].stonewall) ++end;
    if (end - first > 1)
      for (std::size_t i = first; i < end; ++i) {
        std::vector<std::string> others;
        for (std::size_t k = first; k < end; ++k)
          if (k != i) others.push_back("[" + jobs[k].section + "]");
        jobs[i].notes.push_back(fmt::format(
            "fio runs this job at the same time as {} (no stonewall between them), their I/O competing; iolab runs "
            "each job alone, one after another",
            fmt::join(others, ", ")));
      }
    first = end;
  }
  return jobs;
}

nlohmann::json to_json(const FioMappedJob& job, const std::string& job_file) {
  auto list = [](const std::vector<FioMappedOption>& options) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& o : options) a.push_back({{"option", o.option}, {"at", to_string(o.place)}, {"mapped", o.mapping}});
    return a;
  };
  nlohmann::json j{{"job_file", job_file},
                   {"section", job.section},
                   {"name", job.name},
                   {"description", job.description},
                   {"at", to_string(job.place)},
                   {"threads", job.threads},
                   {"scratch_parent", job.scratch_parent.string()},
                   {"stonewall", job.stonewall},
                   {"options", list(job.options)},
                   {"ignored", list(job.ignored)},
                   {"notes", job.notes}};
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["reps"] = optional(job.reps);
  j["min_time_s"] = optional(job.min_time);
  j["max_time_s"] = optional(job.max_time);
  j["time_based_s"] = optional(job.time_based_s);
  return j;
}

}  // namespace iolab::harness
