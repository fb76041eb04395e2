// `iolab run --fio` and `iolab crosscheck --fio` as a user runs them: a
// tiny fio job file (sized by --fio-set) runs and its records carry how each
// job was mapped; an option iolab does not map is one line naming it, the
// file and the line, exit 2, unless --fio-lenient lists it in the warnings.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "run_program.h"

namespace iolab::testing {
namespace {

// A directory for the job file and the results (files the test asked for); removed with them.
struct Workdir {
  TestDir dir{"/tmp"};
  std::filesystem::path file(const std::string& name) const { return dir / name; }
  std::filesystem::path job(const std::string& text) const {
    auto p = file("job.fio");
    write_file(p, text);
    return p;
  }
};

const char* kTwoJobs =
    "; two jobs, sized down from the command line\n"
    "[global]\n"
    "ioengine=psync\n"
    "bs=4k\n"
    "size=10g\n"
    "invalidate=0\n"
    "\n"
    "[reader]\n"
    "rw=randread\n"
    "\n"
    "[writer]\n"
    "stonewall\n"
    "rw=write\n"
    "end_fsync=1\n";

TEST(FioCli, RunsTheJobsAsMappedAndRecordsTheMapping) {
  Workdir w;
  auto job = w.job(kTwoJobs);
  auto json = w.file("r.json");
  w.file("r.csv");
  w.file("r.html");
  ProgramRun r = run_iolab({"run", "--fio", job.string(), "--fio-set", "size=64k", "--fio-set", "loops=2", "--dir",
                            "/tmp", "--no-latency", "--out", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fio job [reader]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("size=64k"), std::string::npos) << r.out;
  nlohmann::json j = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& reader = j["results"][0];
  EXPECT_EQ(reader["suite"], "fio");
  EXPECT_EQ(reader["method"], "pread");
  EXPECT_EQ(reader["op"], "read");
  EXPECT_EQ(reader["pattern"], "rand");
  EXPECT_EQ(reader["cache"], "warm");
  EXPECT_EQ(reader["file_size"], 64 * 1024);
  EXPECT_EQ(reader["block_size"], 4096);
  EXPECT_EQ(reader["reps"], 2);  // loops=2
  EXPECT_EQ(reader["passes"], 1);
  EXPECT_TRUE(reader["verified"].get<bool>());
  const auto& fio = reader["extra"]["fio"];
  EXPECT_EQ(fio["job_file"], job.string());
  EXPECT_EQ(fio["section"], "reader");
  EXPECT_EQ(fio["at"], job.string() + ":8");
  bool listed = false;
  for (const auto& o : fio["options"])
    if (o["option"] == "size=64k") {
      listed = true;
      EXPECT_EQ(o["at"], "--fio-set");
    }
  EXPECT_TRUE(listed) << fio.dump(2);
  const auto& writer = j["results"][1];
  EXPECT_EQ(writer["op"], "write");
  EXPECT_EQ(writer["sync"], "end:fsync");
  EXPECT_TRUE(writer["verified"].get<bool>());
  EXPECT_EQ(writer["extra"]["fio"]["section"], "writer");
}

TEST(FioCli, AnOptionIolabDoesNotMapIsOneLineWithFileAndLine) {
  Workdir w;
  auto job = w.job("[global]\nsize=64k\n[j]\nrw=read\nverify=md5\n");
  ProgramRun r = run_iolab({"run", "--fio", job.string(), "--dir", "/tmp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find(job.string() + ":5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'verify=md5'"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  auto json = w.file("l.json");
  w.file("l.csv");
  w.file("l.html");
  ProgramRun lenient = run_iolab({"run", "--fio", job.string(), "--fio-lenient", "--fio-set", "loops=1", "--reps",
                                  "1", "--min-time", "0", "--no-latency", "--dir", "/tmp", "--out", json.string()});
  ASSERT_EQ(lenient.exit_code, 0) << lenient.err;
  nlohmann::json j = nlohmann::json::parse(read_file(json));
  ASSERT_EQ(j["results"].size(), 1u);
  bool warned = false;
  for (const auto& warning : j["results"][0]["warnings"])
    warned |= warning["text"].get<std::string>().find("'verify=md5'") != std::string::npos;
  EXPECT_TRUE(warned) << j["results"][0]["warnings"].dump();
  EXPECT_EQ(j["results"][0]["extra"]["fio"]["ignored"][0]["at"], job.string() + ":5");
}

TEST(FioCli, BadInputIsOneLineAndExit2) {
  Workdir w;
  auto job = w.job("[j]\nsize=64k\n");
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--fio", "/dev/zero"},
      {"run", "--fio", "/nonexistent/job.fio"},
      {"run", "--fio", job.string(), "--fio-set", "size=12q"},
      {"run", "--fio", job.string(), "--fio-set", "verify=md5"},
      {"run", "--fio", job.string(), "--method", "pread"},
      {"run", "--fio-set", "size=1m"},
      {"run", "--fio", job.string(), "--fio-set", "rw=randrw"},
      {"run", "--fio", job.string(), "--fio-set", "ioengine=libaio"},
      {"crosscheck", "--fio", "/nonexistent/job.fio"},
      {"crosscheck", "--fio", job.string(), "--fio-set", "numjobs=2", "--fio-set", "invalidate=0"},
  };
  for (const auto& args : cases) {
    ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
  }
}

// numjobs x size beyond a file offset is refused while mapping: the one-line
// error, and nothing on stdout before it (no header, no mapping).
TEST(FioCli, NumjobsTimesSizeThatOverflowsPrintsNothingBeforeTheError) {
  Workdir w;
  auto job = w.job("[j]\nsize=8192p\nnumjobs=1024\ninvalidate=0\nrw=read\n");
  for (const std::string command : {"run", "crosscheck"}) {
    ProgramRun r = run_iolab({command, "--fio", job.string(), "--dir", w.dir.path().string()});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find("numjobs=1024 x size="), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the workers' files together overflow a file offset"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << command << " printed before refusing:\n" << r.out;
  }
}

// --dir holding a ':' is one directory for --fio as for a plain run.
TEST(FioCli, ADirHoldingAColonIsAcceptedAsAPlainRunAcceptsIt) {
  Workdir w;
  const std::filesystem::path colon = w.file("a:b");
  std::filesystem::create_directory(colon);
  auto job = w.job("[j]\nsize=64k\nbs=4k\ninvalidate=0\nrw=read\nloops=1\n");
  ProgramRun r = run_iolab({"run", "--fio", job.string(), "--dir", colon.string(), "--reps", "1", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--out", w.file("r.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("several directories"), std::string::npos) << r.err;
  EXPECT_TRUE(iolab::testing::names_in(colon).empty()) << "its scratch directory was made there and removed";
}

TEST(FioCli, CrosscheckRunsEachMappedJobIfFioIsInstalled) {
  if (!fio_installed()) GTEST_SKIP() << "fio is not installed (apt-get install fio): nothing to compare with";
  Workdir w;
  auto job = w.job(kTwoJobs);
  ProgramRun r = run_iolab({"crosscheck", "--fio", job.string(), "--fio-set", "size=256k", "--rounds", "1", "--reps",
                            "1", "--min-time", "0", "--dir", "/tmp", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& reader = j["rows"][0];
  EXPECT_TRUE(reader["skipped"].is_null()) << reader["skipped"];
  EXPECT_EQ(reader["fio_engine"], "psync");
  EXPECT_EQ(reader["fio_job"]["section"], "reader");
  ASSERT_EQ(reader["rounds"].size(), 1u);
  EXPECT_NE(reader["rounds"][0]["fio_command"].get<std::string>().find("--rw=randread"), std::string::npos);
  // Writes are not cross-checked: the row says why.
  EXPECT_NE(j["rows"][1]["skipped"].get<std::string>().find("only reads"), std::string::npos);
}

}  // namespace
}  // namespace iolab::testing
