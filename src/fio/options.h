// Inside fio/: what job.cpp (reading job files), values.cpp
// (option values as fio 3.33 reads them) and mapping*.cpp (jobs as iolab
// experiments) share.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/fio/job.h"

namespace iolab::fio::detail {

[[noreturn]] inline void fail(const FioPlace& place, const std::string& why) {
  throw UsageError("fio job " + to_string(place), why);
}

inline bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
std::string_view trim_front(std::string_view s);
// Whether `s` is UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): names and options go into the results' JSON, which holds UTF-8 only.
bool valid_utf8(std::string_view s);

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

// The option's spec by fio name or alias; null for an option iolab does not map.
const Spec* find_spec(std::string_view key);

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

// The option as written, made printable.
std::string shown(const FioOption& o);
// a * b, refused as "too large" past 2^64 - 1.
std::uint64_t checked_multiply(std::uint64_t a, std::uint64_t b, const FioOption& o);
// The option's value read as fio 3.33 reads an option of its kind, under `kb_base`.
Value parse_value(const Spec& spec, const FioOption& o, unsigned kb_base);
// The option `o` as a Setting read under `kb_base`, or nullopt when iolab
// does not map it (then refused, or ignored under lenient).
std::optional<Setting> setting(const FioOption& o, unsigned kb_base, bool lenient);
// A section's kb_base: fio applies it before the section's other options.
std::optional<unsigned> own_kb_base(const FioSection& s);
// A --fio-set KEY=VALUE as an option.
FioOption override_option(const std::string& text);
// "1.5 s" for microseconds.
std::string seconds_text(std::uint64_t us);

// A job's options once [global] sections, its own and --fio-set are applied.
//
// Only the settings in effect are kept (a later one of a key replaces the
// earlier), so a job's options are at most one per option iolab maps, however
// many lines the job file repeats them on: copying [global]'s into each of
// 4,096 jobs, and looking them up, costs the same for 60,000 bs= lines as for one.
class JobOptions {
 public:
  void add(Setting s) {
    const std::string_view key = s.key();
    std::erase_if(settings_, [&](const Setting& old) { return old.key() == key; });
    settings_.push_back(std::move(s));
  }
  // The setting in effect for `key` (the last one), or null.
  const Setting* get(std::string_view key) const {
    for (const auto& s : settings_)
      if (s.key() == key) return &s;
    return nullptr;
  }
  // The settings in effect, in the order their last setting was written.
  std::vector<const Setting*> in_effect() const {
    std::vector<const Setting*> out;
    for (const auto& s : settings_) out.push_back(&s);
    return out;
  }

 private:
  std::vector<Setting> settings_;  // one per key
};

struct EngineMapping {
  std::string_view fio;           // fio's ioengine
  std::string_view buffered, direct;  // iolab's method for buffered and O_DIRECT I/O ("" = none)
  std::string_view why_not_buffered, why_not_direct;
  std::string_view how;           // what the pair does, said once
};
inline constexpr std::array<EngineMapping, 7> kJobEngines{{
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

}  // namespace iolab::fio::detail
