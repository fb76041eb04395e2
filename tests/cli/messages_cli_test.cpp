// What reaches the terminal: errors are one line naming the thing and the
// cause, strings from outside (paths, values, results) arrive without control
// characters, and report and compare say what the figures allow.
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

TEST(Messages, ControlCharactersInPathsAndValuesStayOnOneLine) {
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

TEST(Messages, APathWithAnEscapeSequenceIsPrintedEscaped) {
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

TEST(Messages, BidiAndSeparatorCharactersInErrorsAreEscaped) {
  Workspace p;
  const std::string name = "a\xe2\x80\xae" "b\xe2\x80\xa8" "c\xe2\x80\xa9" "d.json";
  ProgramRun r = run_iolab({"report", (p / name).string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err_lines(), 1u) << r.err;
  EXPECT_EQ(r.err.find("\xe2\x80"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a\\u202eb\\u2028c\\u2029d.json"), std::string::npos) << r.err;
}

TEST(Messages, UnreadableResultsFilesNameTheFile) {
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

TEST(Messages, AShortLastCallIsShownOnTheConsole) {
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

// Repetitions of 1e308 s leave a rate too small to divide by: compare printed "B is n/ax slower"
// one way round and "as fast as A (1.00x)" the other. It says there is no factor, and why.
TEST(Messages, SamplesOf1e308HaveNoFactorAndSaySoEitherWayRound) {
  Workspace p;
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

TEST(Messages, DuplicateRecordsInOneFileAreCountedOnceByCompare) {
  Workspace p;
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

// The Markdown exporter behind iolab report -o FILE.md.
TEST(Messages, ReportToAMarkdownFileUsesTheMarkdownExporter) {
  Workspace p;
  const fs::path a = results_file(p, "a.json");
  ProgramRun r = run_iolab({"report", a.string(), "-o", (p / "summary.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = read_file(p / "summary.md");
  EXPECT_TRUE(md.starts_with("<!-- iolab results (Markdown) -->\n# iolab results (a.json)")) << md;
  EXPECT_NE(md.find("| custom | "), std::string::npos) << md;
  EXPECT_NE(md.find(" | pread | read | 4 KiB | 64 KiB | warm | "), std::string::npos) << md;
  EXPECT_EQ(run_iolab({"report", a.string(), "-o", (p / "summary.txt").string()}).exit_code, 2);
}

}  // namespace
