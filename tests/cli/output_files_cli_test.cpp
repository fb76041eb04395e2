// Where iolab's results go, and what they may replace: --out (and recommend
// --save, crosscheck --out) names a .json of one stem, never an input or a
// file iolab did not write; concurrent runs keep their own files; nothing
// outside the scratch directory is touched. The built programs run as a user
// (or a hostile user) would.
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

TEST(OutputFiles, RunsStartedTogetherEachKeepTheirOwnResultsFiles) {
  Workspace w;
  // Four at once (within a second: the old 1-second names gave at most two files).
  std::vector<std::unique_ptr<iolab::testing::RunningProgram>> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(start_iolab(small_run(w), in_directory(w.path())));
  for (auto& r : runs) {
    ProgramRun o = r->finish();
    EXPECT_EQ(o.exit_code, 0) << o.err;
  }
  // And one more right after: back to back, nothing is overwritten.
  EXPECT_EQ(run_iolab(small_run(w), in_directory(w.path())).exit_code, 0);
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

TEST(OutputFiles, OutMustNameAJsonFile) {
  Workspace w;
  for (const char* out : {"r.html", "R.CSV", "r.csv", "r", "r.json/", ".json", "/dev/full"}) {
    std::string target = out[0] == '/' ? out : (w / out).string();
    ProgramRun o = run_iolab(small_run(w, {"--out", target}));
    EXPECT_EQ(o.exit_code, 2) << out << ": " << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find("--out"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(names_in(w.path()), std::vector<std::string>{"scratch"}) << "nothing written";
}

TEST(OutputFiles, ResultsNeverReplaceTheJobFile) {
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

TEST(OutputFiles, OutReplacesOnlyFilesIolabWrote) {
  Workspace w;
  const fs::path out = w / "r.json";
  // iolab's own results: replaced by the next run.
  ASSERT_EQ(run_iolab(small_run(w, {"--out", out.string()})).exit_code, 0);
  ProgramRun again = run_iolab(small_run(w, {"--out", out.string(), "--seed", "7"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(json_of(out)["environment"]["command"].get<std::string>().find("--seed 7"), std::string::npos);

  // A file of the user's at any of the three names: refused, untouched.
  write_file(w / "mine.csv", "my,own,data\n");
  ProgramRun o = run_iolab(small_run(w, {"--out", (w / "mine.json").string()}));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("mine.csv"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(w / "mine.csv"), "my,own,data\n");
  EXPECT_FALSE(fs::exists(w / "mine.json"));

  // A link at the name, to a file of the user's: refused, the target untouched.
  write_file(w / "precious", "do not touch\n");
  fs::create_symlink(w / "precious", w / "link.json");
  o = run_iolab(small_run(w, {"--out", (w / "link.json").string()}));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(read_file(w / "precious"), "do not touch\n");
}

// The ownership rule holds when the results are published, not only before
// the run: a draft the user saved at --out meanwhile is kept, the results go
// beside it, and one line says where.
TEST(OutputFiles, AFileAppearingAtOutDuringTheRunIsKeptAndTheResultsGoBeside) {
  Workspace w;
  const fs::path out = w / "r.json";
  // 4 KiB calls (a moment), then 1-byte calls (minutes): the run is under way with a result to publish.
  auto run = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "4k,1", "--reps", "1000", "--warmup",
                          "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return run->out_so_far().find("custom / read seq 4k") != std::string::npos; }));
  write_file(out, "draft\n");
  run->send(SIGINT);  // the records so far are published now
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGINT) << o.err;
  EXPECT_EQ(read_file(out), "draft\n") << "the user's file is kept";
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find(out.string() + ": a file iolab may not replace is there (kept as it was)"), std::string::npos)
      << o.err;
  std::vector<fs::path> beside;
  for (const auto& name : names_in(w.path()))
    if (name.starts_with("iolab-") && name.ends_with(".json")) beside.push_back(w / name);
  ASSERT_EQ(beside.size(), 1u) << joined(names_in(w.path()));
  EXPECT_NE(o.err.find("the results are in " + beside.front().string() + " instead"), std::string::npos) << o.err;
  EXPECT_EQ(json_of(beside.front())["results"].size(), 1u);
  EXPECT_FALSE(fs::exists(w / "r.csv")) << "the set goes beside whole";
  EXPECT_FALSE(fs::exists(w / ".r.json.lock"));
}

// report -o follows run --out's ownership rule: a page or table iolab wrote
// (whatever its --title) is replaced, a user's own .html or .md, or a link,
// is refused before any work, untouched.
TEST(OutputFiles, ReportOutReplacesOnlyReportsIolabWrote) {
  Workspace w;
  const fs::path a = results_file(w, "a.json");
  for (const std::string name : {"r.html", "r.md"}) {
    const fs::path out = w / name;
    ProgramRun first = run_iolab({"report", a.string(), "-o", out.string(), "--title", "My title"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ProgramRun again = run_iolab({"report", a.string(), "-o", out.string()});
    EXPECT_EQ(again.exit_code, 0) << name << ": iolab's own report is replaced: " << again.err;
  }
  write_file(w / "mine.html", "<!DOCTYPE html><title>my notes</title>\n");
  write_file(w / "mine.md", "# my notes\n");
  fs::create_symlink(w / "mine.md", w / "link.md");
  for (const std::string name : {"mine.html", "mine.md", "link.md"}) {
    ProgramRun o = run_iolab({"report", a.string(), "-o", (w / name).string()});
    EXPECT_EQ(o.exit_code, 2) << name << ": " << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << o.err;
    EXPECT_NE(o.err.find("exists and is not one iolab wrote"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_EQ(read_file(w / "mine.html"), "<!DOCTYPE html><title>my notes</title>\n");
  EXPECT_EQ(read_file(w / "mine.md"), "# my notes\n");
  EXPECT_TRUE(fs::is_symlink(w / "link.md"));
}

TEST(OutputFiles, RecommendSaveIsRefusedBeforeMeasuringAsRunOutIs) {
  Workspace p;
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

TEST(OutputFiles, CrosscheckOutIsRefusedBeforeAnyWork) {
  Workspace p;
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

TEST(OutputFiles, ALegalOutNameNearTheLimitIsPublished) {
  Workspace p;
  const std::string name = std::string(250, 'r') + ".json";  // 255 bytes: NAME_MAX
  ProgramRun r = run_iolab(small_run(p, {"--out", (p / name).string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(read_file(p / name))["results"].size(), 1u);
  EXPECT_TRUE(fs::exists(p / (std::string(250, 'r') + ".html")));
  for (const auto& n : names_in(p.path())) EXPECT_NE(n.front(), '.') << "left behind: " << n;
}

TEST(OutputFiles, ARunGivenAnOutAnotherRunIsWritingIsRefused) {
  Workspace p;
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

TEST(OutputFiles, AnUnwritableOutputFailsBeforeTheFirstExperiment) {
  Workspace w;
  write_file(w / "plain", "");
  ProgramRun o = run_iolab(small_run(w, {"--out", (w / "plain" / "r.json").string()}));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("plain"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << "nothing was measured:\n" << o.out;
  EXPECT_TRUE(w.leftovers().empty());

  fs::create_directory(w / "taken.json");
  ProgramRun dir = run_iolab(small_run(w, {"--out", (w / "taken.json").string()}));
  EXPECT_EQ(dir.exit_code, 2) << dir.err;
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
}

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

TEST(OutputFiles, DefaultColdEvictionLeavesOtherFilesCached) {
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

}  // namespace
