// Records as CSV: one row each, nested fields flattened.
#include <sstream>

#include "iolab/io/publish.h"
#include "iolab/results/record.h"

namespace iolab::results {

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
         "pass_seconds_p95,seconds_per_pass,ns_per_op\n";
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
        << (r.pass_s ? num(r.pass_s->p5) : "") << ',' << (r.pass_s ? num(r.pass_s->p95) : "") << ','
        << num(r.seconds_per_pass()) << ',' << (r.ns_per_op() ? num(*r.ns_per_op()) : "") << '\n';
  }
  return out.str();
}

void write_csv(const Results& r, const std::filesystem::path& path) {
  io::publish_file(path, to_csv(r), io::IfExists::Replace);
}

}  // namespace iolab::results
