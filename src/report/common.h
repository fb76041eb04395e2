// Internal to the report layer: number formats, text from results files made
// safe to show, and the figures every view derives from a Result (rates per
// unit of work, per-pass counts, whether a figure can be trusted).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/base/units.h"
#include "iolab/harness/comparison.h"
#include "iolab/results/record.h"

namespace iolab::report {

// Text from outside (results files, job files, command lines) as it may be
// shown: every control character (C0, DEL, C1, including newline and tab),
// U+2028/U+2029 and the bidirectional overrides written as visible escapes
// ("\x1b", "\u2028"), invalid UTF-8 replaced by U+FFFD. On a terminal it
// cannot move the cursor or forge a line; in a chart it cannot break the
// chart library's expression parser (which rejects U+2028 in strings).
std::string visible(std::string_view text);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);
// Text for a Markdown table cell: visible() (so no line break ends the row)
// with '|' escaped (so it does not end the cell).
std::string markdown_cell(std::string_view text);

// The one way a Markdown table is written (compare, the decision map, the
// results exporter): a header row, its rule with each column's alignment,
// and rows whose cells are text, escaped by markdown_cell as they are added.
class MarkdownTable {
 public:
  enum class Align { Left, Right };
  // Columns past `align` are left-aligned.
  explicit MarkdownTable(const std::vector<std::string>& header, std::vector<Align> align = {});
  void add(const std::vector<std::string>& cells);
  std::string render() const;

 private:
  std::string out_;
};
// JSON that is safe inside <script>: '<', '>', '&', U+2028 and U+2029
// written as \u escapes, so no "</script" or "<!--" can appear and the text
// is valid JavaScript too; invalid UTF-8 is replaced, not thrown.
std::string script_json(const nlohmann::json& j);
// The same escapes on JSON text already written as nlohmann's dump() writes it.
std::string script_safe(std::string text);

// "1,048,576".
std::string grouped(std::uint64_t n);
// A count that may come as a double (a per-pass share, a figure from a file):
// rounded, clamped to 0 .. 1.8e19, grouped.
std::string count(double n);
// A number with `digits` significant digits, no exponent: 9.14 -> "9.1", 1234 -> "1,234".
std::string sig(double v, int digits = 2);
// "9.1x", "1.42x" (3 significant digits below 2, else 2).
std::string times(double ratio);
// Byte counts as people write them: "32 B", "1 KiB", "1.5 MiB".
std::string bytes_text(std::uint64_t bytes);
// "1.0 µs" style duration with two significant digits.
std::string duration_text(double seconds);

// A record with figures to show: it ran (not skipped), moved some work, and
// every repetition took a measurable time (finite, at least 1 ns). A file
// whose samples are 0 or denormal has no rate: such records are listed with
// a warning, never charted, compared or ranked.
bool measured(const results::Result& r);
// Why a record that ran has no figures to show ("" when it has, or was skipped).
std::string unusable_reason(const results::Result& r);
// Whether the record's work is measured in bytes (else in operations).
bool counts_bytes(const results::Result& r);
// Bytes, or operations when the record moved no bytes, per repetition.
double work(const results::Result& r);
// Passes of the workload per timed repetition (at least 1).
double passes(const results::Result& r);
// A per-repetition count (calls, faults, CPU seconds) per pass of the workload.
double per_pass(const results::Result& r, double per_repetition);
// Work per second at the median (MiB/s for bytes, ops/s otherwise), and the
// range over repetitions (slowest, fastest). Zero for a record not measured.
struct Rate {
  double median = 0, slowest = 0, fastest = 0;
};
Rate rate(const results::Result& r);
// Operations per second (IOPS) at the median, and the range: for charts
// whose y is operations whatever the record moved. Zero for a record not measured.
Rate ops_rate(const results::Result& r);
// Work per second of each repetition (same unit as rate()).
std::vector<double> rates(const results::Result& r);
// CPU seconds (user + system) per GiB moved; 0 when no bytes.
double cpu_per_gib(const results::Result& r);
// Median seconds per call of the operation that moved the data (io_calls, else ops).
double seconds_per_call(const results::Result& r);

// Whether `a` clearly beats `b`: both have at least two repetitions, a's
// slowest repetition is faster than b's fastest, and a's median is more than
// thresholds::kTieRatio times b's. The one rule the explanations and the
// decision table call a lead "beyond the noise" by.
bool clearly_faster(const results::Result& a, const results::Result& b);

// The reasons a record's figure deserves less trust, as warning kinds
// ("too_short", "outliers", "not_warm", "not_cold"): the harness's warnings
// of those kinds, and the same checks redone on the record itself (files
// from older versions or elsewhere may lack them). Empty: trusted.
std::vector<std::string> distrust(const results::Result& r);

// "pread", "syscall (aligned)": the method, and the buffer when it is not the plain heap one.
std::string method_label(const results::Result& r);
// Queued methods: "qd32", plus io_uring options ("qd32+registered files");
// "" for the others. On every queued record's label: a figure at QD 1 is a
// verdict on the queue depth, not on the method.
std::string queue_label(const results::Result& r);
// Requests in flight in all, from extra.total_depth (the queue-depth curve's
// x): a positive count, else 0.
double total_depth(const results::Result& r);
// The memory suite's working set / memory limit, from extra.working_set_ratio
// (its charts' x): a positive number, else 0.
double working_set_ratio(const results::Result& r);
// io_uring's options from extra.io_options ("+registered files+sqpoll"), "" without.
std::string io_options_text(const results::Result& r);
// Cache state class used to group and to fill the decision table: "warm",
// "cold" (cold, or O_DIRECT which never uses the cache), or "".
std::string cache_class(const results::Result& r);
// Flush policy class of a record: "none", "end", "every", "every-16k", "async-16k", "every-1000-ops".
std::string sync_class(const results::Result& r);
using results::destination;  // where a write's bytes ended (result.h), as the console says it
// Flushes per pass and bytes per flush ("16 flushes per pass, 16 KiB each"),
// from extra.flushes and extra.bytes_per_flush; "" when the record has none.
std::string flushes_text(const results::Result& r);
// How the latency percentiles were obtained: "every call, 8,192 samples".
std::string latency_source_text(const results::Result& r);
// One candidate over another with its interval: "1.07x (0.973..1.34, 95.8%
// interval, 11 rounds)", or "1.07x (no interval at 3 rounds)".
std::string interval_text(const harness::RatioInterval& r);

}  // namespace iolab::report
