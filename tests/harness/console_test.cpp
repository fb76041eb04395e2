#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "iolab/harness/console.h"

// GCC 12 reports a false -Wrestrict on short string assignments once inlined (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

namespace iolab::harness {
namespace {

Result row(std::string method, double seconds, std::optional<std::string> skipped = std::nullopt) {
  Result r;
  r.suite = "s";
  r.experiment = "e";
  r.method = std::move(method);
  r.bytes = 1 << 20;
  r.ops = 256;
  r.block_size = 4096;
  r.reps = 3;
  if (!skipped) r.samples_s = {seconds, seconds, seconds};
  r.skipped = std::move(skipped);
  return r;
}

TEST(Console, TableRanksMethodsAndShowsSkipsAndReferences) {
  std::vector<Result> rs{row("fast", 0.5), row("slow", 1.0), row("gone", 0, "no O_DIRECT here")};
  rs[1].reference = Reference{"seed 001: Java, their machine", 4700, "ms"};
  std::string t = format_tables(rs, false);
  EXPECT_NE(t.find("s / e"), std::string::npos) << t;
  EXPECT_NE(t.find("best"), std::string::npos) << t;
  EXPECT_NE(t.find("2.00x slower"), std::string::npos) << t;
  EXPECT_NE(t.find("skipped: no O_DIRECT here"), std::string::npos) << t;
  EXPECT_NE(t.find("theirs: 4700 ms (seed 001: Java, their machine); ours: 1000 ms"), std::string::npos) << t;
  EXPECT_NE(t.find("2 MiB/s"), std::string::npos) << t;
}

TEST(Console, NoEscapeCodesWithoutColor) {
  std::vector<Result> rs{row("a", 0.5), row("b", 1.0)};
  rs[0].warnings.push_back("timed repetitions too short to trust (shortest 1 ms < 50 ms); use a larger --size");
  EXPECT_EQ(format_tables(rs, false).find('\033'), std::string::npos);
  EXPECT_NE(format_tables(rs, true).find('\033'), std::string::npos);
}

TEST(Console, NoColorEnvironmentTurnsColorOff) {
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(use_color(stdout));
  ::unsetenv("NO_COLOR");
}


// The progress line goes to stderr; capture it in a file for the length of `f`.
template <typename F>
std::string captured_stderr(F&& f) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  int saved = ::dup(2);
  ::dup2(::fileno(tmp), 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string out;
  std::rewind(tmp);
  for (int c; (c = std::fgetc(tmp)) != EOF;) out += static_cast<char>(c);
  std::fclose(tmp);
  return out;
}

TEST(Progress, KnownPlanShowsAnOverallEta) {
  std::string line = captured_stderr([] {
    Progress p(true, 4, false);
    p.begin("seq 4k", 2);
    p.repetition(1);
    p.end();
    p.begin("seq 1m", 2);
    p.repetition(1);
  });
  EXPECT_NE(line.find("[2/4]"), std::string::npos) << line;
  EXPECT_NE(line.find(" eta "), std::string::npos) << line;
}

TEST(Progress, UnknownPlanForeseesOnlyTheCurrentExperiment) {
  std::string line = captured_stderr([] {
    Progress p(true, 0, false);
    p.set_context("suite 1/7 seq-read");
    p.begin("read 1k warm", 5);
    p.repetition(2);
  });
  EXPECT_NE(line.find("suite 1/7 seq-read"), std::string::npos) << line;
  EXPECT_NE(line.find("rep 2/5"), std::string::npos) << line;
  EXPECT_NE(line.find("this one ends in"), std::string::npos) << line;
  EXPECT_EQ(line.find(" eta "), std::string::npos) << "no overall ETA without a plan: " << line;
}

TEST(Progress, DisabledWritesNothing) {
  std::string line = captured_stderr([] {
    Progress p(false, 3, false);
    p.begin("x", 2);
    p.repetition(1);
    p.end();
  });
  EXPECT_TRUE(line.empty()) << line;
}

}  // namespace
}  // namespace iolab::harness
