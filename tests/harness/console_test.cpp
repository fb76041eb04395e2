#include <gtest/gtest.h>

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

}  // namespace
}  // namespace iolab::harness
