// `iolab run` and `iolab suites` as a user runs them: a tiny custom matrix
// writes valid JSON and CSV; bad option values and bad job files are one
// line on stderr and exit code 2.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "iolab/testing/test_dir.h"
#include "cli/run_program.h"

namespace {

using RunOutcome = iolab::testing::ProgramRun;
using iolab::testing::read_file;
RunOutcome iolab(const std::vector<std::string>& args) { return iolab::testing::run_iolab(args); }

// A directory for results the test asked iolab to write (iolab writes there
// only because --out says so); removed with all it holds.
struct ResultsDir {
  iolab::testing::TestDir dir{"/tmp"};
  std::filesystem::path file(const std::string& name) const { return dir / name; }
};

TEST(RunCli, TinyCustomMatrixWritesJsonAndCsv) {
  ResultsDir dir;
  auto json_path = dir.file("r.json");
  auto csv_path = dir.file("r.csv");
  auto html_path = dir.file("r.html");
  RunOutcome o = iolab({"run", "--method", "pread,mmap", "--op", "read,write", "--bs", "4k,64k", "--size", "256k",
                        "--reps", "2", "--min-time", "0", "--dir", "/tmp", "--out", json_path.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("custom / read seq 4k warm"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(json_path.string()), std::string::npos);
  EXPECT_NE(o.out.find(csv_path.string()), std::string::npos);
  EXPECT_NE(o.out.find("HTML: " + html_path.string()), std::string::npos) << o.out;
  EXPECT_TRUE(std::filesystem::exists(html_path));
  EXPECT_EQ(o.out.find('\033'), std::string::npos) << "escape codes in output that is not a terminal";
  EXPECT_TRUE(o.err.empty()) << "progress must stay off when stderr is not a terminal: " << o.err;

  nlohmann::json j = nlohmann::json::parse(read_file(json_path));
  EXPECT_EQ(j["format"], "iolab-results");
  EXPECT_NE(j["environment"]["command"].get<std::string>().find("--method pread,mmap"), std::string::npos);
  ASSERT_EQ(j["results"].size(), 8u);  // 2 methods x 2 ops x 2 block sizes
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["suite"], "custom");
    EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
    EXPECT_TRUE(r["skipped"].is_null());
    EXPECT_EQ(r["reps"], 2);
    EXPECT_EQ(r["samples_s"].size(), 2u);
    EXPECT_GT(r["mib_per_s"]["median"].get<double>(), 0);
  }
  std::istringstream csv(read_file(csv_path));
  std::vector<std::string> lines;
  for (std::string l; std::getline(csv, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0].rfind("suite,experiment,method", 0), 0u);
}

TEST(RunCli, JobFileRunsItsMatrix) {
  ResultsDir dir;
  auto job = dir.file("job.toml");
  std::ofstream(job) << "method = \"syscall\"\nop = \"write\"\nbs = \"1k\"\nops = 64\nsync = \"end\"\nreps = 2\n";
  auto json_path = dir.file("j.json");
  dir.file("j.csv");
  dir.file("j.html");
  RunOutcome o = iolab({"run", "--job", job.string(), "--out", json_path.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(read_file(json_path));
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["sync"], "end:fdatasync");
  EXPECT_EQ(j["results"][0]["ops"], 64 * j["results"][0]["passes"].get<int>());  // per repetition of passes
  EXPECT_EQ(j["results"][0]["reps"], 2);
}

TEST(RunCli, BadValuesAreOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--method", "pread", "--bs", "4q"},
      {"run", "--method", "nosuch"},
      {"run", "--method", "pread", "--cache", "tepid"},
      {"run", "--method", "pread", "--op", "append"},
      {"run", "--method", "pread", "--sync", "sometimes"},
      {"run", "--method", "pread", "--reps", "0"},
      {"run", "--scale", "huge"},
      {"run", "no-such-suite"},
      {"run", "--job", "/nonexistent/job.toml"},
      {"run", "--method", "pread", "--threads", "0"},
  };
  for (const auto& args : cases) {
    RunOutcome o = iolab(args);
    std::string cmd;
    for (const auto& a : args) cmd += a + " ";
    EXPECT_EQ(o.exit_code, 2) << cmd << "\n" << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << cmd << "\n" << o.err;
  }
}

TEST(RunCli, BadJobFileIsOneLineAndExitTwo) {
  ResultsDir dir;
  int n = 0;
  for (const char* text : {"method = [\"pread\"\n", "method = \"pread\"\nbs = \"4q\"\n", "methd = \"pread\"\n"}) {
    auto job = dir.file("bad" + std::to_string(n++) + ".toml");
    std::ofstream(job) << text;
    RunOutcome o = iolab({"run", "--job", job.string()});
    EXPECT_EQ(o.exit_code, 2) << text << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find(job.string()), std::string::npos) << o.err;
  }
}

TEST(RunCli, SuitesListsNameSeedAndDescription) {
  RunOutcome o = iolab({"suites", "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_TRUE(j.is_array());
  for (const auto& s : j) {
    EXPECT_FALSE(s["name"].get<std::string>().empty());
    EXPECT_TRUE(s.contains("seed"));
    EXPECT_FALSE(s["description"].get<std::string>().empty());
  }
}

}  // namespace

namespace {

// A suite that repeats its own way (the memory suite: one timed pass per
// record) says so in the run header instead of the --reps it does not take.
TEST(RunCli, HeaderSaysWhatASuiteWithItsOwnRepetitionsDoes) {
  ResultsDir dir;
  auto json_path = dir.file("memory.json");
  dir.file("memory.csv");
  dir.file("memory.html");
  RunOutcome o = iolab({"run", "memory", "--scale", "tiny", "--dir", "/tmp", "--out", json_path.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string header = o.out.substr(0, o.out.find("\n\n"));
  EXPECT_NE(header.find("repetitions as the suite says (below)"), std::string::npos) << header;
  EXPECT_NE(header.find("memory: one timed pass per record"), std::string::npos) << header;
  EXPECT_EQ(header.find("timed reps +"), std::string::npos) << header;
  EXPECT_EQ(header.find("each repetition lasts at least"), std::string::npos) << header;
  nlohmann::json j = nlohmann::json::parse(read_file(json_path));
  for (const auto& r : j["results"]) {
    if (r["skipped"].is_null()) {
      EXPECT_EQ(r["reps"], 1) << "what the header says is what the records say";
    }
  }
}

}  // namespace
