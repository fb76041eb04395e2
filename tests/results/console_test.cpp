#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "iolab/results/console.h"

// GCC 12 reports a false -Wrestrict on short string assignments once inlined (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

namespace iolab::results {
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
  rs[0].warn(WarningKind::TooShort, "timed repetitions too short to trust (shortest 1 ms < 50 ms)");
  EXPECT_EQ(format_tables(rs, false).find('\033'), std::string::npos);
  EXPECT_NE(format_tables(rs, true).find('\033'), std::string::npos);
}

// Names from outside (a fio job's name=, its options in warnings, a skip's
// reason) reach the terminal escaped: a job named "\e[2J\e[31mRED" cannot
// clear the screen or colour the table.
TEST(Console, TerminalEscapesFromAFioJobNameAreShownEscaped) {
  std::vector<Result> rs{row("a", 0.5), row("b", 1.0), row("c", 0, "fio job [\033]0;title\007] skipped")};
  for (auto& r : rs) {
    r.suite = "fio";
    r.experiment = "\033[2J\033[31mRED";
  }
  rs[0].warn(WarningKind::Note, "fio option '\033[5mblink' ignored (--fio-lenient)");
  for (bool color : {false, true}) {
    const std::string t = format_tables(rs, color);
    EXPECT_EQ(t.find("\033[2J"), std::string::npos) << t;
    EXPECT_EQ(t.find("\033[31mRED"), std::string::npos) << t;
    EXPECT_EQ(t.find("\033[5m"), std::string::npos) << t;
    EXPECT_EQ(t.find('\007'), std::string::npos) << t;
    EXPECT_NE(t.find("fio / \\x1b[2J\\x1b[31mRED"), std::string::npos) << t;
  }
  EXPECT_EQ(format_tables(rs, false).find('\033'), std::string::npos);
}

// Warnings of one kind are one line naming the rows; outlier notes appear
// only where they could change which method is fastest.
TEST(Console, OneNoteLinePerKindAndOutliersOnlyWhereTheyMatter) {
  std::vector<Result> rs{row("fast", 0.5), row("close", 0.52), row("far", 2.0)};
  for (auto& r : rs) r.warn(WarningKind::TooShort, "timed repetitions too short to trust");
  rs[0].samples_s = {0.5, 0.5, 0.55};
  rs[1].samples_s = {0.52, 0.52, 0.45};  // its fastest repetition beats the leader's slowest
  rs[1].warn(WarningKind::Outliers, "1 of 3 repetitions are outliers");
  rs[2].warn(WarningKind::Outliers, "1 of 3 repetitions are outliers");  // far behind: no note
  std::string t = format_tables(rs, false);
  EXPECT_NE(t.find("! fast, close, far: timed repetitions too short"), std::string::npos) << t;
  std::size_t outlier_line = t.find("outliers");
  ASSERT_NE(outlier_line, std::string::npos) << t;
  std::string line = t.substr(t.rfind('\n', outlier_line) + 1, t.find('\n', outlier_line) - t.rfind('\n', outlier_line) - 1);
  EXPECT_NE(line.find("close"), std::string::npos) << line;
  EXPECT_EQ(line.find("far"), std::string::npos) << line;
  EXPECT_EQ(t.find("outliers", outlier_line + 1), std::string::npos) << "one outlier line per table: " << t;
}

// Queued methods say their depth on every row; writes say where the bytes ended.
TEST(Console, RowsSayQueueDepthAndWritesSayWhereBytesWent) {
  std::vector<Result> rs{row("pread", 0.5), row("io_uring", 0.4)};
  rs[1].queue_depth = 32;
  for (auto& r : rs) {
    r.op = Op::Write;
    r.cache.reset();
  }
  std::string t = format_tables(rs, false);
  EXPECT_NE(t.find("io_uring qd32"), std::string::npos) << t;
  EXPECT_NE(t.find("page cache only"), std::string::npos) << t;
  for (auto& r : rs) r.sync = io::parse_flush_policy("end:fdatasync");
  t = format_tables(rs, false);
  EXPECT_NE(t.find("flushed (end:fdatasync)"), std::string::npos) << t;
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

TEST(ProgressLine, KnownPlanShowsAnOverallEta) {
  std::string line = captured_stderr([] {
    ProgressLine p(true, 4, false);
    p.begin("seq 4k");
    p.pass(1, 2);
    p.end();
    p.begin("seq 1m");
    p.pass(1, 2);
  });
  EXPECT_NE(line.find("[2/4]"), std::string::npos) << line;
  EXPECT_NE(line.find(" eta "), std::string::npos) << line;
}

TEST(ProgressLine, UnknownPlanForeseesOnlyTheCurrentExperiment) {
  std::string line = captured_stderr([] {
    ProgressLine p(true, 0, false);
    p.set_context("suite 1/7 seq-read");
    p.begin("read 1k warm");
    p.pass(2, 5);
  });
  EXPECT_NE(line.find("suite 1/7 seq-read"), std::string::npos) << line;
  EXPECT_NE(line.find("pass 2/5"), std::string::npos) << line;
  EXPECT_NE(line.find("this one ends in"), std::string::npos) << line;
  EXPECT_EQ(line.find(" eta "), std::string::npos) << "no overall ETA without a plan: " << line;
}

TEST(ProgressLine, DisabledWritesNothing) {
  std::string line = captured_stderr([] {
    ProgressLine p(false, 3, false);
    p.begin("x");
    p.pass(1, 2);
    p.end();
  });
  EXPECT_TRUE(line.empty()) << line;
}


// A repetition of many passes averages them: its spread shrinks with the
// passes. The table shows the spread of single passes instead.
TEST(Console, SpreadIsThatOfSinglePassesNotOfRepetitionsOfMany) {
  Result r = row("many", 1.0);
  r.passes = 100;
  r.samples_s = {1.0, 1.0, 1.0};  // three repetitions of 100 passes, alike
  PassSpread p;
  p.n = 300;
  p.median = 0.01;
  p.stddev = 0.002;
  p.min = 0.005;
  p.max = 0.05;
  p.p5 = 0.008;
  p.p95 = 0.0125;
  r.pass_s = p;
  std::string t = format_tables({r}, false);
  // Per pass 1 MiB / 100 in 12.5 ms (p95) and 8 ms (p5): 0.8 and 1.25 MiB/s, not 1 MiB/s twice.
  EXPECT_NE(t.find("819 KiB/s … 1.25 MiB/s"), std::string::npos) << t;
  EXPECT_NE(t.find("10 ms ± 2 ms"), std::string::npos) << t;
}

// Work counted in operations (the store): a TIME/OP column with one
// operation's time, and TIME/PASS one pass's, not the repetition's seconds
// (issue 40 item 4: 0.107 s was 9 passes of 100,000 inserts).
TEST(Console, OperationCountedRowsShowTimePerOperationAndPerPass) {
  Result r = row("ours", 0.107);
  r.suite = "store";
  r.experiment = "insert";
  r.bytes = 0;
  r.passes = 9;
  r.ops = 900'000;
  std::string t = format_tables({r}, false);
  EXPECT_NE(t.find("TIME/OP"), std::string::npos) << t;
  EXPECT_NE(t.find("119 ns"), std::string::npos) << t;    // 0.107 s / 900,000
  EXPECT_NE(t.find("11.9 ms"), std::string::npos) << t;   // 0.107 s / 9 passes
  // Byte-counted tables keep their columns.
  EXPECT_EQ(format_tables({row("pread", 1.0)}, false).find("TIME/OP"), std::string::npos);
}

// P99 of one call and of one queued request are different quantities.
TEST(Console, P99SaysWhetherItIsPerCallOrPerRequest) {
  Result call = row("pread", 0.5), request = row("io_uring", 0.5);
  call.latency_ns = Latency{1000, 1000, 2000, 3000, 4000, 100, LatencySource::EveryCall};
  request.latency_ns = Latency{1000, 1000, 50000, 60000, 70000, 100, LatencySource::EveryRequest};
  std::string one = format_tables({call}, false);
  EXPECT_NE(one.find("P99/CALL"), std::string::npos) << one;
  std::string both = format_tables({call, request}, false);
  EXPECT_EQ(both.find("P99/CALL"), std::string::npos) << both;
  EXPECT_NE(both.find("2 µs call"), std::string::npos) << both;
  EXPECT_NE(both.find("50 µs request"), std::string::npos) << both;
}

}  // namespace
}  // namespace iolab::results
