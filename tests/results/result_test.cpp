// The results format: JSON round-trips, holds every field issue 3 lists, and
// the CSV has one row per result under a header.
#include <gtest/gtest.h>

#include "iolab/version.h"

#include <fstream>
#include <functional>

#include "iolab/base/error.h"
#include "iolab/results/record.h"
#include "iolab/io/scratch.h"

namespace iolab::results {
namespace {

Results sample() {
  Results rs;
  rs.environment.hostname = "test-host";
  rs.environment.cores = 2;
  rs.environment.ram_bytes = 24ull << 30;
  rs.environment.scratch_dir = "/tmp";
  rs.environment.git_commit = "0123456789ab";
  rs.environment.command = "iolab run --method pread";
  rs.environment.free_page_reporting_order = 9;
  Result r;
  r.suite = "custom";
  r.experiment = "read seq 4k warm heap";
  r.method = "pread";
  r.op = Op::Read;
  r.pattern = AccessPattern::Seq;
  r.block_size = 4096;
  r.file_size = 1 << 20;
  r.buffer = io::BufferKind::Heap;
  r.cache = CacheState::Warm;
  r.cache_method = "read once";
  r.resident_fraction = 1.0;
  r.reps = 3;
  r.passes = 4;
  r.queue_depth = 32;
  r.buffer_offset = 64;
  r.bytes = 1 << 20;
  r.ops = 256;
  r.samples_s = {0.5, 1.0, 2.0};
  r.latency_ns = Latency{500, 900, 1500, 4000, 9000, 768, LatencySource::EveryRequest};
  r.user_s = 0.1;
  r.sys_s = 0.2;
  r.minor_faults = 3;
  r.major_faults = 1;
  r.voluntary_ctx = 4;
  r.involuntary_ctx = 5;
  r.io_calls = 256;
  r.storage_read_bytes = 7;
  r.dirtied_bytes = 8;
  r.device_read_bytes = 0;
  r.device_write_bytes = 4096;
  r.verified = true;
  r.warnings = {Warning{WarningKind::TooShort, {"shortest 2 ms"}, "a, \"quoted\" warning"}};
  r.reference = Reference{"seed 001: Java", 4700, "ms"};
  r.extra["batch"] = 1;
  rs.results.push_back(r);
  Result skipped;
  skipped.suite = "custom";
  skipped.experiment = "x";
  skipped.method = "direct";
  skipped.skipped = "the filesystem refuses O_DIRECT";
  skipped.sync = io::parse_flush_policy("async-16k:fdatasync");
  skipped.cache.reset();
  skipped.buffer.reset();
  skipped.pattern.reset();
  rs.results.push_back(skipped);
  return rs;
}

TEST(ResultsFormat, HoldsEveryFieldOfTheIssue) {
  nlohmann::json j = to_json(sample());
  EXPECT_EQ(j["format"], "iolab-results");
  EXPECT_EQ(j["schema_version"], kResultsSchemaVersion);
  EXPECT_TRUE(j["incomplete"].is_null());
  for (const char* key : {"cpu_model", "cores", "ram_bytes", "kernel", "fs_type", "mount_options", "device", "rotational",
                          "scheduler", "iolab_version", "git_commit", "compiler", "build_type", "root", "command", "created"})
    EXPECT_TRUE(j["environment"].contains(key)) << key;
  EXPECT_EQ(j["environment"]["free_page_reporting"]["order"], 9);
  EXPECT_EQ(j["environment"]["free_page_reporting"]["block_bytes"], 2u << 20);
  const auto& r = j["results"][0];
  for (const char* key : {"suite", "experiment", "method", "op", "pattern", "block_size", "file_size", "buffer", "cache",
                          "resident_fraction", "sync", "reps", "bytes", "ops", "seconds", "mib_per_s", "ops_per_s",
                          "latency_ns", "cpu", "faults", "ctx", "io_calls", "verified", "skipped", "passes",
                          "queue_depth", "warnings", "buffer_offset"})
    EXPECT_TRUE(r.contains(key)) << key;
  for (const char* key : {"median", "min", "max", "mean", "stddev"}) EXPECT_TRUE(r["seconds"].contains(key)) << key;
  for (const char* key : {"median", "min", "max"}) EXPECT_TRUE(r["mib_per_s"].contains(key)) << key;
  for (const char* key : {"p50", "p90", "p99", "p999", "max", "samples", "source"})
    EXPECT_TRUE(r["latency_ns"].contains(key)) << key;
  EXPECT_EQ(r["latency_ns"]["source"], "every_request");
  EXPECT_EQ(r["warnings"][0]["kind"], "too_short");
  EXPECT_EQ(r["warnings"][0]["subjects"][0], "shortest 2 ms");
  EXPECT_EQ(r["passes"], 4);
  EXPECT_EQ(j["results"][1]["sync"], "async-16k:fdatasync");
  EXPECT_EQ(j["results"][1]["cache"], "");
  EXPECT_DOUBLE_EQ(r["seconds"]["median"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["mib_per_s"]["median"].get<double>(), 1.0);  // 1 MiB in 1 s; MiB = 2^20
  EXPECT_DOUBLE_EQ(r["mib_per_s"]["max"].get<double>(), 2.0);      // from the fastest repetition
  EXPECT_DOUBLE_EQ(r["mib_per_s"]["min"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r["ops_per_s"]["median"].get<double>(), 256.0);
  EXPECT_EQ(r["cpu"]["sys_s"], 0.2);
  EXPECT_EQ(r["faults"]["major"], 1);
  EXPECT_EQ(r["ctx"]["involuntary"], 5);
  EXPECT_TRUE(r["skipped"].is_null());
  EXPECT_EQ(j["results"][1]["skipped"], "the filesystem refuses O_DIRECT");
}

TEST(ResultsFormat, JsonRoundTrips) {
  io::ScratchDir scratch("/tmp");
  Results a = sample();
  auto path = scratch.path() / "r.json";
  write_json(a, path);
  Results b = read_results(path);
  ::unlink(path.c_str());
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(b.environment.command, "iolab run --method pread");
  ASSERT_EQ(b.results.size(), 2u);
  EXPECT_EQ(b.results[0].samples_s, a.results[0].samples_s);
  EXPECT_EQ(b.results[0].reference->value, 4700);
  EXPECT_EQ(*b.results[1].skipped, "the filesystem refuses O_DIRECT");
  EXPECT_EQ(b.results[0].warnings, a.results[0].warnings);
  EXPECT_EQ(b.results[0].latency_ns->source, LatencySource::EveryRequest);
  EXPECT_FALSE(b.results[1].cache.has_value());
  EXPECT_EQ(b.results[1].sync, a.results[1].sync);
  EXPECT_EQ(b.results[0].buffer_offset, 64u);
  EXPECT_FALSE(b.results[1].buffer_offset.has_value());  // null: not recorded
}

// A repetition is `passes` passes: a record says what one pass and one
// operation took beside it, so a reader comparing with another tool's single
// run is not off by the passes (issue 40 item 4: the store's insert record,
// 0.107 s for 9 passes of 100,000 inserts, read as one pass).
TEST(ResultsFormat, GivesSecondsPerPassAndPerOperation) {
  Results rs = sample();
  Result& r = rs.results[0];
  r.passes = 9;
  r.ops = 900'000;
  r.bytes = 0;
  r.samples_s = {0.106, 0.107, 0.110};
  EXPECT_DOUBLE_EQ(r.seconds_per_pass(), 0.107 / 9);
  ASSERT_TRUE(r.ns_per_op().has_value());
  EXPECT_NEAR(*r.ns_per_op(), 118.888, 0.001);
  nlohmann::json j = to_json(rs);
  EXPECT_DOUBLE_EQ(j["results"][0]["seconds_per_pass"].get<double>(), 0.107 / 9);
  EXPECT_NEAR(j["results"][0]["ns_per_op"].get<double>(), 118.888, 0.001);
  EXPECT_DOUBLE_EQ(j["results"][0]["seconds"]["median"].get<double>(), 0.107);  // the repetition's, unchanged
  // A skipped record has neither: no samples.
  EXPECT_EQ(j["results"][1]["seconds_per_pass"], 0.0);
  EXPECT_TRUE(j["results"][1]["ns_per_op"].is_null());
  // A file written before the fields existed reads back with them derived.
  j["schema_version"] = 2;
  j["results"][0].erase("seconds_per_pass");
  j["results"][0].erase("ns_per_op");
  Results old = results_from_json(j, "old.json");
  EXPECT_DOUBLE_EQ(old.results[0].seconds_per_pass(), 0.107 / 9);
  EXPECT_NEAR(*old.results[0].ns_per_op(), 118.888, 0.001);
  // The CSV's last two columns.
  std::string csv = to_csv(rs);
  std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_TRUE(header.ends_with(",seconds_per_pass,ns_per_op")) << header;
  std::string row = csv.substr(header.size() + 1, csv.find('\n', header.size() + 1) - header.size() - 1);
  EXPECT_TRUE(row.ends_with(",118.8888889")) << row;
}

// Files of schema 1 (string warnings, "format_version", "periodic-16k") still read.
TEST(ResultsFormat, ReadsSchemaOne) {
  nlohmann::json j = to_json(sample());
  j.erase("schema_version");
  j["format_version"] = 1;
  j["results"][0]["warnings"] = nlohmann::json::array({"timed repetitions too short to trust"});
  j["results"][0]["sync"] = "periodic-16k:msync";
  Results r = results_from_json(j, "old.json");
  ASSERT_EQ(r.results[0].warnings.size(), 1u);
  EXPECT_EQ(r.results[0].warnings[0].kind, WarningKind::Note);
  EXPECT_EQ(r.results[0].sync.schedule, io::FlushSchedule::AsyncBytes);
}

// A bad value names the file and where in it, in one line.
// A file from before free page reporting was recorded, or from a machine
// without it (null), reads as none.
TEST(ResultsFormat, NoFreePageReportingReadsAsNone) {
  nlohmann::json j = to_json(sample());
  EXPECT_EQ(results_from_json(j, "r.json").environment.free_page_reporting_order, 9u);
  j["environment"]["free_page_reporting"] = nullptr;
  EXPECT_FALSE(results_from_json(j, "r.json").environment.free_page_reporting_order);
  j["environment"].erase("free_page_reporting");
  EXPECT_FALSE(results_from_json(j, "r.json").environment.free_page_reporting_order);
}

TEST(ResultsFormat, BadValuesNameTheFileAndTheJsonPath) {
  struct Case {
    const char* path;
    nlohmann::json value;
    const char* expect;
  };
  const Case cases[] = {
      {"/results/0/cpu/user_s", "fast", "results[0].cpu.user_s"},
      {"/results/0/op", "teleport", "results[0].op"},
      {"/results/0/samples_s/1", -1.0, "results[0].samples_s[1]"},
      {"/results/1/reps", -3, "results[1].reps"},
      {"/results/0/warnings", "not a list", "results[0].warnings"},
      {"/schema_version", "2", "schema_version"},
      {"/environment/free_page_reporting/order", 11, "environment.free_page_reporting.order"},
      {"/environment/free_page_reporting", nlohmann::json{{"block_bytes", 4096}}, "environment.free_page_reporting"},
      {"/environment/free_page_reporting", "on", "environment.free_page_reporting"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = to_json(sample());
    j[nlohmann::json::json_pointer(c.path)] = c.value;
    try {
      results_from_json(j, "some.json");
      ADD_FAILURE() << "accepted " << c.path;
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("some.json"), std::string::npos) << what;
      EXPECT_NE(what.find(c.expect), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// read_results parses the text once, reading each record as it is parsed
// (issue 29 item 8): whatever the text, it answers as reading the whole tree
// does, the same results or the same error (syntax, then the header, then the
// first unreadable record; a repeated member: the last one counts).
TEST(ResultsFormat, ReadingTheTextAgreesWithReadingTheTree) {
  auto outcome = [](const std::function<Results()>& read) {
    try {
      return "ok: " + to_json(read()).dump();
    } catch (const Error& e) {
      return std::string("error: ") + e.what();
    }
  };
  std::string one = to_json(sample()).dump();
  std::vector<std::string> texts = {one};
  nlohmann::json old = to_json(sample());  // schema 1: its records are read at schema 1
  old.erase("schema_version");
  old["format_version"] = 1;
  old["results"][0]["warnings"] = nlohmann::json::array({"timed repetitions too short to trust"});
  old["results"][0]["storage"] = {{"read_bytes", 1}, {"write_bytes", 2}};
  texts.push_back(old.dump());
  for (const char* path : {"/results/0/cpu/user_s", "/results/1/reps", "/format", "/schema_version"}) {
    nlohmann::json j = to_json(sample());
    j[nlohmann::json::json_pointer(path)] = "bad";
    texts.push_back(j.dump());
  }
  nlohmann::json both = to_json(sample());  // a bad header and a bad record: the header is told
  both["format"] = "other";
  both["results"][0]["op"] = "teleport";
  texts.push_back(both.dump());
  std::string body = one.substr(1);  // the members, after '{'
  texts.push_back(R"({"results": [{"method": 1}], )" + body);  // replaced by the later "results"
  texts.push_back(R"({"results": 5, )" + body);
  texts.push_back(one.substr(0, one.size() - 1) + R"(, "results": [[]]})");  // the later, bad, counts
  texts.push_back(R"({"schema_version": 1, "format": "iolab-results", "results": [7, {}]})");
  texts.push_back(R"([{"results": [1]}])");
  for (const auto& text : texts) {
    std::string tree = outcome([&] { return results_from_json(nlohmann::json::parse(text), "t.json"); });
    EXPECT_EQ(outcome([&] { return results_from_text(text, "t.json"); }), tree) << text;
  }
  EXPECT_EQ(results_from_text(old.dump(), "t.json").results[0].dirtied_bytes, 2u);
  EXPECT_THROW(results_from_text(one.substr(0, one.size() / 2), "t.json"), Error);  // cut short: not JSON
}

TEST(ResultsFormat, CsvHasAHeaderAndOneRowPerResult) {
  io::ScratchDir scratch("/tmp");
  auto path = scratch.path() / "r.csv";
  write_csv(sample(), path);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ::unlink(path.c_str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("suite,experiment,method,op,pattern,block_size", 0), 0u);
  EXPECT_NE(lines[1].find("\"a, \"\"quoted\"\" warning\""), std::string::npos) << lines[1];
  // Quoted fields aside, every row has as many columns as the header.
  auto columns = [](const std::string& l) {
    std::size_t n = 1;
    bool quoted = false;
    for (char c : l) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  EXPECT_EQ(columns(lines[1]), columns(lines[0]));
  EXPECT_EQ(columns(lines[2]), columns(lines[0]));
}

TEST(ResultsFormat, RejectsWhatIsNotResults) {
  EXPECT_THROW(results_from_json(nlohmann::json{{"format", "other"}}, "x"), Error);
  EXPECT_THROW(results_from_json(nlohmann::json{{"format", "iolab-results"}, {"schema_version", 99}, {"results", nlohmann::json::array()}}, "x"), Error);
  nlohmann::json no_method = to_json(sample());
  no_method["results"][0].erase("method");
  EXPECT_THROW(results_from_json(no_method, "x"), Error);
}

}  // namespace
}  // namespace iolab::results
