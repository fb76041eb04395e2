// The record model (record.h): figures derived from a record's samples,
// the names of its labels, and its warnings.
#include "iolab/results/record.h"

#include <algorithm>

#include "iolab/base/names.h"
#include "iolab/base/units.h"

namespace iolab::results {

Summary Result::seconds() const {
  if (samples_s.empty()) return {};
  return summarize(samples_s);
}

double Result::seconds_per_pass() const {
  if (samples_s.empty()) return 0;
  return seconds().median / static_cast<double>(std::max(1u, passes));
}

std::optional<double> Result::ns_per_op() const {
  if (samples_s.empty() || ops == 0) return std::nullopt;
  return seconds().median * 1e9 / static_cast<double>(ops);
}

Result::Spread Result::spread_seconds() const {
  if (samples_s.empty()) return {};
  if (pass_s && pass_s->n > 0) {
    const double k = static_cast<double>(std::max(1u, passes));
    const bool many = pass_s->n >= 20;
    return {(many ? pass_s->p95 : pass_s->max) * k, (many ? pass_s->p5 : pass_s->min) * k};
  }
  Summary s = seconds();
  return {s.max, s.min};
}

double Result::median_mib_per_s() const {
  Summary s = seconds();
  return s.median > 0 ? static_cast<double>(bytes) / kMiB / s.median : 0;
}

double Result::median_ops_per_s() const {
  Summary s = seconds();
  return s.median > 0 ? static_cast<double>(ops) / s.median : 0;
}

namespace {
// How a latency was obtained, in words (console, report).
constexpr NameTable<LatencySource, 3> kLatencySourceTexts{
    {{LatencySource::EveryCall, "every call of a separate pass"},
     {LatencySource::EveryRequest, "every request of a separate pass, submission to completion"},
     {LatencySource::EveryOp, "every operation, as it ran"}}};
constexpr NameTable<WarningKind, 8> kWarningKinds{
    {{WarningKind::TooShort, "too_short"}, {WarningKind::Outliers, "outliers"}, {WarningKind::NotWarm, "not_warm"},
     {WarningKind::NotCold, "not_cold"}, {WarningKind::CacheIgnored, "cache_ignored"},
     {WarningKind::SourceNotResident, "source_not_resident"}, {WarningKind::ShortLastCall, "short_last_call"},
     {WarningKind::Note, "note"}}};
}  // namespace

std::string_view to_string(LatencySource s) { return name_of(kLatencySourceTexts, s); }

std::string_view to_string(WarningKind k) { return name_of(kWarningKinds, k); }
// Unknown kinds (a newer file's) read as notes.
WarningKind parse_warning_kind(std::string_view code) { return value_of(kWarningKinds, code).value_or(WarningKind::Note); }

void Result::warn(WarningKind kind, std::string text, std::vector<std::string> subjects) {
  if (has_warning(kind)) return;
  warnings.push_back(Warning{kind, std::move(subjects), std::move(text)});
}
bool Result::has_warning(WarningKind kind) const {
  for (const auto& w : warnings)
    if (w.kind == kind) return true;
  return false;
}

std::string pattern_name(const Result& r) { return r.pattern ? std::string(to_string(*r.pattern)) : ""; }
std::string buffer_name(const Result& r) { return r.buffer ? std::string(io::to_string(*r.buffer)) : ""; }
std::string cache_name(const Result& r) { return r.cache ? std::string(to_string(*r.cache)) : ""; }

Latency latency_of(const LatencyHistogram& h, LatencySource source) {
  return Latency{h.percentile(0.50), h.percentile(0.90), h.percentile(0.99), h.percentile(0.999),
                 static_cast<double>(h.max()), h.count(), source};
}

bool flushes_every_write(const Result& r) {
  if (r.sync.schedule == io::FlushSchedule::EveryWrite) return true;
  auto it = r.extra.find("flush_every_write");
  return it != r.extra.end() && it->is_boolean() && it->get<bool>();
}

std::string destination(const Result& r) {
  if (!writes_data(r.op)) return "";
  if (r.cache == CacheState::Direct && !r.sync.flushes()) return "on the device (O_DIRECT; its write cache not flushed)";
  if (!r.sync.flushes()) return "page cache only (not flushed)";
  std::string policy = to_string(r.sync);
  // every-16k with 64 KiB writes crosses a boundary at every write: it is "every" in all but name.
  if (r.sync.schedule == io::FlushSchedule::EveryBytes && flushes_every_write(r)) policy += ", i.e. after every write";
  return "flushed (" + policy + ")";
}

}  // namespace iolab::results
