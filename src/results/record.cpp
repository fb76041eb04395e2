#include "iolab/base/units.h"
#include "iolab/results/record.h"

#include <cmath>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>

#include "iolab/base/error.h"
#include "iolab/base/input_file.h"
#include "iolab/io/publish.h"
#include "json.h"
#include "iolab/version.h"

namespace iolab::harness {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

Summary Result::seconds() const {
  if (samples_s.empty()) return {};
  return summarize(samples_s);
}

double Result::median_mib_per_s() const {
  Summary s = seconds();
  return s.median > 0 ? static_cast<double>(bytes) / kMiB / s.median : 0;
}

double Result::median_ops_per_s() const {
  Summary s = seconds();
  return s.median > 0 ? static_cast<double>(ops) / s.median : 0;
}

json to_json(const Environment& e) {
  return json{{"hostname", e.hostname},
              {"cpu_model", e.cpu_model},
              {"cores", e.cores},
              {"ram_bytes", e.ram_bytes},
              {"kernel", e.kernel},
              {"scratch_dir", e.scratch_dir},
              {"fs_type", e.fs_type},
              {"mount_options", e.mount_options},
              {"device", e.device},
              {"rotational", e.rotational ? json(*e.rotational) : json(nullptr)},
              {"scheduler", e.scheduler},
              {"iolab_version", e.iolab_version},
              {"git_commit", e.git_commit},
              {"compiler", e.compiler},
              {"build_type", e.build_type},
              {"root", e.root},
              {"can_drop_caches", e.can_drop_caches},
              {"created", e.created},
              {"command", e.command},
              {"block_device", e.block_device},
              {"vm_dirty", e.vm_dirty},
              {"block_queue", e.block_queue}};
}

std::string_view to_string(LatencySource s) {
  switch (s) {
    case LatencySource::EveryCall: return "every call of a separate pass";
    case LatencySource::EveryRequest: return "every request of a separate pass, submission to completion";
    case LatencySource::EveryOp: return "every operation, as it ran";
  }
  return "?";
}

namespace {
constexpr std::pair<WarningKind, std::string_view> kWarningKinds[] = {
    {WarningKind::TooShort, "too_short"},
    {WarningKind::Outliers, "outliers"},
    {WarningKind::NotWarm, "not_warm"},
    {WarningKind::NotCold, "not_cold"},
    {WarningKind::CacheIgnored, "cache_ignored"},
    {WarningKind::SourceNotResident, "source_not_resident"},
    {WarningKind::ShortLastCall, "short_last_call"},
    {WarningKind::Note, "note"},
};
std::string_view latency_source_code(LatencySource s) {
  switch (s) {
    case LatencySource::EveryCall: return "every_call";
    case LatencySource::EveryRequest: return "every_request";
    case LatencySource::EveryOp: return "every_op";
  }
  return "every_call";
}
}  // namespace

std::string_view to_string(WarningKind k) {
  for (const auto& [kind, code] : kWarningKinds)
    if (kind == k) return code;
  return "note";
}
WarningKind parse_warning_kind(std::string_view code) {
  for (const auto& [kind, c] : kWarningKinds)
    if (c == code) return kind;
  return WarningKind::Note;
}

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
  if (r.sync.schedule == FlushSchedule::EveryWrite) return true;
  auto it = r.extra.find("flush_every_write");
  return it != r.extra.end() && it->is_boolean() && it->get<bool>();
}

std::string destination(const Result& r) {
  if (!writes_data(r.op)) return "";
  if (r.cache == CacheState::Direct && !r.sync.flushes()) return "on the device (O_DIRECT; its write cache not flushed)";
  if (!r.sync.flushes()) return "page cache only (not flushed)";
  std::string policy = to_string(r.sync);
  // every-16k with 64 KiB writes crosses a boundary at every write: it is "every" in all but name.
  if (r.sync.schedule == FlushSchedule::EveryBytes && flushes_every_write(r)) policy += ", i.e. after every write";
  return "flushed (" + policy + ")";
}

json to_json(const Result& r) {
  Summary s = r.seconds();
  auto rate = [&](double sec) { return sec > 0 ? static_cast<double>(r.bytes) / kMiB / sec : 0.0; };
  auto ops = [&](double sec) { return sec > 0 ? static_cast<double>(r.ops) / sec : 0.0; };
  json warnings = json::array();
  for (const auto& w : r.warnings) warnings.push_back({{"kind", to_string(w.kind)}, {"subjects", w.subjects}, {"text", w.text}});
  json latency = nullptr;
  if (r.latency_ns) {
    const Latency& l = *r.latency_ns;
    latency = {{"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"p999", l.p999}, {"max", l.max},
               {"samples", l.samples}, {"source", latency_source_code(l.source)}};
  }
  json j{{"suite", r.suite},
         {"experiment", r.experiment},
         {"method", r.method},
         {"op", to_string(r.op)},
         {"pattern", r.pattern ? json(to_string(*r.pattern)) : json("")},
         {"block_size", r.block_size},
         {"file_size", r.file_size},
         {"buffer", r.buffer ? json(io::to_string(*r.buffer)) : json("")},
         {"buffer_offset", r.buffer_offset ? json(*r.buffer_offset) : json(nullptr)},
         {"cache", r.cache ? json(to_string(*r.cache)) : json("")},
         {"cache_method", r.cache_method},
         {"resident_fraction", opt(r.resident_fraction)},
         {"sync", to_string(r.sync)},
         {"threads", r.threads},
         {"queue_depth", r.queue_depth ? json(*r.queue_depth) : json(nullptr)},
         {"reps", r.reps},
         {"passes", r.passes},
         {"bytes", r.bytes},
         {"ops", r.ops},
         {"samples_s", r.samples_s},
         {"pass_seconds", r.pass_s ? json{{"n", r.pass_s->n}, {"median", r.pass_s->median}, {"mean", r.pass_s->mean},
                                          {"stddev", r.pass_s->stddev}, {"min", r.pass_s->min}, {"max", r.pass_s->max},
                                          {"p5", r.pass_s->p5}, {"p95", r.pass_s->p95}}
                                   : json(nullptr)},
         {"seconds", {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"stddev", s.stddev}, {"cv", s.cv}}},
         {"mib_per_s", {{"median", rate(s.median)}, {"min", rate(s.max)}, {"max", rate(s.min)}}},
         {"ops_per_s", {{"median", ops(s.median)}, {"min", ops(s.max)}, {"max", ops(s.min)}}},
         {"latency_ns", latency},
         {"cpu", {{"user_s", r.user_s}, {"sys_s", r.sys_s}}},
         {"faults", {{"minor", r.minor_faults}, {"major", r.major_faults}}},
         {"ctx", {{"voluntary", r.voluntary_ctx}, {"involuntary", r.involuntary_ctx}}},
         {"io_calls", r.io_calls},
         {"storage", {{"read_bytes", r.storage_read_bytes}, {"dirtied_bytes", r.dirtied_bytes}}},
         {"device", r.device_write_bytes ? json{{"read_bytes", r.device_read_bytes.value_or(0)},
                                                {"write_bytes", *r.device_write_bytes}}
                                         : json(nullptr)},
         {"verified", r.verified},
         {"skipped", r.skipped ? json(*r.skipped) : json(nullptr)},
         {"warnings", warnings},
         {"reference", r.reference ? json{{"source", r.reference->source}, {"value", r.reference->value}, {"unit", r.reference->unit}}
                                   : json(nullptr)},
         {"extra", r.extra}};
  return j;
}

json to_json(const Results& r) {
  json results = json::array();
  for (const auto& x : r.results) results.push_back(to_json(x));
  return json{{"format", kResultsFormat},
              {"schema_version", kResultsSchemaVersion},
              {"incomplete", r.incomplete ? json(*r.incomplete) : json(nullptr)},
              {"environment", to_json(r.environment)},
              {"results", results}};
}

namespace results_json {

Result result_from_json(const Reader& rd, const json& x, const std::string& at, int version) {
  Result r;
  if (!x.is_object()) rd.fail(at, "expected an object");
  for (const char* key : {"suite", "experiment", "method"})
    if (!rd.find(x, at, key)) rd.fail(at, std::string("lacks \"") + key + "\"");
  r.suite = rd.text(x, at, "suite");
  r.experiment = rd.text(x, at, "experiment");
  r.method = rd.text(x, at, "method");
  r.op = rd.parsed(x, at, "op", [](const std::string& s) { return parse_op_name(s.empty() ? "read" : s); });
  std::string pattern = rd.text(x, at, "pattern");
  r.pattern = pattern.empty() ? std::nullopt : std::optional(rd.parsed(x, at, "pattern", parse_pattern));
  r.block_size = rd.integer<std::uint64_t>(x, at, "block_size");
  r.file_size = rd.integer<std::uint64_t>(x, at, "file_size");
  std::string buffer = rd.text(x, at, "buffer");
  r.buffer = buffer.empty() ? std::nullopt : std::optional(rd.parsed(x, at, "buffer", io::parse_buffer_kind));
  if (rd.find(x, at, "buffer_offset")) r.buffer_offset = rd.integer<std::uint64_t>(x, at, "buffer_offset");
  std::string cache = rd.text(x, at, "cache");
  r.cache = cache.empty() ? std::nullopt : std::optional(rd.parsed(x, at, "cache", parse_cache_name));
  r.cache_method = rd.text(x, at, "cache_method");
  if (rd.find(x, at, "resident_fraction")) r.resident_fraction = rd.number(x, at, "resident_fraction");
  std::string sync = rd.text(x, at, "sync");
  r.sync = sync.empty() ? SyncPolicy{} : rd.parsed(x, at, "sync", parse_sync_policy);
  r.threads = rd.integer<unsigned>(x, at, "threads", 1);
  if (rd.find(x, at, "queue_depth")) r.queue_depth = rd.integer<unsigned>(x, at, "queue_depth");
  r.reps = rd.integer<unsigned>(x, at, "reps");
  r.passes = rd.integer<unsigned>(x, at, "passes", 1);
  r.bytes = rd.integer<std::uint64_t>(x, at, "bytes");
  r.ops = rd.integer<std::uint64_t>(x, at, "ops");
  if (const json* samples = rd.find(x, at, "samples_s")) {
    if (!samples->is_array()) rd.fail(Reader::join(at, "samples_s"), "expected an array of numbers");
    for (std::size_t i = 0; i < samples->size(); ++i) {
      const json& v = (*samples)[i];
      std::string where = Reader::join(at, "samples_s") + "[" + std::to_string(i) + "]";
      if (!v.is_number()) rd.fail(where, "expected a number");
      double d = v.get<double>();
      if (!std::isfinite(d) || d < 0) rd.fail(where, "expected a finite number of seconds, not negative");
      r.samples_s.push_back(d);
    }
  }
  if (const json* p = rd.find(x, at, "pass_seconds")) {
    if (!p->is_object()) rd.fail(Reader::join(at, "pass_seconds"), "expected an object");
    std::string where = Reader::join(at, "pass_seconds");
    PassSpread ps;
    ps.n = rd.integer<std::uint64_t>(*p, where, "n");
    ps.median = rd.number(*p, where, "median");
    ps.mean = rd.number(*p, where, "mean");
    ps.stddev = rd.number(*p, where, "stddev");
    ps.min = rd.number(*p, where, "min");
    ps.max = rd.number(*p, where, "max");
    ps.p5 = rd.number(*p, where, "p5");
    ps.p95 = rd.number(*p, where, "p95");
    for (double v : {ps.median, ps.mean, ps.stddev, ps.min, ps.max, ps.p5, ps.p95})
      if (!std::isfinite(v) || v < 0) rd.fail(where, "expected finite numbers of seconds, not negative");
    if (ps.n > 0) r.pass_s = ps;
  }
  if (const json* l = rd.find(x, at, "latency_ns")) {
    if (!l->is_object()) rd.fail(Reader::join(at, "latency_ns"), "expected an object");
    std::string where = Reader::join(at, "latency_ns");
    Latency lat;
    lat.p50 = rd.number(*l, where, "p50");
    lat.p90 = rd.number(*l, where, "p90");
    lat.p99 = rd.number(*l, where, "p99");
    lat.p999 = rd.number(*l, where, "p999");
    lat.max = rd.number(*l, where, "max");
    lat.samples = rd.integer<std::uint64_t>(*l, where, "samples");
    std::string source = rd.text(*l, where, "source", "every_call");
    lat.source = source == "every_request" ? LatencySource::EveryRequest
                 : source == "every_op"    ? LatencySource::EveryOp
                                           : LatencySource::EveryCall;
    r.latency_ns = lat;
  }
  const json& cpu = rd.object(x, at, "cpu");
  r.user_s = rd.number(cpu, Reader::join(at, "cpu"), "user_s");
  r.sys_s = rd.number(cpu, Reader::join(at, "cpu"), "sys_s");
  // CPU seconds a process used are never negative ("-2.4e+298 s sys per pass" otherwise).
  if (r.user_s < 0) rd.fail(Reader::join(at, "cpu.user_s"), "negative CPU seconds");
  if (r.sys_s < 0) rd.fail(Reader::join(at, "cpu.sys_s"), "negative CPU seconds");
  const json& faults = rd.object(x, at, "faults");
  r.minor_faults = rd.integer<std::int64_t>(faults, Reader::join(at, "faults"), "minor");
  r.major_faults = rd.integer<std::int64_t>(faults, Reader::join(at, "faults"), "major");
  const json& ctx = rd.object(x, at, "ctx");
  r.voluntary_ctx = rd.integer<std::int64_t>(ctx, Reader::join(at, "ctx"), "voluntary");
  r.involuntary_ctx = rd.integer<std::int64_t>(ctx, Reader::join(at, "ctx"), "involuntary");
  r.io_calls = rd.integer<std::uint64_t>(x, at, "io_calls");
  const json& st = rd.object(x, at, "storage");
  r.storage_read_bytes = rd.integer<std::uint64_t>(st, Reader::join(at, "storage"), "read_bytes");
  // Schema 1 called the dirtied bytes "write_bytes" (they never were device writes).
  r.dirtied_bytes = rd.integer<std::uint64_t>(st, Reader::join(at, "storage"), version < 2 ? "write_bytes" : "dirtied_bytes");
  if (const json* d = rd.find(x, at, "device")) {
    std::string where = Reader::join(at, "device");
    r.device_read_bytes = rd.integer<std::uint64_t>(*d, where, "read_bytes");
    r.device_write_bytes = rd.integer<std::uint64_t>(*d, where, "write_bytes");
  }
  r.verified = rd.boolean(x, at, "verified");
  if (rd.find(x, at, "skipped")) r.skipped = rd.text(x, at, "skipped");
  if (const json* ws = rd.find(x, at, "warnings")) {
    if (!ws->is_array()) rd.fail(Reader::join(at, "warnings"), "expected an array");
    for (std::size_t i = 0; i < ws->size(); ++i) {
      const json& w = (*ws)[i];
      std::string where = Reader::join(at, "warnings") + "[" + std::to_string(i) + "]";
      if (version < 2 || w.is_string()) {  // schema 1: warnings were plain text
        if (!w.is_string()) rd.fail(where, "expected a string");
        r.warnings.push_back(Warning{WarningKind::Note, {}, w.get<std::string>()});
        continue;
      }
      Warning warning;
      warning.kind = parse_warning_kind(rd.text(w, where, "kind", "note"));
      warning.text = rd.text(w, where, "text");
      if (const json* subjects = rd.find(w, where, "subjects")) {
        if (!subjects->is_array()) rd.fail(Reader::join(where, "subjects"), "expected an array of strings");
        for (const json& s : *subjects) {
          if (!s.is_string()) rd.fail(Reader::join(where, "subjects"), "expected an array of strings");
          warning.subjects.push_back(s.get<std::string>());
        }
      }
      r.warnings.push_back(std::move(warning));
    }
  }
  if (const json* ref = rd.find(x, at, "reference")) {
    std::string where = Reader::join(at, "reference");
    if (!ref->is_object()) rd.fail(where, "expected an object");
    r.reference = Reference{rd.text(*ref, where, "source"), rd.number(*ref, where, "value"), rd.text(*ref, where, "unit")};
  }
  r.extra = rd.object(x, at, "extra");
  return r;
}

// Everything of a results file but its records, checked; `version` is its schema.
Results header_from_json(const Reader& rd, const json& j, int& version_out) {
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kResultsFormat)
    rd.fail("", "not an iolab results file (no \"format\": \"iolab-results\")");
  // Schema 1 called its version "format_version".
  const char* version_key = j.contains("schema_version") ? "schema_version" : "format_version";
  if (!j.contains(version_key)) rd.fail("", "missing schema_version");
  const json& v = j[version_key];
  if (!v.is_number_integer()) rd.fail(version_key, "expected an integer");
  std::int64_t version = v.get<std::int64_t>();
  if (version > kResultsSchemaVersion)
    rd.fail(version_key, "schema " + std::to_string(version) + " is newer than this iolab understands (" +
                             std::to_string(kResultsSchemaVersion) + "); upgrade iolab");
  if (version < 1) rd.fail(version_key, "must be 1 or more");
  if (!j.contains("results") || !j["results"].is_array()) rd.fail("results", "expected an array of records");
  Results out;
  if (const json* inc = rd.find(j, "", "incomplete")) {
    if (!inc->is_string()) rd.fail("incomplete", "expected a string");
    out.incomplete = inc->get<std::string>();
  }
  const json& e = rd.object(j, "", "environment");
  auto& env = out.environment;
  env.hostname = rd.text(e, "environment", "hostname");
  env.cpu_model = rd.text(e, "environment", "cpu_model");
  env.cores = rd.integer<unsigned>(e, "environment", "cores");
  env.ram_bytes = rd.integer<std::uint64_t>(e, "environment", "ram_bytes");
  env.kernel = rd.text(e, "environment", "kernel");
  env.scratch_dir = rd.text(e, "environment", "scratch_dir");
  env.fs_type = rd.text(e, "environment", "fs_type");
  env.mount_options = rd.text(e, "environment", "mount_options");
  env.device = rd.text(e, "environment", "device");
  if (rd.find(e, "environment", "rotational")) env.rotational = rd.boolean(e, "environment", "rotational");
  env.scheduler = rd.text(e, "environment", "scheduler");
  env.iolab_version = rd.text(e, "environment", "iolab_version");
  env.compiler = rd.text(e, "environment", "compiler");
  env.build_type = rd.text(e, "environment", "build_type");
  if (rd.find(e, "environment", "git_commit")) env.git_commit = rd.text(e, "environment", "git_commit");  // absent in older files
  env.root = rd.boolean(e, "environment", "root");
  env.can_drop_caches = rd.boolean(e, "environment", "can_drop_caches");
  env.created = rd.text(e, "environment", "created");
  env.command = rd.text(e, "environment", "command");
  env.block_device = rd.text(e, "environment", "block_device");
  const json& vm = rd.object(e, "environment", "vm_dirty");
  for (const auto& [key, value] : vm.items())
    env.vm_dirty[key] = rd.integer<std::int64_t>(vm, "environment.vm_dirty", key.c_str());
  if (version >= 3) {  // schema 3 added the block device's queue settings
    const json& q = rd.object(e, "environment", "block_queue");
    for (const auto& [key, value] : q.items()) env.block_queue[key] = rd.text(q, "environment.block_queue", key.c_str());
  }
  version_out = static_cast<int>(version);
  return out;
}

}  // namespace results_json

Results results_from_json(const json& j, const std::string& source) {
  using namespace results_json;
  Reader rd(source);
  int version = 0;
  Results out = header_from_json(rd, j, version);
  const json& list = j["results"];
  out.results.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    out.results.push_back(result_from_json(rd, list[i], "results[" + std::to_string(i) + "]", version));
  return out;
}

void write_json(const Results& r, const std::filesystem::path& path) {
  io::publish_file(path, to_json(r).dump(2) + "\n", io::IfExists::Replace);
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

std::string to_csv(const Results& rs) {
  std::ostringstream out;
  // Columns are only ever appended, so older readers keep working (docs/results-format.md).
  out << "suite,experiment,method,op,pattern,block_size,file_size,buffer,cache,cache_method,resident_fraction,sync,"
         "threads,reps,bytes,ops,seconds_median,seconds_min,seconds_max,seconds_mean,seconds_stddev,mib_per_s_median,"
         "ops_per_s_median,latency_p50_ns,latency_p99_ns,user_s,sys_s,minor_faults,major_faults,voluntary_ctx,"
         "involuntary_ctx,io_calls,verified,skipped,seconds_cv,mib_per_s_min,mib_per_s_max,latency_p90_ns,"
         "latency_p999_ns,latency_max_ns,storage_read_bytes,dirtied_bytes,warnings,passes,queue_depth,"
         "device_read_bytes,device_write_bytes,pass_seconds_median,pass_seconds_stddev,pass_seconds_p5,"
         "pass_seconds_p95\n";
  auto num = [](double v) {
    std::ostringstream o;
    o.precision(10);
    o << v;
    return o.str();
  };
  auto lat = [&](const Result& r, double Latency::*field) { return r.latency_ns ? num((*r.latency_ns).*field) : std::string(); };
  for (const auto& r : rs.results) {
    Summary s = r.seconds();
    auto rate = [&](double sec) { return sec > 0 ? static_cast<double>(r.bytes) / kMiB / sec : 0.0; };
    std::string warnings;
    for (const auto& w : r.warnings) warnings += (warnings.empty() ? "" : "; ") + w.text;
    std::string pattern = r.pattern ? std::string(to_string(*r.pattern)) : "";
    std::string buffer = r.buffer ? std::string(io::to_string(*r.buffer)) : "";
    std::string cache = r.cache ? std::string(to_string(*r.cache)) : "";
    out << csv_field(r.suite) << ',' << csv_field(r.experiment) << ',' << csv_field(r.method) << ',' << csv_field(std::string(to_string(r.op)))
        << ',' << csv_field(pattern) << ',' << r.block_size << ',' << r.file_size << ',' << csv_field(buffer) << ','
        << csv_field(cache) << ',' << csv_field(r.cache_method) << ','
        << (r.resident_fraction ? num(*r.resident_fraction) : "") << ',' << csv_field(to_string(r.sync)) << ',' << r.threads << ','
        << r.reps << ',' << r.bytes << ',' << r.ops << ',' << num(s.median) << ',' << num(s.min) << ',' << num(s.max)
        << ',' << num(s.mean) << ',' << num(s.stddev) << ',' << num(r.median_mib_per_s()) << ','
        << num(r.median_ops_per_s()) << ',' << lat(r, &Latency::p50) << ',' << lat(r, &Latency::p99) << ','
        << num(r.user_s) << ',' << num(r.sys_s) << ',' << r.minor_faults << ',' << r.major_faults << ','
        << r.voluntary_ctx << ',' << r.involuntary_ctx << ',' << r.io_calls << ',' << (r.verified ? "true" : "false")
        << ',' << csv_field(r.skipped.value_or("")) << ',' << num(s.cv) << ',' << num(rate(s.max)) << ','
        << num(rate(s.min)) << ',' << lat(r, &Latency::p90) << ',' << lat(r, &Latency::p999) << ','
        << lat(r, &Latency::max) << ',' << r.storage_read_bytes << ',' << r.dirtied_bytes << ','
        << csv_field(warnings) << ',' << r.passes << ',' << (r.queue_depth ? std::to_string(*r.queue_depth) : "")
        << ',' << (r.device_read_bytes ? std::to_string(*r.device_read_bytes) : "") << ','
        << (r.device_write_bytes ? std::to_string(*r.device_write_bytes) : "") << ','
        << (r.pass_s ? num(r.pass_s->median) : "") << ',' << (r.pass_s ? num(r.pass_s->stddev) : "") << ','
        << (r.pass_s ? num(r.pass_s->p5) : "") << ',' << (r.pass_s ? num(r.pass_s->p95) : "") << '\n';
  }
  return out.str();
}

void write_csv(const Results& r, const std::filesystem::path& path) {
  io::publish_file(path, to_csv(r), io::IfExists::Replace);
}

}  // namespace iolab::harness
