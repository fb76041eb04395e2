#include "iolab/harness/result.h"

#include <fstream>
#include <sstream>

#include "iolab/error.h"
#include "iolab/version.h"

namespace iolab::harness {

using nlohmann::json;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}
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
              {"compiler", e.compiler},
              {"build_type", e.build_type},
              {"root", e.root},
              {"can_drop_caches", e.can_drop_caches},
              {"created", e.created},
              {"command", e.command}};
}

json to_json(const Result& r) {
  Summary s = r.seconds();
  auto rate = [&](double sec) { return sec > 0 ? static_cast<double>(r.bytes) / kMiB / sec : 0.0; };
  auto ops = [&](double sec) { return sec > 0 ? static_cast<double>(r.ops) / sec : 0.0; };
  json j{{"suite", r.suite},
         {"experiment", r.experiment},
         {"method", r.method},
         {"op", r.op},
         {"pattern", r.pattern},
         {"block_size", r.block_size},
         {"file_size", r.file_size},
         {"buffer", r.buffer},
         {"cache", r.cache},
         {"cache_method", r.cache_method},
         {"resident_fraction", opt(r.resident_fraction)},
         {"sync", r.sync},
         {"threads", r.threads},
         {"reps", r.reps},
         {"bytes", r.bytes},
         {"ops", r.ops},
         {"samples_s", r.samples_s},
         {"seconds", {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"stddev", s.stddev}, {"cv", s.cv}}},
         {"mib_per_s", {{"median", rate(s.median)}, {"min", rate(s.max)}, {"max", rate(s.min)}}},
         {"ops_per_s", {{"median", ops(s.median)}, {"min", ops(s.max)}, {"max", ops(s.min)}}},
         {"latency_ns", r.latency_ns ? json{{"p50", r.latency_ns->p50}, {"p90", r.latency_ns->p90}, {"p99", r.latency_ns->p99},
                                            {"p999", r.latency_ns->p999}, {"max", r.latency_ns->max}}
                                     : json(nullptr)},
         {"cpu", {{"user_s", r.user_s}, {"sys_s", r.sys_s}}},
         {"faults", {{"minor", r.minor_faults}, {"major", r.major_faults}}},
         {"ctx", {{"voluntary", r.voluntary_ctx}, {"involuntary", r.involuntary_ctx}}},
         {"io_calls", r.io_calls},
         {"storage", {{"read_bytes", r.storage_read_bytes}, {"write_bytes", r.storage_write_bytes}}},
         {"verified", r.verified},
         {"skipped", r.skipped ? json(*r.skipped) : json(nullptr)},
         {"warnings", r.warnings},
         {"reference", r.reference ? json{{"source", r.reference->source}, {"value", r.reference->value}, {"unit", r.reference->unit}}
                                   : json(nullptr)},
         {"extra", r.extra}};
  return j;
}

json to_json(const Results& r) {
  json results = json::array();
  for (const auto& x : r.results) results.push_back(to_json(x));
  return json{{"format", kResultsFormat},
              {"format_version", kResultsFormatVersion},
              {"environment", to_json(r.environment)},
              {"results", results}};
}

Results results_from_json(const json& j, const std::string& source) {
  auto bad = [&](const std::string& why) { return Error("read results", source, why, EINVAL); };
  if (!j.is_object() || get_or<std::string>(j, "format", "") != kResultsFormat)
    throw bad("not an iolab results file (no \"format\": \"iolab-results\")");
  int version = get_or<int>(j, "format_version", 0);
  if (version > kResultsFormatVersion)
    throw bad("results format version " + std::to_string(version) + " is newer than this iolab understands (" +
              std::to_string(kResultsFormatVersion) + "); upgrade iolab");
  if (version < 1) throw bad("missing or invalid format_version");
  if (!j.contains("results") || !j["results"].is_array()) throw bad("no \"results\" array");
  Results out;
  try {
    const json& e = j.value("environment", json::object());
    auto& env = out.environment;
    env.hostname = get_or<std::string>(e, "hostname", "");
    env.cpu_model = get_or<std::string>(e, "cpu_model", "");
    env.cores = get_or<unsigned>(e, "cores", 0);
    env.ram_bytes = get_or<std::uint64_t>(e, "ram_bytes", 0);
    env.kernel = get_or<std::string>(e, "kernel", "");
    env.scratch_dir = get_or<std::string>(e, "scratch_dir", "");
    env.fs_type = get_or<std::string>(e, "fs_type", "");
    env.mount_options = get_or<std::string>(e, "mount_options", "");
    env.device = get_or<std::string>(e, "device", "");
    if (e.contains("rotational") && !e["rotational"].is_null()) env.rotational = e["rotational"].get<bool>();
    env.scheduler = get_or<std::string>(e, "scheduler", "");
    env.iolab_version = get_or<std::string>(e, "iolab_version", "");
    env.compiler = get_or<std::string>(e, "compiler", "");
    env.build_type = get_or<std::string>(e, "build_type", "");
    env.root = get_or<bool>(e, "root", false);
    env.can_drop_caches = get_or<bool>(e, "can_drop_caches", false);
    env.created = get_or<std::string>(e, "created", "");
    env.command = get_or<std::string>(e, "command", "");
    for (const auto& x : j["results"]) {
      Result r;
      for (const char* key : {"suite", "experiment", "method"})
        if (!x.contains(key)) throw bad(std::string("a result lacks \"") + key + "\"");
      r.suite = x["suite"].get<std::string>();
      r.experiment = x["experiment"].get<std::string>();
      r.method = x["method"].get<std::string>();
      r.op = get_or<std::string>(x, "op", "");
      r.pattern = get_or<std::string>(x, "pattern", "");
      r.block_size = get_or<std::uint64_t>(x, "block_size", 0);
      r.file_size = get_or<std::uint64_t>(x, "file_size", 0);
      r.buffer = get_or<std::string>(x, "buffer", "");
      r.cache = get_or<std::string>(x, "cache", "");
      r.cache_method = get_or<std::string>(x, "cache_method", "");
      if (x.contains("resident_fraction") && !x["resident_fraction"].is_null())
        r.resident_fraction = x["resident_fraction"].get<double>();
      r.sync = get_or<std::string>(x, "sync", "");
      r.threads = get_or<unsigned>(x, "threads", 1);
      r.reps = get_or<unsigned>(x, "reps", 0);
      r.bytes = get_or<std::uint64_t>(x, "bytes", 0);
      r.ops = get_or<std::uint64_t>(x, "ops", 0);
      r.samples_s = get_or<std::vector<double>>(x, "samples_s", {});
      if (x.contains("latency_ns") && x["latency_ns"].is_object()) {
        const json& l = x["latency_ns"];
        r.latency_ns = Latency{l.value("p50", 0.0), l.value("p90", 0.0), l.value("p99", 0.0), l.value("p999", 0.0),
                               l.value("max", 0.0)};
      }
      const json& cpu = x.value("cpu", json::object());
      r.user_s = cpu.value("user_s", 0.0);
      r.sys_s = cpu.value("sys_s", 0.0);
      const json& faults = x.value("faults", json::object());
      r.minor_faults = faults.value("minor", std::int64_t{0});
      r.major_faults = faults.value("major", std::int64_t{0});
      const json& ctx = x.value("ctx", json::object());
      r.voluntary_ctx = ctx.value("voluntary", std::int64_t{0});
      r.involuntary_ctx = ctx.value("involuntary", std::int64_t{0});
      r.io_calls = get_or<std::uint64_t>(x, "io_calls", 0);
      const json& st = x.value("storage", json::object());
      r.storage_read_bytes = st.value("read_bytes", std::uint64_t{0});
      r.storage_write_bytes = st.value("write_bytes", std::uint64_t{0});
      r.verified = get_or<bool>(x, "verified", false);
      if (x.contains("skipped") && !x["skipped"].is_null()) r.skipped = x["skipped"].get<std::string>();
      r.warnings = get_or<std::vector<std::string>>(x, "warnings", {});
      if (x.contains("reference") && x["reference"].is_object()) {
        const json& ref = x["reference"];
        r.reference = Reference{ref.value("source", ""), ref.value("value", 0.0), ref.value("unit", "")};
      }
      r.extra = x.value("extra", json::object());
      out.results.push_back(std::move(r));
    }
  } catch (const json::exception& ex) {
    throw bad(std::string("malformed results: ") + ex.what());
  }
  return out;
}

void write_json(const Results& r, const std::filesystem::path& path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("write results", path.string(), errno);
  out << to_json(r).dump(2) << '\n';
  out.close();
  if (!out) throw Error("write results", path.string(), errno ? errno : EIO);
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void write_csv(const Results& rs, const std::filesystem::path& path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error("write results", path.string(), errno);
  // Columns are only ever appended, so older readers keep working (docs/results-format.md).
  out << "suite,experiment,method,op,pattern,block_size,file_size,buffer,cache,cache_method,resident_fraction,sync,"
         "threads,reps,bytes,ops,seconds_median,seconds_min,seconds_max,seconds_mean,seconds_stddev,mib_per_s_median,"
         "ops_per_s_median,latency_p50_ns,latency_p99_ns,user_s,sys_s,minor_faults,major_faults,voluntary_ctx,"
         "involuntary_ctx,io_calls,verified,skipped,seconds_cv,mib_per_s_min,mib_per_s_max,latency_p90_ns,"
         "latency_p999_ns,latency_max_ns,storage_read_bytes,storage_write_bytes,warnings\n";
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
    for (const auto& w : r.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    out << csv_field(r.suite) << ',' << csv_field(r.experiment) << ',' << csv_field(r.method) << ',' << csv_field(r.op)
        << ',' << csv_field(r.pattern) << ',' << r.block_size << ',' << r.file_size << ',' << csv_field(r.buffer) << ','
        << csv_field(r.cache) << ',' << csv_field(r.cache_method) << ','
        << (r.resident_fraction ? num(*r.resident_fraction) : "") << ',' << csv_field(r.sync) << ',' << r.threads << ','
        << r.reps << ',' << r.bytes << ',' << r.ops << ',' << num(s.median) << ',' << num(s.min) << ',' << num(s.max)
        << ',' << num(s.mean) << ',' << num(s.stddev) << ',' << num(r.median_mib_per_s()) << ','
        << num(r.median_ops_per_s()) << ',' << lat(r, &Latency::p50) << ',' << lat(r, &Latency::p99) << ','
        << num(r.user_s) << ',' << num(r.sys_s) << ',' << r.minor_faults << ',' << r.major_faults << ','
        << r.voluntary_ctx << ',' << r.involuntary_ctx << ',' << r.io_calls << ',' << (r.verified ? "true" : "false")
        << ',' << csv_field(r.skipped.value_or("")) << ',' << num(s.cv) << ',' << num(rate(s.max)) << ','
        << num(rate(s.min)) << ',' << lat(r, &Latency::p90) << ',' << lat(r, &Latency::p999) << ','
        << lat(r, &Latency::max) << ',' << r.storage_read_bytes << ',' << r.storage_write_bytes << ','
        << csv_field(warnings) << '\n';
  }
  out.close();
  if (!out) throw Error("write results", path.string(), errno ? errno : EIO);
}

Results read_results(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("read results", path.string(), errno);
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error("read results", path.string(), "not JSON (" + std::string(e.what()) + ")", EINVAL);
  }
  return results_from_json(j, path.string());
}

}  // namespace iolab::harness
