// Internal to the report layer: escaping, number formats, and the figures
// every view derives from a Result (rates, ratios, noise).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "iolab/harness/result.h"

namespace iolab::report {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);
// JSON that is safe inside <script>: '<', '>', '&' written as \u003c..., so
// no "</script" or "<!--" can appear; invalid UTF-8 is replaced, not thrown.
std::string script_json(const nlohmann::json& j);

// "1,048,576".
std::string grouped(std::uint64_t n);
// A number with `digits` significant digits, no exponent: 9.14 -> "9.1", 1234 -> "1,234".
std::string sig(double v, int digits = 2);
// "9.1x", "1.42x" (3 significant digits below 2, else 2).
std::string times(double ratio);
// Byte counts as people write them: "32 B", "1 KiB", "1.5 MiB".
std::string bytes_text(std::uint64_t bytes);
// "1.0 µs" style duration with two significant digits.
std::string duration_text(double seconds);
// "45%".
std::string percent(double fraction);

// A record with figures to show: it ran (not skipped) and has samples.
bool measured(const harness::Result& r);
// Whether the record's work is measured in bytes (else in operations).
bool counts_bytes(const harness::Result& r);
// Bytes, or operations when the record moved no bytes (allocation, store phases).
double work(const harness::Result& r);
// Work per second at the median (MiB/s for bytes, ops/s otherwise), and the
// range over repetitions (slowest, fastest).
struct Rate {
  double median = 0, slowest = 0, fastest = 0;
};
Rate rate(const harness::Result& r);
// CPU seconds (user + system, per repetition) per GiB moved; 0 when no bytes.
double cpu_per_gib(const harness::Result& r);
// Median seconds per call of the operation that moved the data (io_calls, else ops).
double seconds_per_call(const harness::Result& r);

// How many times faster `a` did the same work than `b` (> 1: a is faster),
// hyperfine-style: ratio of mean times per unit of work, with the standard
// deviation propagated from both relative standard deviations.
struct Speedup {
  double ratio = 1;
  double stddev = 0;
  // Repetitions enough (>= 2 each) to judge the noise at all.
  bool noise_known = false;
  // a's slowest repetition beat b's fastest, or the ratio is more than two
  // standard deviations away from 1 in a's favour.
  bool beyond_noise = false;
};
Speedup speedup(const harness::Result& a, const harness::Result& b);

// "pread", "syscall (aligned)": the method, and the buffer when it is not the plain heap one.
std::string method_label(const harness::Result& r);
// Cache state class used to group and to fill the decision table: "warm",
// "cold" (cold, or O_DIRECT which never uses the cache), or the label as is.
std::string cache_class(const harness::Result& r);
// Flush policy class of a record: "none", "end", "every", "every-16k", "async-16k", "every-1000-ops".
std::string sync_class(const harness::Result& r);

}  // namespace iolab::report
