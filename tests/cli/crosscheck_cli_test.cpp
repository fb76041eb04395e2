// `iolab crosscheck` as a user runs it: without fio it says so in one line
// and exits 2; bad input is one line and exit 2; with fio (when installed),
// a tiny run gives both sides' figures for the same work, as JSON or a table.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "run_program.h"

namespace iolab::testing {
namespace {

// Sets an environment variable for the scope (the child inherits it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(CrosscheckCli, WithoutFioOnPathItSaysSoInOneLineAndExits2) {
  ScopedEnv path("PATH", "/nonexistent");
  ProgramRun r = run_iolab({"crosscheck"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("needs fio"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not on PATH"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CrosscheckCli, AFioThatIsNotThereIsNamed) {
  ProgramRun r = run_iolab({"crosscheck", "--fio-program", "/nonexistent/fio"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/fio"), std::string::npos) << r.err;
}

TEST(CrosscheckCli, BadInputIsOneLineAndExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"crosscheck", "--method", "frobnicate"},
                                                                 {"crosscheck", "--rounds", "0"},
                                                                 {"crosscheck", "--size", "12q"},
                                                                 {"crosscheck", "--method", "pread", "--qd", "0"}}) {
    ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << args[2];
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
  }
}

TEST(CrosscheckCli, ATinyRunComparesTheSameWorkIfFioIsInstalled) {
  if (!fio_installed()) GTEST_SKIP() << "fio is not installed (apt-get install fio): nothing to compare with";
  ProgramRun r = run_iolab({"crosscheck", "--method", "pread,stdio", "--bs", "4k", "--size", "256k", "--rounds", "2",
                            "--reps", "2", "--min-time", "0", "--dir", "/tmp", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "iolab-crosscheck");
  EXPECT_EQ(j["fio_version"].get<std::string>().rfind("fio-", 0), 0u);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& pread = j["rows"][0];
  EXPECT_EQ(pread["fio_engine"], "psync");
  EXPECT_TRUE(pread["skipped"].is_null()) << pread["skipped"];
  ASSERT_EQ(pread["rounds"].size(), 2u);
  for (const auto& round : pread["rounds"]) {
    // fio moved exactly the bytes of iolab's timed repetitions.
    EXPECT_EQ(round["fio"]["bytes"].get<double>(),
              round["iolab"]["bytes"].get<double>() * round["iolab_reps"].get<double>());
    EXPECT_NE(round["fio_command"].get<std::string>().find("--ioengine=psync"), std::string::npos);
    EXPECT_NE(round["fio_null_command"].get<std::string>().find("--ioengine=null"), std::string::npos);
  }
  EXPECT_EQ(pread["rounds"][0]["first"], "iolab");
  EXPECT_EQ(pread["rounds"][1]["first"], "fio");
  EXPECT_FALSE(pread["differences"].empty());
  const auto& stdio = j["rows"][1];
  EXPECT_TRUE(stdio["rounds"].empty());
  EXPECT_NE(stdio["skipped"].get<std::string>().find("no engine"), std::string::npos);

  ProgramRun text = run_iolab({"crosscheck", "--method", "mmap", "--bs", "4k", "--size", "256k", "--rounds", "1",
                               "--reps", "1", "--min-time", "0", "--dir", "/tmp"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("round 1 (iolab first)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  fio: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--ioengine=mmap"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace iolab::testing
