// Inputs refused before any work: values checked when parsed, limits
// (experiments, sizes, nesting, file sizes, memory) checked before anything
// is built, read or written; each refusal one line naming what and why.
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

TEST(Refusal, AJobFileOfMillionsOfExperimentsIsRefusedBeforeAnyIsBuilt) {
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

// A limit that measures nothing is a typo, not a run of skipped records: 0
// (never "the default"), and one this machine's memory never reaches (1t
// for 1g), refused by run memory and recommend alike.
TEST(Refusal, AMemoryLimitOfZeroOrBeyondThisMachinesMemoryIsRefused) {
  Workspace w;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : {Case{{"run", "memory", "--memory-limit", "0"}, "at least 32 MiB"},
                        Case{{"run", "memory", "--memory-limit", "1t"}, "of memory"},
                        Case{{"recommend", "--memory-limit", "0"}, "at least 32 MiB"},
                        Case{{"recommend", "--memory-limit", "1t"}, "of memory"}}) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--dir", w.scratch().string()});
    ProgramRun o = run_iolab(args);
    EXPECT_EQ(o.exit_code, 2) << joined(args) << ": " << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find("--memory-limit"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_TRUE(w.leftovers().empty());
}

TEST(Refusal, SizesBeyondTheDiskOrMemoryAreRefusedBeforeAnyWork) {
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

TEST(Refusal, EmptyNegativeOverflowingAndMalformedValuesAreRefusedBeforeAnyWork) {
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

TEST(Refusal, CrosscheckRefusesNanNegativeAndWrappedValues) {
  Workspace p;
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

TEST(Refusal, RunRefusesOpsZeroAndOpsWithSize) {
  Workspace p;
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

TEST(Refusal, AnOptionNoChosenSuiteReadsIsRefusedBeforeAnyWork) {
  Workspace p;
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

TEST(Refusal, CrosscheckThatMeasuredNothingExitsNonZero) {
  Workspace p;
  // A "fio" that prints nothing: every row fails on fio's side.
  ProgramRun r = run_iolab({"crosscheck", "--fio-program", "/bin/true", "--method", "pread", "--bs", "4k", "--size",
                            "64k", "--rounds", "1", "--reps", "1", "--warmup", "0", "--min-time", "0", "--dir",
                            p.scratch().string()});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(names_in(p.scratch()).empty()) << "scratch left behind";
}

TEST(Refusal, DeeplyNestedResultsAndJobFilesAreOneLineNotACrash) {
  Workspace p;
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

TEST(Refusal, EndlessOrHugeInputsAreRefusedBeforeReading) {
  Workspace p;
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

TEST(Refusal, UnderAnAddressSpaceLimitReportCompareAndRecommendSayOneLine) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan maps terabytes of shadow memory at start: under `ulimit -v` of a few
  // MiB the sanitized iolab dies before main (SIGSEGV), whatever iolab does.
  GTEST_SKIP() << "an address-space limit cannot hold an AddressSanitizer build (its shadow memory)";
#endif
  Workspace p;
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

TEST(Refusal, NegativeCpuSecondsAreRefusedOnLoad) {
  Workspace p;
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

}  // namespace
