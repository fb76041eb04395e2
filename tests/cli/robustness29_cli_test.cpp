// Issue 29, case by case: iolab-mpi, recommend, crosscheck and report keep
// the guarantees `iolab run` keeps (issue 14). Each test is named after the
// item it guards (I1 = item 1, ...) and runs the built programs as a user (or
// a hostile user) would.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/decision_file.h"
#include "cli/run_program.h"
#include "io/io_test_support.h"

namespace {
namespace issue29 {

namespace fs = std::filesystem;
using iolab::testing::ProgramRun;
using iolab::testing::read_file;
using iolab::testing::write_file;
using iolab::testing::run_iolab;

using iolab::testing::names_in;
using Place = iolab::testing::Workspace;

std::vector<std::string> small_run(const Place& p, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"run",      "--method", "pread",      "--size", "64k",          "--bs",
                                "4k",       "--reps",   "1",          "--warmup", "0",          "--min-time",
                                "0",        "--no-latency", "--dir", p.scratch().string()};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// A results file of one record (a real run's).
fs::path results_file(const Place& p, const std::string& name) {
  const fs::path out = p / name;
  ProgramRun r = run_iolab(small_run(p, {"--out", out.string()}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

iolab::testing::StartOptions stdout_to(int fd) {
  iolab::testing::StartOptions o;
  o.stdout_fd = fd;
  return o;
}

// ---- I2: recommend --save and crosscheck --out: run --out's rules, before any work

TEST(Issue29, I2_RecommendSaveIsRefusedBeforeMeasuringAsRunOutIs) {
  Place p;
  write_file(p / "mine.json", "{\"mine\": true}\n");
  fs::create_symlink("/dev/stdout", p / "out.json");
  write_file(p / "plain", "");
  struct Case {
    std::string save;
    int exit_code;
    std::string says;
  };
  for (const Case& c : {Case{(p / "mine.txt").string(), 2, "ending in .json"},
                        Case{(p / "mine.json").string(), 2, "not one iolab wrote"},
                        Case{(p / "out.json").string(), 2, "not one iolab wrote"},
                        Case{(p / "plain" / "r.json").string(), 1, "plain"}}) {
    ProgramRun r = run_iolab({"recommend", "--save", c.save, "--dir", p.scratch().string(), "--max-file", "64k"});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.save << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "measured before refusing:\n" << r.out;
  }
  EXPECT_EQ(read_file(p / "mine.json"), "{\"mine\": true}\n");
  EXPECT_TRUE(fs::is_symlink(p / "out.json"));
  EXPECT_TRUE(names_in(p.scratch()).empty());
}

TEST(Issue29, I2_CrosscheckOutIsRefusedBeforeAnyWork) {
  Place p;
  fs::create_directory(p / "dir.json");
  write_file(p / "plain", "");
  write_file(p / "theirs.json", "{}\n");
  struct Case {
    std::string out;
    int exit_code;
    std::string says;
  };
  for (const Case& c : {Case{(p / "dir.json").string(), 2, "is a directory"},
                        Case{(p / "r.txt").string(), 2, "ending in .json"},
                        Case{(p / "theirs.json").string(), 2, "not one iolab wrote"},
                        Case{(p / "plain" / "r.json").string(), 1, "plain"}}) {
    // /bin/true as fio: the refusal must come before fio is ever asked anything.
    ProgramRun r = run_iolab({"crosscheck", "--fio-program", "/bin/true", "--method", "pread", "--bs", "4k", "--size",
                              "64k", "--rounds", "1", "--reps", "1", "--dir", p.scratch().string(), "--out", c.out});
    EXPECT_EQ(r.exit_code, c.exit_code) << c.out << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(read_file(p / "theirs.json"), "{}\n");
  EXPECT_TRUE(names_in(p.scratch()).empty());
}

// ---- I3: results survive where they can be written ---------------------------

TEST(Issue29, I3_ALegalOutNameNearTheLimitIsPublished) {
  Place p;
  const std::string name = std::string(250, 'r') + ".json";  // 255 bytes: NAME_MAX
  ProgramRun r = run_iolab(small_run(p, {"--out", (p / name).string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(p / name))["results"].size(), 1u);
  EXPECT_TRUE(fs::exists(p / (std::string(250, 'r') + ".html")));
  for (const auto& n : names_in(p.path())) EXPECT_NE(n.front(), '.') << "left behind: " << n;
}

TEST(Issue29, I3_AFullOutputFilesystemKeepsTheResultsInTheScratchParent) {
  Place p;
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

TEST(Issue29, I3_AReportTooLargeToWriteKeepsTheJsonAndFails) {
  Place p;
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

TEST(Issue29, I3_ARunGivenAnOutAnotherRunIsWritingIsRefused) {
  Place p;
  const fs::path out = p / "r.json";
  // Held as a running iolab holds it.
  const int fd = ::open((p / ".r.json.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  ProgramRun r = run_iolab(small_run(p, {"--out", out.string()}));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_NE(r.err.find("another iolab command is writing results under this name"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // Released, the name is free again, and the lock goes with the run.
  ProgramRun again = run_iolab(small_run(p, {"--out", out.string()}));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(fs::exists(p / ".r.json.lock"));
}

// ---- I4: a closed or full stdout is an error -------------------------------------

TEST(Issue29, I4_AFullOrClosedStdoutIsAnErrorNotASilentSuccess) {
  Place p;
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

// ---- I5, I6: inputs bounded before parsing ----------------------------------------

TEST(Issue29, I5_DeeplyNestedResultsAndJobFilesAreOneLineNotACrash) {
  Place p;
  nlohmann::json j = nlohmann::json::parse(read_file(results_file(p, "a.json")));
  std::string text = j.dump();
  const std::string deep = std::string(150000, '[') + std::string(150000, ']');
  text.replace(text.find("\"extra\":{"), 9, "\"extra\":{\"deep\":" + deep + ",");
  write_file(p / "deep.json", text);
  for (const auto& args : std::vector<std::vector<std::string>>{{"report", (p / "deep.json").string(), "-o", (p / "x.html").string()},
                                                                {"compare", (p / "deep.json").string(), (p / "deep.json").string()},
                                                                {"recommend", (p / "deep.json").string()}}) {
    ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find("nested deeper than 256"), std::string::npos) << r.err;
  }
  std::string dotted = "a";
  for (int i = 0; i < 60000; ++i) dotted += ".a";
  for (const std::string& job : {"method = \"pread\"\n[" + dotted + "]\n", "method = \"pread\"\n" + dotted + " = 1\n",
                                 "method = \"pread\"\nx = " + std::string(60000, '[') + std::string(60000, ']') + "\n"}) {
    write_file(p / "job.toml", job);
    ProgramRun r = run_iolab({"run", "--job", (p / "job.toml").string(), "--dir", p.scratch().string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find("job file"), std::string::npos) << r.err;
  }
}

TEST(Issue29, I6_EndlessOrHugeInputsAreRefusedBeforeReading) {
  Place p;
  write_file(p / "huge.toml", "");
  ASSERT_EQ(::truncate((p / "huge.toml").c_str(), 2 << 20), 0);  // 2 MiB of holes: past the 1 MiB cap
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : {Case{{"run", "--job", "/dev/zero"}, "not a regular file"},
                        Case{{"run", "--job", (p / "huge.toml").string()}, "larger than 1 MiB"},
                        Case{{"compare", "/dev/zero", "/dev/zero"}, "not a regular file"}}) {
    ProgramRun r = run_iolab(c.args);
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// ---- I13: past ulimit -f, an error like a full disk, not a silent SIGXFSZ ----

TEST(Issue29, I13_AFileSizeLimitIsAnErrorNotASilentSignal) {
  Place p;
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

// ---- I12: crosscheck measuring nothing is a failure ------------------------------

TEST(Issue29, I12_CrosscheckThatMeasuredNothingExitsNonZero) {
  Place p;
  // A "fio" that prints nothing: every row fails on fio's side.
  ProgramRun r = run_iolab({"crosscheck", "--fio-program", "/bin/true", "--method", "pread", "--bs", "4k", "--size",
                            "64k", "--rounds", "1", "--reps", "1", "--warmup", "0", "--min-time", "0", "--dir",
                            p.scratch().string()});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(names_in(p.scratch()).empty()) << "scratch left behind";
}

// ---- I14: values to refuse -------------------------------------------------------

TEST(Issue29, I14_CrosscheckRefusesNanNegativeAndWrappedValues) {
  Place p;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--max-time", "nan"}, {"--min-time", "-1"}, {"--min-time", "nan"}, {"--seed", "-1"}}) {
    std::vector<std::string> args{"crosscheck", "--fio-program", "/bin/true", "--dir", p.scratch().string()};
    args.insert(args.end(), bad.begin(), bad.end());
    ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1] << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Issue29, I14_RunRefusesOpsZeroAndOpsWithSize) {
  Place p;
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--ops", "0"}, {"--ops", "16", "--size", "64k"}}) {
    std::vector<std::string> args{"run", "--method", "pread", "--bs", "4k", "--dir", p.scratch().string()};
    args.insert(args.end(), bad.begin(), bad.end());
    ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find("--ops"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_TRUE(names_in(p.scratch()).empty());
}

// ---- I12: a signal during crosscheck's fio phase --------------------------------

// A "fio" that stands for one in the middle of its run: it says where it is
// (its pid, in a file of the test's), then keeps re-creating its data file as
// fio does between loops, until killed.
TEST(Issue29, I12_ASignalDuringFiosPhaseStopsFioAndRemovesItsFiles) {
  Place p;
  const fs::path fake = p / "fio", mark = p / "fio-pid";
  write_file(fake, "#!/bin/sh\n"
                   "if [ \"$1\" = --version ]; then echo fio-3.33; exit 0; fi\n"
                   "f=; for a; do case \"$a\" in --filename=*) f=\"${a#--filename=}\";; esac; done\n"
                   "echo $$ > " + (p / "fio-pid.tmp").string() + " && mv " + (p / "fio-pid.tmp").string() + " " +
                       mark.string() + "\n"
                   "while :; do : >> \"$f\"; sleep 0.01; done\n");
  fs::permissions(fake, fs::perms::owner_all);
  auto run = iolab::testing::start_iolab({"crosscheck", "--fio-program", fake.string(), "--method", "pread", "--bs", "4k",
                                       "--size", "64k", "--rounds", "1", "--reps", "1", "--warmup", "0", "--min-time",
                                       "0", "--dir", p.scratch().string()});
  ASSERT_TRUE(iolab::testing::wait_until([&] { return fs::exists(mark); })) << "fio never started";
  const pid_t fio = std::stoi(read_file(mark));
  run->send(SIGTERM);
  ProgramRun r = run->finish();
  EXPECT_EQ(r.signal, SIGTERM) << "exit " << r.exit_code << ": " << r.err;
  EXPECT_NE(r.err.find("iolab: crosscheck interrupted by SIGTERM"), std::string::npos) << r.err;
  // fio ended with iolab (gone, or a zombie waiting for init), not writing on.
  auto state = [&] {
    std::ifstream in("/proc/" + std::to_string(fio) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? 'X' : text[close + 2];
  };
  const bool ended = iolab::testing::wait_until([&] { return state() == 'X' || state() == 'Z'; }, std::chrono::seconds(10));
  if (!ended) ::kill(fio, SIGKILL);  // leave nothing running
  EXPECT_TRUE(ended) << "fio (pid " << fio << ") still runs after iolab ended";
  EXPECT_TRUE(names_in(p.scratch()).empty()) << "scratch left behind: " << (names_in(p.scratch()).empty() ? "" : names_in(p.scratch()).front());
}

// ---- I6, I13: out of memory is one line, exit 1 ----------------------------------

TEST(Issue29, I6_UnderAnAddressSpaceLimitReportCompareAndRecommendSayOneLine) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan maps terabytes of shadow memory at start: under `ulimit -v` of a few
  // MiB the sanitized iolab dies before main (SIGSEGV), whatever iolab does.
  GTEST_SKIP() << "an address-space limit cannot hold an AddressSanitizer build (its shadow memory)";
#endif
  Place p;
  const fs::path a = results_file(p, "a.json");
  const fs::path decided = p / "decision.json";
  iolab::testing::write_decision_file(decided);
  // Limits from "cannot start the signal thread" to "cannot parse": each a line and exit 1, never an abort.
  for (std::uint64_t mib : {13u, 14u, 16u, 20u, 24u}) {
    iolab::testing::StartOptions limited;
    limited.address_space_limit = mib << 20;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"compare", a.string(), a.string()}, {"report", a.string(), "-o", (p / "x.html").string()},
          {"recommend", decided.string()}}) {
      ProgramRun r = iolab::testing::start_iolab(args, limited)->finish();
      SCOPED_TRACE(args[0] + " under " + std::to_string(mib) + " MiB");
      EXPECT_EQ(r.signal, 0) << r.err;
      if (r.exit_code == 127) continue;  // the loader could not map a library: before iolab runs
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << ": " << r.err;
      if (r.exit_code != 0) {
        EXPECT_EQ(r.err_lines(), 1u) << r.err;
        EXPECT_NE(r.err, "iolab: Resource temporarily unavailable\n") << "an EAGAIN that names no operation";
      }
    }
  }
}

// ---- I14: --threads (and --records) to suites that do not read them -------------

TEST(Issue29, I14_AnOptionNoChosenSuiteReadsIsRefusedBeforeAnyWork) {
  Place p;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "seq-read", "--threads", "4"}, {"run", "copy", "--records", "100"},
        {"run", "parallel", "--scale", "tiny", "--threads", "100000"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--dir", p.scratch().string()});
    ProgramRun r = run_iolab(full);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(args[args.size() - 2]), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "a header printed before the refusal: " << r.out;
  }
  ProgramRun r = run_iolab({"run", "seq-read", "--threads", "4", "--dir", p.scratch().string()});
  EXPECT_NE(r.err.find("parallel"), std::string::npos) << "names the suite that reads it: " << r.err;
  EXPECT_TRUE(names_in(p.scratch()).empty());
}

// ---- I15: terminals, escapes, absurd values, duplicates --------------------------

TEST(Issue29, I15_BidiAndSeparatorCharactersInErrorsAreEscaped) {
  Place p;
  const std::string name = "a\xe2\x80\xae" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d.json";
  ProgramRun r = run_iolab({"report", (p / name).string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.find("\xe2\x80"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a\\u202eb\\u2028c\\u2029d.json"), std::string::npos) << r.err;
}

TEST(Issue29, I15_NegativeCpuSecondsAreRefusedOnLoad) {
  Place p;
  const fs::path a = results_file(p, "a.json");
  nlohmann::json j = nlohmann::json::parse(read_file(a));
  j["results"][0]["cpu"]["sys_s"] = -2.4e298;
  write_file(p / "bad.json", j.dump());
  for (const char* command : {"report", "recommend"}) {
    ProgramRun r = run_iolab({command, (p / "bad.json").string()});
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cpu.sys_s"), std::string::npos) << r.err;
  }
}

// Repetitions of 1e308 s leave a rate too small to divide by: compare printed "B is n/ax slower"
// one way round and "as fast as A (1.00x)" the other. It says there is no factor, and why.
TEST(Issue29, I15_SamplesOf1e308HaveNoFactorAndSaySoEitherWayRound) {
  Place p;
  const fs::path a = results_file(p, "a.json");
  nlohmann::json j = nlohmann::json::parse(read_file(a));
  for (auto& s : j["results"][0]["samples_s"]) s = 1e308;
  write_file(p / "slow.json", j.dump());
  for (const auto& [first, second] : {std::pair{a, p / "slow.json"}, std::pair{p / "slow.json", a}}) {
    for (bool markdown : {false, true}) {
      std::vector<std::string> args{"compare", first.string(), second.string()};
      if (markdown) args.push_back("--markdown");
      ProgramRun r = run_iolab(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      // "n/ax" is what the old output said; a bare "n/a" could be the temporary directory's name ending in n.
      EXPECT_EQ(r.out.find("n/ax"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("1.00x"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("no factor between the rates"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("1e+308 s"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("1 not compared"), std::string::npos) << r.out;
    }
  }
}

TEST(Issue29, I15_DuplicateRecordsInOneFileAreCountedOnceByCompare) {
  Place p;
  const fs::path a = results_file(p, "a.json");
  nlohmann::json j = nlohmann::json::parse(read_file(a));
  j["results"].push_back(j["results"][0]);
  write_file(p / "twice.json", j.dump());
  write_file(p / "b.json", read_file(a));
  ProgramRun once = run_iolab({"compare", a.string(), (p / "b.json").string()});
  ProgramRun twice = run_iolab({"compare", a.string(), (p / "twice.json").string()});
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("twice.json: 1 record repeats an earlier one exactly; each is counted once"), std::string::npos)
      << twice.err;
  EXPECT_TRUE(once.err.empty()) << once.err;
  // The comparison is the one of the file without the copy: only B's name differs.
  auto named_b = [](const std::string& text, const std::string& name) {
    std::string out;
    std::size_t from = 0;
    for (auto at = text.find(name); at != std::string::npos; at = text.find(name, from)) {
      out.append(text, from, at - from).append("B");
      from = at + name.size();
    }
    return out.append(text, from, std::string::npos);
  };
  EXPECT_EQ(named_b(twice.out, (p / "twice.json").string()), named_b(once.out, (p / "b.json").string()));
}

// Issue 26 item 4: the Markdown exporter behind iolab report -o FILE.md.
TEST(Issue26, ReportToAMarkdownFileUsesTheMarkdownExporter) {
  Place p;
  const fs::path a = results_file(p, "a.json");
  ProgramRun r = run_iolab({"report", a.string(), "-o", (p / "summary.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = read_file(p / "summary.md");
  EXPECT_TRUE(md.starts_with("<!-- iolab results (Markdown) -->\n# iolab results (a.json)")) << md;
  EXPECT_NE(md.find("| custom | "), std::string::npos) << md;
  EXPECT_NE(md.find(" | pread | read | 4 KiB | 64 KiB | warm | "), std::string::npos) << md;
  EXPECT_EQ(run_iolab({"report", a.string(), "-o", (p / "summary.txt").string()}).exit_code, 2);
}

}  // namespace issue29
}  // namespace
