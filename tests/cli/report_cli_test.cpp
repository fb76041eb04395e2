// `iolab report`, `recommend` and `compare` as a user runs them: on results
// files written here, on bad input (one line, non-zero exit), and
// `recommend` measuring its own small table.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/decision_file.h"
#include "cli/run_program.h"
#include "iolab/io/scratch.h"

namespace {

using Ran = iolab::testing::ProgramRun;
using iolab::testing::read_file;
Ran iolab_cmd(const std::vector<std::string>& args) { return iolab::testing::run_iolab(args); }

// One record as `iolab run` writes it: `mib_s` median throughput, times spread
// +-`spread`, as many passes per repetition as make one last >= 0.1 s.
nlohmann::json record(const std::string& method, const std::string& op, std::uint64_t block, double mib_s, double spread,
                      const std::string& experiment = "read packets") {
  const std::uint64_t file = 8u << 20;
  double pass_s = static_cast<double>(file) / (1024.0 * 1024.0) / mib_s;
  auto passes = static_cast<std::uint64_t>(std::max(1.0, std::ceil(0.1 / pass_s)));
  double median = pass_s * static_cast<double>(passes);
  nlohmann::json samples = nlohmann::json::array();
  for (double k : {-1.0, -0.5, 0.0, 0.5, 1.0}) samples.push_back(median * (1 + spread * k));
  return {{"suite", "packet-sweep"}, {"experiment", experiment}, {"method", method}, {"op", op}, {"pattern", "seq"},
          {"block_size", block}, {"file_size", file}, {"buffer", "heap"}, {"cache", op == "read" ? "warm" : ""},
          {"cache_method", "read once"}, {"resident_fraction", 1.0}, {"sync", "none"}, {"threads", 1}, {"reps", 5},
          {"passes", passes}, {"bytes", file * passes}, {"ops", file / block * passes}, {"samples_s", samples},
          {"latency_ns", {{"p50", 900}, {"p90", 1200}, {"p99", 3000}, {"p999", 9000}, {"max", 50000}}},
          {"cpu", {{"user_s", median * 0.2}, {"sys_s", median * 0.7}}},
          {"faults", {{"minor", method == "mmap" ? 2048 : 2}, {"major", 0}}}, {"ctx", {{"voluntary", 1}, {"involuntary", 2}}},
          {"io_calls", method == "mmap" ? 0 : file / block * passes}, {"verified", true}, {"skipped", nullptr},
          {"warnings", nlohmann::json::array()}, {"reference", nullptr}, {"extra", nlohmann::json::object()}};
}

nlohmann::json results(nlohmann::json records) {
  return {{"format", "iolab-results"}, {"format_version", 1},
          {"environment", {{"hostname", "h"}, {"cpu_model", "c"}, {"cores", 2}, {"kernel", "6"}, {"fs_type", "ext4"},
                           {"created", "2026-11-29T18:00:00Z"}, {"command", "iolab run"}}},
          {"results", std::move(records)}};
}

class ReportCli : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    auto p = scratch_.create_file(name);
    std::ofstream(p) << text;
    return p;
  }
  std::filesystem::path slot(const std::string& name) { return scratch_.create_file(name); }
  // A free name the scratch directory still removes: `report -o`, like run
  // --out, never replaces a file iolab did not write, such as an empty one.
  std::filesystem::path free_slot(const std::string& name) {
    auto p = slot(name);
    std::filesystem::remove(p);
    return p;
  }
  iolab::io::ScratchDir scratch_;
};

TEST_F(ReportCli, ReportWritesOneSelfContainedPage) {
  nlohmann::json rs = nlohmann::json::array();
  for (std::uint64_t bs : {32u, 1024u, 65536u}) {
    rs.push_back(record("mmap", "read", bs, bs < 4096 ? 900 : 2000, 0.03));
    rs.push_back(record("pread", "read", bs, bs < 4096 ? 300 : 5000, 0.03));
  }
  rs.push_back(record("pread", "read", 4096, 3000, 0.03, "<script>alert(1)</script>"));
  auto in = write("run.json", results(rs).dump());
  auto out = free_slot("report.html");
  Ran r = iolab_cmd({"report", in.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(out.string()), std::string::npos) << r.out;
  std::string page = read_file(out);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("vegaEmbed"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST_F(ReportCli, BadInputIsOneLineAndNonZero) {
  auto notjson = write("notjson.json", "this is { not json");
  auto other = write("bench.json", R"({"context": {}, "benchmarks": []})");
  auto newer = write("newer.json", R"({"format": "iolab-results", "format_version": 99, "results": []})");
  auto out = free_slot("x.html");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : {Case{{"report", notjson.string(), "-o", out.string()}, "not JSON"},
                        Case{{"report", other.string(), "-o", out.string()}, "not an iolab results file"},
                        Case{{"report", newer.string(), "-o", out.string()}, "newer than this iolab understands"},
                        Case{{"recommend", other.string()}, "not an iolab results file"},
                        Case{{"compare", newer.string(), notjson.string()}, "newer than this iolab understands"},
                        Case{{"compare", other.string(), other.string(), "--markdown"}, "not an iolab results file"},
                        Case{{"report", (scratch_.path() / "missing.json").string()}, "No such file"}}) {
    Ran r = iolab_cmd(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("iolab: ", 0), 0u) << r.err;
  }
  Ran usage = iolab_cmd({"report"});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_EQ(usage.err_lines(), 1u) << usage.err;
  Ran compare_one = iolab_cmd({"compare", notjson.string()});
  EXPECT_EQ(compare_one.exit_code, 2) << compare_one.err;
}

// A decision saved by `recommend --save` is replayed: the map names each
// condition's pick. A results file of `iolab run` holds no decision: nothing
// is ranked from records that were never measured side by side.
TEST_F(ReportCli, RecommendFromADecisionFileNamesThePicksAndRefusesOtherRecords) {
  auto in = slot("decision.json");
  iolab::testing::write_decision_file(in);
  Ran text = iolab_cmd({"recommend", in.string(), "--explain"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("read - warm"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("mmap"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("read - warm at 64 B: mmap; over pread"), std::string::npos) << text.out;
  Ran json = iolab_cmd({"recommend", in.string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["conditions"].size(), 3u);
  EXPECT_EQ(j["conditions"][0]["pick"], "mmap");
  EXPECT_EQ(j["conditions"][0]["within"][0], "mmap");
  EXPECT_EQ(j["conditions"][2]["op"], "write");
  EXPECT_EQ(j["conditions"][2]["pick"], "pread");
  nlohmann::json rs = nlohmann::json::array();
  for (std::uint64_t bs : {32u, 48u}) rs.push_back(record("mmap", "read", bs, 900, 0.02)), rs.push_back(record("pread", "read", bs, 300, 0.02));
  auto plain = write("run.json", results(rs).dump());
  Ran refused = iolab_cmd({"recommend", plain.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.err_lines(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("holds no decision"), std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;
}

TEST_F(ReportCli, CompareMatchesAndListsTheRest) {
  auto a = write("a.json", results({record("pread", "read", 4096, 1000, 0.02), record("mmap", "read", 4096, 1000, 0.02)}).dump());
  auto b = write("b.json", results({record("pread", "read", 4096, 1500, 0.02), record("stdio", "read", 4096, 800, 0.02)}).dump());
  Ran r = iolab_cmd({"compare", a.string(), b.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("B is 1.50x faster than A (1,500 MiB/s vs 1,000 MiB/s); Hodges-Lehmann estimate 1.50x, its 96.8% "
                       "interval 1.4"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Only in A"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Only in B"), std::string::npos) << r.out;
  Ran md = iolab_cmd({"compare", a.string(), b.string(), "--markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| experiment | A (median) | B (median) | B vs A (ratio of medians) | Hodges-Lehmann estimate | "
                        "interval (coverage) | significant | warnings |"),
            std::string::npos)
      << md.out;
}

// Issue 14 #7: `iolab report` died of SIGSEGV (in report::explain) on a
// results file whose samples are all 0, or 5e-324; compare and recommend
// must survive it too. Such records are listed as having no usable figures.
TEST_F(ReportCli, SamplesOfZeroOrDenormalSecondsDoNotCrash) {
  for (double t : {0.0, 5e-324}) {
    nlohmann::json rs = nlohmann::json::array();
    for (std::uint64_t bs : {1024u, 4096u})
      for (const char* m : {"mmap", "pread"}) {
        nlohmann::json r = record(m, "read", bs, 100, 0.02);
        r["samples_s"] = {t, t, t, t, t};
        rs.push_back(r);
      }
    auto in = write(t == 0 ? "zero.json" : "denormal.json", results(rs).dump());
    auto out = free_slot(t == 0 ? "zero.html" : "denormal.html");
    Ran report = iolab_cmd({"report", in.string(), "-o", out.string()});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(read_file(out).find("a repetition took 0 s"), std::string::npos);
    Ran compare = iolab_cmd({"compare", in.string(), in.string()});
    EXPECT_EQ(compare.exit_code, 0) << compare.err;
    EXPECT_NE(compare.out.find("not compared: no usable figures in A"), std::string::npos) << compare.out;
    Ran recommend = iolab_cmd({"recommend", in.string()});
    EXPECT_EQ(recommend.exit_code, 2) << recommend.err;  // no decision in it, and no crash
    EXPECT_EQ(recommend.err_lines(), 1u) << recommend.err;
  }
}

// `iolab report DIR` said "basic_filebuf::underflow ...": one line naming the path and the cause.
TEST_F(ReportCli, ADirectoryAsInputIsOneLineNamingIt) {
  for (std::string cmd : {"report", "compare", "recommend"}) {
    std::vector<std::string> args{cmd, scratch_.path().string()};
    if (cmd == "compare") args.push_back(scratch_.path().string());
    if (cmd == "report") args.insert(args.end(), {"-o", (scratch_.path() / "never.html").string()});
    Ran r = iolab_cmd(args);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.err;
    EXPECT_EQ(r.err, "iolab: read results " + scratch_.path().string() + ": Is a directory\n") << cmd;
  }
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "never.html"));
}

// `iolab report a.json -o a.json` overwrote its input: refused, the input untouched.
TEST_F(ReportCli, AnOutputThatIsAnInputOrNotHtmlIsRefused) {
  std::string text = results({record("pread", "read", 4096, 1000, 0.02)}).dump();
  auto in = write("run.json", text);
  auto html_in = write("run.html", text);  // a results file named .html
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", in.string(), "-o", in.string()},
        std::vector<std::string>{"report", html_in.string(), "-o", html_in.string()},
        std::vector<std::string>{"report", in.string(), html_in.string(), "-o", (scratch_.path() / "." / "run.html").string()},
        std::vector<std::string>{"report", in.string(), "-o", (scratch_.path() / "report.txt").string()}}) {
    Ran r = iolab_cmd(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
  }
  EXPECT_TRUE(read_file(in) == text) << "run.json was overwritten";
  EXPECT_TRUE(read_file(html_in) == text) << "run.html was overwritten";
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "report.txt"));
}

// Issue 14 #13: compare and recommend printed escape sequences taken from
// results strings straight to the terminal.
TEST_F(ReportCli, EscapeSequencesFromResultsDoNotReachTheTerminal) {
  nlohmann::json rs = nlohmann::json::array();
  for (std::uint64_t bs : {1024u, 2048u}) {
    nlohmann::json evil = record("\x1b[2J\x1b]0;pwned\x07mmap", "read", bs, 900, 0.02, "\x1b[31mexperiment\nforged");
    nlohmann::json plain = record("pread", "read", bs, 300, 0.02, evil["experiment"]);
    evil["suite"] = plain["suite"] = "suite\xc2\x9b" "31m";  // C1 CSI, as UTF-8
    rs.push_back(evil);
    rs.push_back(plain);
  }
  auto in = write("evil.json", results(rs).dump());
  auto decided = slot("evil-decision.json");
  iolab::testing::write_decision_file(decided, "\x1b[2J\x1b]0;pwned\x07mmap");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compare", in.string(), in.string()},
        std::vector<std::string>{"compare", in.string(), in.string(), "--markdown"},
        std::vector<std::string>{"recommend", decided.string(), "--explain"}}) {
    Ran r = iolab_cmd(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << r.out;  // C1 CSI
    EXPECT_EQ(r.out.find("\nforged"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\\x1b[2J"), std::string::npos) << r.out;    // shown, visibly
  }
}

// Without a file, recommend measures: here exactly one row's two sizes
// (warm reads of small files, repetitions just over the 50 ms a figure
// needs, at most 8 rounds). Every condition ends by the rule or the
// budget with a pick, the saved records replay to the same decision.
TEST_F(ReportCli, RecommendMeasuresTheConditionsAskedAndReplaysThem) {
  // A free name in the test's scratch directory (which removes it): --save,
  // like run --out, never replaces a file iolab did not write, such as an empty one.
  auto save = slot("measured.json");
  std::filesystem::remove(save);
  Ran r = iolab_cmd({"recommend", "--json", "--op", "read", "--cache", "warm", "--bs", "4k,64k", "--max-file", "256k",
                     "--min-time", "0.055", "--max-rounds", "8", "--evict", "per-file", "--dir",
                     scratch_.path().string(), "--save", save.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 conditions at the sizes asked"), std::string::npos) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format_version"], 5);
  ASSERT_EQ(j["conditions"].size(), 2u);
  for (const auto& c : j["conditions"]) {
    EXPECT_TRUE(c["stop"] == "selected" || c["stop"] == "budget") << c.dump();
    EXPECT_TRUE(c["pick"].is_string()) << c.dump();
    EXPECT_EQ(c["within"][0], c["pick"]) << c.dump();
    EXPECT_EQ(c["column"], "warm");
    EXPECT_TRUE(c["replay_agrees"].get<bool>()) << c.dump();
    EXPECT_GE(c["candidates"].size(), 4u) << c.dump();
  }
  nlohmann::json saved = nlohmann::json::parse(read_file(save));
  EXPECT_EQ(saved["format"], "iolab-results");
  Ran again = iolab_cmd({"recommend", save.string(), "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  nlohmann::json k = nlohmann::json::parse(again.out);
  k.erase("source"), j.erase("source");
  EXPECT_EQ(k, j) << "the saved records give the same decision";
}

}  // namespace
