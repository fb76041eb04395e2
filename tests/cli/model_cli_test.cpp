// `iolab model` as a user runs it: on a results file holding a synthetic
// sweep of two methods (text and --json), and on bad input (one line naming
// the file and the cause, non-zero exit).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_program.h"
#include "decision/synthetic_decision.h"
#include "iolab/testing/test_dir.h"

// A named namespace: the CLI tests are a unity build, and report_cli_test.cpp
// has helpers of the same names.
namespace model_cli_test {

using Ran = iolab::testing::ProgramRun;
Ran iolab_cmd(const std::vector<std::string>& args) { return iolab::testing::run_iolab(args); }

// A warm sequential read of a 4 MiB file in `block`-byte calls, as `iolab
// run` writes it: each pass costs `call_s` per call and `byte_s` per byte.
nlohmann::json sweep_record(const std::string& method, std::uint64_t block, double call_s, double byte_s) {
  const std::uint64_t file = 4u << 20, passes = 2, calls = file / block;
  const double pass_s = static_cast<double>(calls) * call_s + static_cast<double>(file) * byte_s;
  nlohmann::json samples = nlohmann::json::array();
  for (double k : {-0.01, 0.0, 0.01}) samples.push_back(pass_s * passes * (1 + k));
  return {{"suite", "packet-sweep"}, {"experiment", "read packets"}, {"method", method}, {"op", "read"}, {"pattern", "seq"},
          {"block_size", block}, {"file_size", file}, {"buffer", "heap"}, {"cache", "warm"}, {"cache_method", "read once"},
          {"resident_fraction", 1.0}, {"sync", "none"}, {"threads", 1}, {"reps", 3}, {"passes", passes},
          {"bytes", file * passes}, {"ops", calls * passes}, {"samples_s", samples}, {"latency_ns", nullptr},
          {"cpu", {{"user_s", 0.01}, {"sys_s", 0.01}}}, {"faults", {{"minor", 2}, {"major", 0}}},
          {"ctx", {{"voluntary", 1}, {"involuntary", 2}}}, {"io_calls", calls * passes}, {"verified", true},
          {"skipped", nullptr}, {"warnings", nlohmann::json::array()}, {"reference", nullptr},
          {"extra", nlohmann::json::object()}};
}

nlohmann::json results_file(nlohmann::json records) {
  return {{"format", "iolab-results"}, {"format_version", 3},
          {"environment", {{"hostname", "h"}, {"cpu_model", "c"}, {"cores", 2}, {"kernel", "6"}, {"fs_type", "ext4"},
                           {"created", "2026-12-06T02:00:00Z"}, {"command", "iolab run packet-sweep"}}},
          {"results", std::move(records)}};
}

class ModelCli : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  // a: 1 µs per call and 2 GB/s; b: 100 ns per call and 1 GB/s: b is
  // cheaper per byte below 1800-byte calls, a above.
  std::filesystem::path sweep() {
    nlohmann::json rs = nlohmann::json::array();
    for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
      rs.push_back(sweep_record("a", block, 1e-6, 0.5e-9));
      rs.push_back(sweep_record("b", block, 100e-9, 1e-9));
    }
    return write("sweep.json", results_file(rs).dump());
  }
  iolab::testing::TestDir dir_;
};

TEST_F(ModelCli, PrintsCoefficientsInReadableUnitsAndTheCrossover) {
  Ran r = iolab_cmd({"model", sweep().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("read, warm, flush none"), std::string::npos) << r.out;
  // The intervals are the repetitions' +-1% wobble, resampled.
  EXPECT_NE(r.out.find("1,000 (994..1,007) ns/call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.0 (2.0..2.0) GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100 (99..102) ns/call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<0.1%"), std::string::npos) << r.out;  // the model is exact here: no size is mispredicted
  EXPECT_NE(r.out.find("read, warm, flush none: b below 1.76 KiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Validation: leave one size out"), std::string::npos) << r.out;
}

TEST_F(ModelCli, JsonGivesEachFitsCoefficientsErrorsAndValidation) {
  Ran r = iolab_cmd({"model", sweep().string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["fits"].size(), 2u);
  for (const auto& f : j["fits"]) {
    EXPECT_EQ(f["op"], "read");
    EXPECT_EQ(f["column"], "warm");
    EXPECT_EQ(f["flush"], "none");
    for (const char* term : {"calls", "bytes"})
      for (const char* part : {"estimate", "low", "high"}) EXPECT_TRUE(f["coefficients"][term][part].is_number()) << term;
    EXPECT_TRUE(f["loo_median_abs_error"].is_number());
    EXPECT_TRUE(f["loo_p90_abs_error"].is_number());
    EXPECT_LT(f["loo_p90_abs_error"].get<double>(), 0.01);
  }
  EXPECT_NEAR(j["fits"][0]["readable"]["ns_per_call"]["estimate"].get<double>(), 1000, 20);
  EXPECT_NEAR(j["fits"][1]["readable"]["gb_per_s"]["estimate"].get<double>(), 1.0, 0.02);
  ASSERT_EQ(j["crossovers"].size(), 1u);
  EXPECT_NEAR(j["crossovers"][0]["size_bytes"]["estimate"].get<double>(), 1800, 36);
  EXPECT_TRUE(j["validation"]["loo_median_abs_error"].is_number());
  EXPECT_TRUE(j["validation"]["loo_p90_abs_error"].is_number());
}

TEST_F(ModelCli, BadInputIsOneLineNamingTheFileAndNonZero) {
  auto notjson = write("notjson.json", "this is { not json");
  auto other = write("bench.json", R"({"context": {}, "benchmarks": []})");
  nlohmann::json two = nlohmann::json::array({sweep_record("a", 4096, 1e-6, 1e-9), sweep_record("a", 65536, 1e-6, 1e-9)});
  auto nosweep = write("nosweep.json", results_file(two).dump());
  auto missing = dir_ / "missing.json";
  struct Case {
    std::filesystem::path file;
    int exit_code;
    std::string says;
  };
  for (const Case& c : {Case{notjson, 1, "not JSON"}, Case{other, 1, "not an iolab results file"},
                        Case{missing, 1, "No such file"}, Case{nosweep, 2, "holds no sweep records"},
                        Case{dir_.path(), 1, "Is a directory"}}) {
    Ran r = iolab_cmd({"model", c.file.string()});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.file << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("iolab: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.file.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  Ran usage = iolab_cmd({"model"});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_EQ(usage.err_lines(), 1u) << usage.err;
}

// --save: the model as this machine's profile, published by `run --out`'s
// rules: iolab's own profile replaced, a user's file, an input, a directory
// never; each refusal one line, before any output.
TEST_F(ModelCli, SaveWritesTheMachinesProfileAndReplacesOnlyItsOwn) {
  const auto in = sweep();
  const auto profile = dir_ / "this-machine.json";
  Ran r = iolab_cmd({"model", in.string(), "--save", profile.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("read, warm, flush none"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "model profile: " + profile.string() + "\n");
  nlohmann::json j = iolab::testing::json_of(profile);
  EXPECT_EQ(j["format"], "iolab-model-profile");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["machine"]["hostname"], "h");
  EXPECT_EQ(j["machine"]["cpu_model"], "c");
  EXPECT_EQ(j["machine"]["cores"], 2);
  EXPECT_FALSE(j["machine"].contains("created"));  // the machine, not the run
  ASSERT_EQ(j["sources"].size(), 1u);
  EXPECT_EQ(j["sources"][0]["file"], in.string());
  EXPECT_EQ(j["sources"][0]["created"], "2026-12-06T02:00:00Z");
  Ran json = iolab_cmd({"model", in.string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(j["model"]["fits"], nlohmann::json::parse(json.out)["fits"]);
  EXPECT_EQ(j["model"]["validation"], nlohmann::json::parse(json.out)["validation"]);
  // Its own profile is replaced.
  Ran again = iolab_cmd({"model", in.string(), "--save", profile.string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;

  const std::string mine = "{\"format\": \"my notes\"}\n";
  const auto user = write("notes.json", mine);
  std::filesystem::create_directory(dir_ / "dir.json");
  struct Case {
    std::filesystem::path save;
    int exit_code;
    std::string says;
  };
  for (const Case& c : {Case{user, 2, "is not one iolab wrote"}, Case{in, 2, "never replace an input"},
                        Case{dir_ / "dir.json", 2, "is a directory"}, Case{dir_ / "profile.txt", 2, "ending in .json"},
                        Case{user / "x.json", 1, "Not a directory"}}) {
    Ran bad = iolab_cmd({"model", in.string(), "--save", c.save.string()});
    EXPECT_EQ(bad.exit_code, c.exit_code) << c.save << ": " << bad.err;
    EXPECT_EQ(bad.err_lines(), 1u) << bad.err;
    EXPECT_NE(bad.err.find(c.says), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.out.empty()) << bad.out;  // refused before the model is printed
  }
  std::ifstream kept(user);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), mine);
  EXPECT_EQ(iolab::testing::json_of(in)["results"].size(), 16u);  // the input, untouched
}

TEST_F(ModelCli, SaveRefusesFilesOfTwoMachines) {
  const auto here = sweep();
  nlohmann::json other = iolab::testing::json_of(here);
  other["environment"]["hostname"] = "elsewhere";
  const auto there = write("there.json", other.dump());
  Ran r = iolab_cmd({"model", here.string(), there.string(), "--save", (dir_ / "p.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("measured on another machine"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p.json"));
}

// A file holding a decision: `iolab model` checks the rows' pick changes
// against the model's crossovers (the pick changes from b to a between
// 512 B and 2 KiB; the model's lines cross at 1800 B).
TEST_F(ModelCli, ChecksTheDecisionMapsPickChangesAgainstTheCrossovers) {
  iolab::results::Results file;
  file.environment.hostname = "h";
  std::uint64_t seed = 3;
  for (std::uint64_t size : {32u, 128u, 512u, 2048u, 8192u}) {
    const double s = static_cast<double>(size);
    auto mib_s = [s](double call, double byte) { return s / (call + s * byte) / (1 << 20); };
    const iolab::decision::Condition c{{iolab::results::Op::Read, "none", iolab::decision::Column::Warm}, size};
    for (auto& r : iolab::testing::synthetic_condition(c, {{"a", {}, mib_s(1e-6, 0.5e-9)}, {"b", {}, mib_s(100e-9, 1e-9)}},
                                                      0.01, seed++))
      file.results.push_back(std::move(r));
  }
  const auto in = write("decision.json", iolab::results::to_json(file).dump());
  Ran r = iolab_cmd({"model", in.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Crossovers against the decision map: 1 of 1 pick changes the rounds told apart have the "
                       "model's crossover between the two sizes (100%)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("read|none|warm 512 B..2 KiB: b -> a; model: at 1."), std::string::npos) << r.out;
  Ran j = iolab_cmd({"model", in.string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["decision_check"]["between"], 1);
  // A sweep without a decision prints no such line.
  Ran plain = iolab_cmd({"model", sweep().string()});
  EXPECT_EQ(plain.out.find("decision map"), std::string::npos) << plain.out;
}

// `iolab run` writes the model of its sweep into the results file (a
// `model` section, docs/results-format.md); `iolab model` reads the records.
TEST(ModelCliRun, ARunOfASweepCarriesItsModelInTheResultsFile) {
  iolab::testing::Workspace w;
  const auto out = w / "sweep.json";
  Ran run = iolab_cmd({"run", "--method", "pread", "--op", "read", "--size", "64k", "--bs", "1k,4k,16k", "--cache", "warm",
                       "--reps", "2", "--warmup", "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(),
                       "--out", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json j = iolab::testing::json_of(out);
  ASSERT_TRUE(j.contains("model")) << j.dump(1).substr(0, 2000);
  ASSERT_EQ(j["model"]["fits"].size(), 1u);
  EXPECT_EQ(j["model"]["fits"][0]["method"], "pread");
  EXPECT_EQ(j["model"]["fits"][0]["sizes"], nlohmann::json({1024, 4096, 16384}));
  EXPECT_TRUE(j["model"]["validation"].contains("loo_median_abs_error"));
  Ran model = iolab_cmd({"model", out.string(), "--json"});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_EQ(nlohmann::json::parse(model.out)["fits"], j["model"]["fits"]);
}

}  // namespace model_cli_test
