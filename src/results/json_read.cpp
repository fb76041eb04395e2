// Records read back from JSON, every schema version (docs/results-format.md),
// naming the file and the JSON path of anything missing or mistyped.
#include <cmath>
#include <exception>
#include <limits>

#include "iolab/base/proc.h"
#include "iolab/base/error.h"
#include "iolab/results/record.h"
#include "json.h"

namespace iolab::results {

using nlohmann::json;

namespace json_detail {

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
  r.sync = sync.empty() ? io::FlushPolicy{} : rd.parsed(x, at, "sync", io::parse_flush_policy);
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
    lat.source = value_of(kLatencySourceCodes, source).value_or(LatencySource::EveryCall);
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
  // Absent in files written before it was recorded; null where there was none.
  if (rd.find(e, "environment", "free_page_reporting")) {
    const json& r = rd.object(e, "environment", "free_page_reporting");
    const std::string at = "environment.free_page_reporting";
    if (!rd.find(r, at, "order")) rd.fail(at, "missing its order");
    const auto order = rd.integer<unsigned>(r, at, "order");
    if (order > proc::kLargestPageOrder)
      rd.fail(at + ".order", "above " + std::to_string(proc::kLargestPageOrder) + ", the largest block order");
    env.free_page_reporting_order = order;
  }
  version_out = static_cast<int>(version);
  return out;
}

}  // namespace json_detail

Results results_from_json(const json& j, const std::string& source) {
  using namespace json_detail;
  Reader rd(source);
  int version = 0;
  Results out = header_from_json(rd, j, version);
  const json& list = j["results"];
  out.results.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    out.results.push_back(result_from_json(rd, list[i], "results[" + std::to_string(i) + "]", version));
  return out;
}

}  // namespace iolab::results
