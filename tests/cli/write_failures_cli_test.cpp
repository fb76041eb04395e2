// A write that fails (a full or read-only filesystem, a file-size limit, a
// closed or full stdout) is one line and a failing exit, found before any
// experiment where it can be, and keeps what was measured where it cannot.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/decision_file.h"
#include "cli/run_program.h"
#include "io/io_test_support.h"

namespace {

namespace fs = std::filesystem;
using namespace iolab::testing;  // run_program.h, decision_file.h, io_test_support.h: the CLI tests' kit

TEST(WriteFailure, AFailingLaterExperimentKeepsTheResultsSoFar) {
  Workspace w;
  const fs::path out = w / "r.json";
  // Files of 1 MiB, then 16 MiB under a 4 MiB file-size limit: the second
  // experiment fails writing its file (EFBIG), as a full disk would (ENOSPC).
  iolab::testing::StartOptions limited;
  limited.file_size_limit = 4 << 20;
  ProgramRun o = run_iolab({"run", "--method", "pread", "--ops", "16", "--bs", "64k,1m", "--reps", "1", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()},
                           limited);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("File too large"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("custom / read seq 64k"), std::string::npos) << "the finished experiment's table:\n" << o.out;
  EXPECT_NE(o.out.find("stopped early"), std::string::npos) << o.out;
  ASSERT_TRUE(fs::exists(out)) << o.out;
  nlohmann::json j = json_of(out);
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["block_size"], 64 * 1024);
  EXPECT_TRUE(j["results"][0]["verified"].get<bool>());
  ASSERT_TRUE(j["incomplete"].is_string());
  EXPECT_NE(j["incomplete"].get<std::string>().find("File too large"), std::string::npos) << j["incomplete"];
  const std::string csv = read_file(w / "r.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2) << csv;
  EXPECT_TRUE(fs::exists(w / "r.html"));
  EXPECT_TRUE(w.leftovers().empty());
}

TEST(WriteFailure, ARunLargerThanItsFilesystemIsRefusedBeforeAnyWork) {
  Workspace w;
  iolab::testing::TmpfsMount small(w.path(), "size=4m");
  if (!small.mounted()) GTEST_SKIP() << small.why_not();
  // A 2.5 MiB file, then a 5 MiB one, on 4 MiB.
  ProgramRun o = run_iolab({"run", "--method", "pread", "--ops", "40", "--bs", "64k,128k", "--reps", "2", "--dir",
                            small.dir().string(), "--out", (w / "r.json").string()});
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("free in"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_TRUE(names_in(small.dir()).empty());
}

TEST(WriteFailure, AReadOnlyOrFullOutputFilesystemFailsBeforeTheFirstExperiment) {
  Workspace w;
  iolab::testing::TmpfsMount ro(w.path(), "size=64k");
  if (!ro.mounted()) GTEST_SKIP() << ro.why_not();
  iolab::testing::TmpfsMount full(w.path(), "size=64k");
  ASSERT_TRUE(full.mounted()) << full.why_not();
  std::string why = ro.remount_read_only();
  if (!why.empty()) GTEST_SKIP() << why;
  write_file(full.dir() / "filler", std::string(64 * 1024, 'x'));  // as much as fits
  for (const auto& [dir, cause] : {std::pair{ro.dir(), "Read-only file system"}, {full.dir(), "No space left on device"}}) {
    ProgramRun o = run_iolab(small_run(w, {"--out", (dir / "r.json").string()}));
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find(cause), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(names_in(full.dir()), std::vector<std::string>{"filler"});
  EXPECT_TRUE(w.leftovers().empty());
}

TEST(WriteFailure, AFullOutputFilesystemKeepsTheResultsInTheScratchParent) {
  Workspace p;
  iolab::testing::TmpfsMount small(p.path(), "size=64k");
  if (!small.mounted()) GTEST_SKIP() << small.why_not();
  // One page free: the writable-output probe passes, the results JSON does not fit.
  write_file(small.dir() / "filler", std::string(60 * 1024, 'x'));
  const fs::path asked = small.dir() / "r.json";
  // Three records: a JSON of more than the page left (one record's is ~3 KiB).
  ProgramRun r = run_iolab({"run", "--method", "pread", "--size", "64k", "--bs", "4k,8k,16k", "--reps", "1", "--warmup",
                            "0", "--min-time", "0", "--no-latency", "--dir", p.scratch().string(), "--out", asked.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("write " + asked.string() + ": No space left on device"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".tmp"), std::string::npos) << "names a temporary file: " << r.err;
  EXPECT_EQ(names_in(small.dir()), std::vector<std::string>{"filler"}) << "nothing half-written, no lock left";
  // The results went to the scratch parent, under a default name, said on stderr.
  std::vector<fs::path> kept;
  for (const auto& n : names_in(p.scratch()))
    if (fs::path(n).extension() == ".json") kept.push_back(p.scratch() / n);
  ASSERT_EQ(kept.size(), 1u) << r.err;
  EXPECT_NE(r.err.find(kept[0].string()), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(kept[0]))["results"].size(), 3u);
  EXPECT_TRUE(fs::exists(fs::path(kept[0]).replace_extension(".html")));
}

TEST(WriteFailure, AReportTooLargeToWriteKeepsTheJsonAndFails) {
  Workspace p;
  // The scratch file (64 KiB), the JSON and the CSV fit under the file-size
  // limit; the HTML report (its chart bundles alone are ~1 MiB) does not.
  iolab::testing::StartOptions limited;
  limited.file_size_limit = 512 << 10;
  const fs::path out = p / "r.json";
  ProgramRun r = run_iolab(small_run(p, {"--out", out.string()}), limited);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("write " + (p / "r.html").string() + ": File too large"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the results are in " + out.string()), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(out))["results"].size(), 1u);
  EXPECT_FALSE(fs::exists(p / "r.html"));
}

TEST(WriteFailure, AFullOrClosedStdoutIsAnErrorNotASilentSuccess) {
  Workspace p;
  const fs::path a = results_file(p, "a.json");
  const fs::path decided = p / "decision.json";
  iolab::testing::write_decision_file(decided);
  const int full = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"suites"}, {"methods", "--json", "--dir", p.scratch().string()}, {"compare", a.string(), a.string()},
           {"recommend", decided.string()}}) {
    ProgramRun r = run_iolab(args, stdout_to(full));
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << args[0] << ": " << r.err;
    iolab::testing::StartOptions closed;
    closed.close_stdout = true;
    ProgramRun c = run_iolab(args, closed);
    EXPECT_EQ(c.exit_code, 1) << args[0] << ": " << c.err;
    EXPECT_NE(c.err.find("standard output is closed"), std::string::npos) << c.err;
  }
  ::close(full);
}

TEST(WriteFailure, AFileSizeLimitIsAnErrorNotASilentSignal) {
  Workspace p;
  iolab::testing::StartOptions limited;
  limited.file_size_limit = 16 << 10;  // below the 64 KiB scratch file
  limited.sigxfsz_default = true;      // as `ulimit -f 16` in a shell leaves it
  ProgramRun r = iolab::testing::start_iolab(small_run(p, {"--out", (p / "r.json").string()}), limited)->finish();
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(names_in(p.scratch()).empty());
}

TEST(WriteFailure, AFullDiskInTheStoreSuiteSaysNoSpace) {
  Workspace w;
  iolab::testing::TmpfsMount small(w.path(), "size=6m");
  if (!small.mounted()) GTEST_SKIP() << small.why_not();
  ProgramRun o = run_iolab({"run", "store", "--scale", "tiny", "--records", "40000", "--reps", "1", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--dir", small.dir().string(), "--out",
                            (w / "r.json").string()});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("No space left on device"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("filesystem error"), std::string::npos) << o.err;
  EXPECT_TRUE(names_in(small.dir()).empty()) << joined(names_in(small.dir()));
}

}  // namespace
