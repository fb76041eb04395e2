// Issue 14, case by case: nothing the user ran is lost, nothing outside
// scratch is touched, no input crashes iolab. Each test is named after the
// finding it guards (R1 = item 1, ...) and runs the built binary as a user
// (or a hostile user) would.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_program.h"
#include "io/io_test_support.h"

namespace {

namespace fs = std::filesystem;
using iolab::testing::ProgramRun;
using iolab::testing::read_file;
using iolab::testing::write_file;
using iolab::testing::run_iolab;
using iolab::testing::start_iolab;
using iolab::testing::wait_until;

using iolab::testing::names_in;
using iolab::testing::Workspace;

// The smallest useful run: one experiment, one short repetition.
std::vector<std::string> tiny_run(const Workspace& w, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"run",   "--method",     "pread", "--size",     "64k", "--bs",  "4k",
                                "--reps", "1",           "--warmup", "0",       "--min-time", "0", "--no-latency",
                                "--dir", w.scratch().string()};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

nlohmann::json json_of(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += a + " ";
  return s;
}

iolab::testing::StartOptions in_directory(const fs::path& cwd) {
  iolab::testing::StartOptions o;
  o.cwd = cwd;
  return o;
}

// ---- R1: two runs never share a results file ---------------------------------

TEST(Issue14, R1_RunsStartedTogetherEachKeepTheirOwnResultsFiles) {
  Workspace w;
  // Four at once (within a second: the old 1-second names gave at most two files).
  std::vector<std::unique_ptr<iolab::testing::RunningProgram>> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(start_iolab(tiny_run(w), in_directory(w.path())));
  for (auto& r : runs) {
    ProgramRun o = r->finish();
    EXPECT_EQ(o.exit_code, 0) << o.err;
  }
  // And one more right after: back to back, nothing is overwritten.
  EXPECT_EQ(run_iolab(tiny_run(w), in_directory(w.path())).exit_code, 0);
  int json = 0, csv = 0, html = 0;
  for (const auto& name : names_in(w / "results")) {
    EXPECT_NE(name.front(), '.') << "a temporary file was left: " << name;
    fs::path p = w / "results" / name;
    if (p.extension() == ".json") {
      ++json;
      nlohmann::json j = json_of(p);  // throws (fails the test) unless whole
      EXPECT_EQ(j["format"], "iolab-results");
      EXPECT_EQ(j["results"].size(), 1u);
      EXPECT_TRUE(j["incomplete"].is_null());
    }
    csv += p.extension() == ".csv";
    html += p.extension() == ".html";
  }
  EXPECT_EQ(json, 5);
  EXPECT_EQ(csv, 5);
  EXPECT_EQ(html, 5);
  EXPECT_TRUE(w.leftovers().empty());
}

// ---- R2: the outputs are .json/.csv/.html of one stem, never an input -------

TEST(Issue14, R2_OutMustNameAJsonFile) {
  Workspace w;
  for (const char* out : {"r.html", "R.CSV", "r.csv", "r", "r.json/", ".json", "/dev/full"}) {
    std::string target = out[0] == '/' ? out : (w / out).string();
    ProgramRun o = run_iolab(tiny_run(w, {"--out", target}));
    EXPECT_EQ(o.exit_code, 2) << out << ": " << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find("--out"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(names_in(w.path()), std::vector<std::string>{"scratch"}) << "nothing written";
}

TEST(Issue14, R2_ResultsNeverReplaceTheJobFile) {
  Workspace w;
  const fs::path job = w / "job.json";  // a TOML job file, however named
  const std::string text = "method = \"pread\"\nsize = \"64k\"\nbs = \"4k\"\nreps = 1\n";
  write_file(job, text);
  for (const std::string& out : {job.string(), (w.path() / "." / "job.json").string()}) {
    ProgramRun o = run_iolab({"run", "--job", job.string(), "--dir", w.scratch().string(), "--out", out});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("job file"), std::string::npos) << o.err;
  }
  EXPECT_EQ(read_file(job), text);
}

TEST(Issue14, R2_OutReplacesOnlyFilesIolabWrote) {
  Workspace w;
  const fs::path out = w / "r.json";
  // iolab's own results: replaced by the next run.
  ASSERT_EQ(run_iolab(tiny_run(w, {"--out", out.string()})).exit_code, 0);
  ProgramRun again = run_iolab(tiny_run(w, {"--out", out.string(), "--seed", "7"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(json_of(out)["environment"]["command"].get<std::string>().find("--seed 7"), std::string::npos);

  // A file of the user's at any of the three names: refused, untouched.
  write_file(w / "mine.csv", "my,own,data\n");
  ProgramRun o = run_iolab(tiny_run(w, {"--out", (w / "mine.json").string()}));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("mine.csv"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(w / "mine.csv"), "my,own,data\n");
  EXPECT_FALSE(fs::exists(w / "mine.json"));

  // A link at the name, to a file of the user's: refused, the target untouched.
  write_file(w / "precious", "do not touch\n");
  fs::create_symlink(w / "precious", w / "link.json");
  o = run_iolab(tiny_run(w, {"--out", (w / "link.json").string()}));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(read_file(w / "precious"), "do not touch\n");
}

// ---- R3: a failure later in the run keeps what was measured -----------------

TEST(Issue14, R3_AFailingLaterExperimentKeepsTheResultsSoFar) {
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

TEST(Issue14, R3_TheIssuesFullTmpfsRunIsRefusedBeforeAnyWork) {
  Workspace w;
  iolab::testing::TmpfsMount small(w.path(), "size=4m");
  if (!small.mounted()) GTEST_SKIP() << small.why_not();
  // The issue's command: a 2.5 MiB file, then a 5 MiB one, on 4 MiB.
  ProgramRun o = run_iolab({"run", "--method", "pread", "--ops", "40", "--bs", "64k,128k", "--reps", "2", "--dir",
                            small.dir().string(), "--out", (w / "r.json").string()});
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("free in"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_TRUE(names_in(small.dir()).empty());
}

// ---- R4: the output location is proven writable before any experiment ----------

TEST(Issue14, R4_AnUnwritableOutputFailsBeforeTheFirstExperiment) {
  Workspace w;
  write_file(w / "plain", "");
  ProgramRun o = run_iolab(tiny_run(w, {"--out", (w / "plain" / "r.json").string()}));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("plain"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << "nothing was measured:\n" << o.out;
  EXPECT_TRUE(w.leftovers().empty());

  fs::create_directory(w / "taken.json");
  ProgramRun dir = run_iolab(tiny_run(w, {"--out", (w / "taken.json").string()}));
  EXPECT_EQ(dir.exit_code, 2) << dir.err;
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
}

TEST(Issue14, R4_AReadOnlyOrFullOutputFilesystemFailsBeforeTheFirstExperiment) {
  Workspace w;
  iolab::testing::TmpfsMount ro(w.path(), "size=64k");
  if (!ro.mounted()) GTEST_SKIP() << ro.why_not();
  iolab::testing::TmpfsMount full(w.path(), "size=64k");
  ASSERT_TRUE(full.mounted()) << full.why_not();
  std::string why = ro.remount_read_only();
  if (!why.empty()) GTEST_SKIP() << why;
  write_file(full.dir() / "filler", std::string(64 * 1024, 'x'));  // as much as fits
  for (const auto& [dir, cause] : {std::pair{ro.dir(), "Read-only file system"}, {full.dir(), "No space left on device"}}) {
    ProgramRun o = run_iolab(tiny_run(w, {"--out", (dir / "r.json").string()}));
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find(cause), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(names_in(full.dir()), std::vector<std::string>{"filler"});
  EXPECT_TRUE(w.leftovers().empty());
}

// ---- R5: a signal removes the scratch directory and keeps the results so far ---

class Issue14Signals : public ::testing::TestWithParam<int> {};

TEST_P(Issue14Signals, R5_ASignalRemovesScratchAndKeepsTheResultsSoFar) {
  const int sig = GetParam();
  Workspace w;
  const fs::path out = w / "r.json";
  // 4 KiB calls (done in a moment), then 1-byte calls (minutes).
  auto run = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "4k,1", "--reps", "1000", "--warmup",
                          "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return run->out_so_far().find("custom / read seq 4k") != std::string::npos; }))
      << "the first experiment never finished";
  ASSERT_FALSE(w.leftovers().empty()) << "the run is under way: its scratch directory exists";
  run->send(sig);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, sig) << "ends by the same signal; exit " << o.exit_code << "\n" << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  const std::string why = "interrupted by " + std::string("SIG") + ::sigabbrev_np(sig);
  EXPECT_NE(o.err.find(why), std::string::npos) << o.err;
  ASSERT_TRUE(fs::exists(out)) << o.err;
  nlohmann::json j = json_of(out);
  EXPECT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["incomplete"], why);
  EXPECT_TRUE(fs::exists(w / "r.csv"));
  EXPECT_TRUE(fs::exists(w / "r.html"));
  for (const auto& name : names_in(w.path())) EXPECT_NE(name.front(), '.') << name;
}

INSTANTIATE_TEST_SUITE_P(Issue14, Issue14Signals, ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGALRM),
                         [](const auto& info) { return std::string(::sigabbrev_np(info.param)); });

TEST(Issue14, R5_CtrlCInTheStoreSuitesSqlitePhaseRemovesItsWal) {
  Workspace w;
  const fs::path out = w / "r.json";
  auto run = start_iolab({"run", "store", "--scale", "tiny", "--records", "20000", "--reps", "1", "--warmup", "0",
                          "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  // SQLite's write-ahead log exists while its phases run (a quarter second each at least).
  auto sqlite_running = [&] {
    for (const auto& name : w.leftovers())
      if (name.ends_with("-wal")) return true;
    return false;
  };
  ASSERT_TRUE(wait_until(sqlite_running)) << "never saw SQLite's -wal";
  run->send(SIGINT);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGINT) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
  nlohmann::json j = json_of(out);
  EXPECT_EQ(j["incomplete"], "interrupted by SIGINT");
  EXPECT_GE(j["results"].size(), 1u) << "the backends measured before SQLite";
}

TEST(Issue14, R5_OutputIntoAClosedPipeEndsBySigpipeAndRemovesScratch) {
  Workspace w;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // `iolab run | head -1` once head has gone
  iolab::testing::StartOptions into_pipe;
  into_pipe.stdout_fd = fds[1];
  auto run = start_iolab(tiny_run(w, {"--out", (w / "r.json").string()}), into_pipe);
  ::close(fds[1]);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGPIPE) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

// ---- R6: the default eviction never empties the machine's page cache ---------

bool fully_resident(const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t size = fs::file_size(file), page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return false;
  std::vector<unsigned char> pages((size + page - 1) / page);
  bool all = ::mincore(map, size, pages.data()) == 0;
  for (unsigned char p : pages) all = all && (p & 1);
  ::munmap(map, size);
  return all;
}

TEST(Issue14, R6_DefaultColdEvictionLeavesOtherFilesCached) {
  Workspace w;
  const fs::path bystander = w / "bystander";
  write_file(bystander, std::string(1 << 20, 'b'));
  (void)read_file(bystander);
  ASSERT_TRUE(fully_resident(bystander));
  const fs::path out = w / "r.json";
  ProgramRun o = run_iolab({"run", "--method", "pread", "--cache", "cold", "--size", "256k", "--bs", "64k", "--reps",
                            "2", "--warmup", "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(),
                            "--out", out.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("cold = per file"), std::string::npos) << o.out;
  const nlohmann::json results = json_of(out);
  for (const auto& r : results["results"]) {
    EXPECT_EQ(r["cache"], "cold");
    EXPECT_NE(r["cache_method"], "drop_caches") << r.dump();
  }
  EXPECT_TRUE(fully_resident(bystander)) << "drop_caches would have evicted it";
}

// ---- R8, R9: limits are checked before anything is built or written ------------

TEST(Issue14, R8_AJobFileOfMillionsOfExperimentsIsRefusedBeforeAnyIsBuilt) {
  Workspace w;
  std::string sizes = "1";
  for (int i = 2; i <= 3000; ++i) sizes.append(",").append(std::to_string(i));
  write_file(w / "huge.toml", "method = \"pread,mmap,syscall,stdio\"\nop = \"read,write\"\npattern = \"seq,rand\"\n"
                              "cache = \"warm,cold\"\nsync = \"none,end\"\nbs = \"" + sizes + "\"\n");
  ProgramRun o = run_iolab({"run", "--job", (w / "huge.toml").string(), "--dir", w.scratch().string()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("experiments"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_TRUE(w.leftovers().empty());
}

TEST(Issue14, R9_SizesBeyondTheDiskOrMemoryAreRefusedBeforeAnyWork) {
  Workspace w;
  write_file(w / "big.toml", "method = \"pread\"\nsize = 9223372036854775807\nbs = \"1m\"\n");
  const std::string ram = std::to_string(static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                                         static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--job", (w / "big.toml").string()}, "free in"},
      {{"run", "--method", "pread", "--bs", ram, "--size", ram}, "memory"},
      {{"run", "--method", "pread", "--bs", "64g", "--size", "64g"}, ""},
      {{"run", "--method", "pread", "--op", "write", "--ops", "1t", "--bs", "1t"}, ""},  // 2^80 bytes
      {{"run", "--method", "pread", "--pattern", "rand", "--bs", "1", "--size", ram}, ""},
  };
  for (auto [args, cause] : cases) {
    args.insert(args.end(), {"--dir", w.scratch().string()});
    ProgramRun o = run_iolab(args);
    EXPECT_EQ(o.exit_code, 2) << joined(args) << "\n" << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find(cause), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_TRUE(w.leftovers().empty());
  }
}

// ---- R11: every value is checked when parsed ----------------------------------

TEST(Issue14, R11_EmptyNegativeOverflowingAndMalformedValuesAreRefusedBeforeAnyWork) {
  Workspace w;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--method", ""}, "--method ''"},
      {{"run", "--method", "pread", "--size", ""}, "--size ''"},
      {{"run", "--method", "pread", "--bs", ""}, "--bs ''"},
      {{"run", "--method", "pread", "--out", ""}, "--out ''"},
      {{"run", "--method", "pread", "--job", ""}, "--job ''"},
      {{"run", "--method", "pread", "--dir", ""}, "--dir ''"},
      {{"run", "--method", "pread", "--seed", ""}, "--seed ''"},
      {{"run", "--scale", ""}, "--scale ''"},
      {{"run", ""}, "''"},
      {{"methods", "--dir", ""}, "--dir ''"},
      {{"run", "--method", "pread", "--seed", "-5"}, "--seed '-5'"},
      {{"run", "--method", "pread", "--seed", "99999999999999999999"}, "--seed"},
      {{"run", "--method", "pread", "--reps", "1.5"}, "--reps '1.5'"},
      {{"run", "--method", "pread", "--reps", "-1"}, "--reps"},
      {{"run", "--method", "pread", "--warmup", "1e3"}, "--warmup"},
      {{"run", "--method", "pread", "--min-time", "nan"}, "--min-time"},
      {{"run", "--method", "pread", "--max-time", "-1"}, "--max-time"},
      {{"run", "--method", "pread", "--bs", "4k,"}, "--bs"},
      {{"run", "--method", "pread,,mmap"}, "--method"},
      {{"run", "--method", "pread", "--bs", "-4k"}, "--bs '-4k'"},
      {{"run", "--method", "pread", "--size", "18446744073709551616"}, "--size"},
      {{"run", "--method", "pread", "--qd", "0"}, "--qd"},
      {{"run", "--method", "pread", "--records", "100"}, "--records"},
      {{"run", "parallel", "--threads", "1,,2"}, "--threads"},
      {{"run", "store", "--records", "-1"}, "--records"},
      {{"run", "seq-read", "store", "--records", "5"}, "--records 5"},
  };
  for (auto [args, mention] : cases) {
    if (std::find(args.begin(), args.end(), "--dir") == args.end()) args.insert(args.end(), {"--dir", w.scratch().string()});
    ProgramRun o = run_iolab(args);
    EXPECT_EQ(o.exit_code, 2) << joined(args) << "\n" << o.out << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << joined(args) << "\n" << o.err;
    EXPECT_NE(o.err.find(mention), std::string::npos) << joined(args) << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << joined(args) << "\n" << o.out;
    EXPECT_TRUE(w.leftovers().empty()) << joined(args) << ": a scratch directory was made";
  }
}

// ---- R12: errors are one line naming the thing and the cause --------------------

TEST(Issue14, R12_ControlCharactersInPathsAndValuesStayOnOneLine) {
  Workspace w;
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--method", "pread", "--dir", "/nonexistent\nsecond line"},
      {"run", "--job", "/nonexistent/job\nfile.toml"},
      {"run", "--method", "\x1b[31mred\x1b[0m"},
      {"run", "--method", "pread", "--bs", "4\x1b]0;title\x07k"},
      {"suites\n"},
  };
  for (const auto& args : cases) {
    ProgramRun o = run_iolab(args);
    EXPECT_NE(o.exit_code, 0) << joined(args);
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal: " << o.err;
    EXPECT_EQ(o.err.find('\x07'), std::string::npos) << o.err;
  }
  ProgramRun o = run_iolab({"run", "--method", "pread", "--dir", "/nonexistent\nsecond line"});
  EXPECT_NE(o.err.find("/nonexistent\\nsecond line"), std::string::npos) << o.err;
}

TEST(Issue14, R12_UnreadableResultsFilesNameTheFile) {
  Workspace w;
  write_file(w / "huge-number.json", "{\"format\": \"iolab-results\", \"schema_version\": 2, \"x\": 1e999, \"results\": []}");
  write_file(w / "string-version.json", "{\"format\": \"iolab-results\", \"format_version\": \"1\", \"results\": []}");
  for (const char* name : {"huge-number.json", "string-version.json"}) {
    const std::string file = (w / name).string();
    ProgramRun o = run_iolab({"compare", file, file});
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find(file), std::string::npos) << o.err;
  }
}

TEST(Issue14, R12_AShortLastCallIsShownOnTheConsole) {
  Workspace w;
  ProgramRun o = run_iolab({"run", "--method", "pread", "--bs", "1m", "--size", "4k", "--reps", "1", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out",
                            (w / "r.json").string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("  ! pread: the 4k file"), std::string::npos) << o.out;
  bool warned = false;
  const nlohmann::json results = json_of(w / "r.json");
  for (const auto& warning : results["results"][0]["warnings"]) warned |= warning["kind"] == "short_last_call";
  EXPECT_TRUE(warned);
}

TEST(Issue14, R12_AFullDiskInTheStoreSuiteSaysNoSpace) {
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

// ---- R13: strings from outside reach the terminal without control characters --------

TEST(Issue14, R13_APathWithAnEscapeSequenceIsPrintedEscaped) {
  Workspace w;
  const fs::path odd = w.scratch() / "odd\x1b[2Jdir";
  fs::create_directory(odd);
  ProgramRun o = run_iolab({"run", "--method", "pread", "--size", "64k", "--bs", "4k", "--reps", "1", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--dir", odd.string(), "--out",
                            (w / "odd\x1b[2J.json").string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("odd\\x1b[2Jdir"), std::string::npos) << o.out;
}

}  // namespace
