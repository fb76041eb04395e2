// Records written as JSON (docs/results-format.md): the document, and the
// file it is published to.
#include <optional>

#include "iolab/base/proc.h"
#include "iolab/io/publish.h"
#include "iolab/results/record.h"
#include "json.h"
#include "iolab/version.h"

namespace iolab::results {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }


}  // namespace

json to_json(const Environment& e) {
  return json{{"hostname", e.hostname}, {"cpu_model", e.cpu_model}, {"cores", e.cores}, {"ram_bytes", e.ram_bytes},
              {"kernel", e.kernel}, {"scratch_dir", e.scratch_dir}, {"fs_type", e.fs_type},
              {"mount_options", e.mount_options}, {"device", e.device},
              {"rotational", e.rotational ? json(*e.rotational) : json(nullptr)}, {"scheduler", e.scheduler},
              {"iolab_version", e.iolab_version}, {"git_commit", e.git_commit}, {"compiler", e.compiler},
              {"build_type", e.build_type}, {"root", e.root}, {"can_drop_caches", e.can_drop_caches},
              {"created", e.created}, {"command", e.command}, {"block_device", e.block_device},
              {"vm_dirty", e.vm_dirty}, {"block_queue", e.block_queue},
              {"free_page_reporting",
               e.free_page_reporting_order
                   ? json{{"order", *e.free_page_reporting_order},
                          {"block_bytes", proc::page_block_bytes(*e.free_page_reporting_order)}}
                   : json(nullptr)}};
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
               {"samples", l.samples}, {"source", name_of(json_detail::kLatencySourceCodes, l.source)}};
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
         {"seconds_per_pass", r.seconds_per_pass()},
         {"ns_per_op", opt(r.ns_per_op())},
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

void write_json(const Results& r, const std::filesystem::path& path) {
  io::publish_file(path, to_json(r).dump(2) + "\n", io::IfExists::Replace);
}

}  // namespace iolab::results
