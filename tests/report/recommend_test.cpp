#include <gtest/gtest.h>

#include "iolab/report/recommend.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;

TEST(Bands, Edges) {
  EXPECT_EQ(band_of(32), Band::Under64);
  EXPECT_EQ(band_of(63), Band::Under64);
  EXPECT_EQ(band_of(64), Band::To4K);
  EXPECT_EQ(band_of(4095), Band::To4K);
  EXPECT_EQ(band_of(4096), Band::To1M);
  EXPECT_EQ(band_of((1u << 20) - 1), Band::To1M);
  EXPECT_EQ(band_of(1u << 20), Band::Over1M);
  EXPECT_EQ(to_string(Band::To4K), "64 B..4 KiB");
}

// A known winner per band, as seed 004 found on its machine: mmap for small
// reads, pread from 4 KiB up; pread for writes; pread under periodic flush.
std::vector<harness::Result> known_winners() {
  std::vector<harness::Result> rs;
  auto add = [&](std::string method, std::string op, std::uint64_t bs, double mib_s, std::string cache = "warm",
                 std::string sync = "none") {
    rs.push_back(make({"packet-sweep", op + " packets", method, op, bs, 4u << 20, mib_s, 0.02, 5, cache, sync}));
  };
  for (std::uint64_t bs : {32u, 48u}) add("mmap", "read", bs, 400), add("pread", "read", bs, 60), add("stdio", "read", bs, 200);
  for (std::uint64_t bs : {256u, 1024u}) add("mmap", "read", bs, 1500), add("pread", "read", bs, 900);
  for (std::uint64_t bs : {65536u, 262144u}) add("mmap", "read", bs, 3000), add("pread", "read", bs, 6000);
  add("mmap", "read", 4u << 20, 2500), add("pread", "read", 4u << 20, 7000), add("direct", "read", 4u << 20, 1900, "direct");
  add("pread", "read", 4u << 20, 1400, "cold"), add("direct", "read", 4u << 20, 1900, "direct");
  add("pread", "write", 1024, 800, ""), add("mmap", "write", 1024, 300, "");
  add("pread", "write", 1024, 400, "", "async-16k:fdatasync"), add("mmap", "write", 1024, 90, "", "async-16k:msync");
  add("pread", "write", 4096, 30, "", "every:fdatasync"), add("stdio", "write", 4096, 29.5, "", "every:fdatasync");
  return rs;
}

TEST(Decide, NamesTheKnownWinnerPerBand) {
  auto rs = known_winners();
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::Under64, "none", "warm");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->verdict(), "mmap");
  EXPECT_EQ(c->runner_up, "stdio");
  EXPECT_TRUE(c->clear);
  EXPECT_EQ(c->shared, 2u);
  EXPECT_NEAR(c->margin, 2.0, 1e-9);  // 400 / 200 at both sizes

  c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->verdict(), "mmap");
  EXPECT_NEAR(c->margin, 1500.0 / 900.0, 1e-9);
  EXPECT_EQ(t.find("read", Band::To1M, "none", "warm")->verdict(), "pread");
  EXPECT_EQ(t.find("read", Band::Over1M, "none", "warm")->verdict(), "pread");
  // Cold: O_DIRECT (recorded as cache "direct") competes with buffered cold reads.
  c = t.find("read", Band::Over1M, "none", "cold");
  EXPECT_EQ(c->verdict(), "direct");
  EXPECT_EQ(c->runner_up, "pread");
  // Writes go to fresh files (no cache label): the warm (buffered) column.
  EXPECT_EQ(t.find("write", Band::To4K, "none", "warm")->verdict(), "pread");
  c = t.find("write", Band::To4K, "async-16k", "warm");
  EXPECT_EQ(c->verdict(), "pread");
  EXPECT_NEAR(c->margin, 400.0 / 90.0, 1e-9);
}

TEST(Decide, WithinEachOthersNoiseIsNoClearWinner) {
  auto rs = known_winners();
  // pread 30 vs stdio 29.5 MiB/s with +-2% spread: the ranges overlap.
  DecisionTable table_c = decide(rs);  // the cells live in the table
  const Cell* c = table_c.find("write", Band::To1M, "every", "warm");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->best, "pread");
  EXPECT_FALSE(c->clear);
  EXPECT_EQ(c->verdict(), "no clear winner");
  EXPECT_NE(c->summary().find("no clear winner: pread 1.02x vs stdio (at worst 0.977x)"), std::string::npos) << c->summary();
  EXPECT_LT(c->worst_ratio, 1);
}

// The runner-up is the closest competitor the winner met, not a method that
// scored well elsewhere; a method behind another where they met cannot win.
TEST(Decide, RunnerUpIsTheClosestCompetitorMetHeadToHead) {
  std::vector<harness::Result> rs;
  auto add = [&](std::string suite, std::string method, std::uint64_t bs, double mib_s) {
    rs.push_back(make({suite, "e", method, "read", bs, 4u << 20, mib_s, 0.02}));
  };
  add("a", "mmap", 1024, 1000), add("a", "pread", 1024, 900), add("a", "stdio", 1024, 300);
  add("b", "stdio", 2048, 800), add("b", "iostream", 2048, 200);  // stdio scores well here, never met mmap
  DecisionTable table_c = decide(rs);  // the cells live in the table
  const Cell* c = table_c.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->best, "mmap");
  EXPECT_EQ(c->runner_up, "pread");
  EXPECT_TRUE(c->ahead_of_all);
  EXPECT_NEAR(c->margin, 1000.0 / 900.0, 1e-9);
  // Clear needs mmap at every condition where methods met: suite b had none.
  EXPECT_EQ(c->absent, 1u);
  EXPECT_FALSE(c->clear);

  // A cycle: mmap > pread at 1 KiB, pread > stdio at 2 KiB, stdio > mmap at 3 KiB.
  std::vector<harness::Result> cyc;
  auto add2 = [&](std::string method, std::uint64_t bs, double mib_s) {
    cyc.push_back(make({"s", "e", method, "read", bs, 4u << 20, mib_s, 0.02}));
  };
  add2("mmap", 1024, 1000), add2("pread", 1024, 500);
  add2("pread", 2048, 1000), add2("stdio", 2048, 500);
  add2("stdio", 3072, 1000), add2("mmap", 3072, 500);
  DecisionTable table_d = decide(cyc);  // the cells live in the table
  const Cell* d = table_d.find("read", Band::To4K, "none", "warm");
  EXPECT_FALSE(d->ahead_of_all);
  EXPECT_FALSE(d->clear);
  EXPECT_EQ(d->verdict(), "no clear winner");
  EXPECT_NE(d->summary().find("each method is behind another somewhere"), std::string::npos) << d->summary();
}

TEST(Decide, OneRepetitionCannotJudgeNoise) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"s", "e", "mmap", "read", 32, 1u << 20, 400, 0, 1}));
  rs.push_back(make({"s", "e", "pread", "read", 32, 1u << 20, 100, 0, 1}));
  DecisionTable table_c = decide(rs);  // the cells live in the table
  const Cell* c = table_c.find("read", Band::Under64, "none", "warm");
  EXPECT_EQ(c->best, "mmap");
  EXPECT_FALSE(c->noise_known);
  EXPECT_FALSE(c->clear);
  EXPECT_NE(c->summary().find("one repetition: noise unknown"), std::string::npos) << c->summary();
}

TEST(Decide, CellsWithoutDataSaySo) {
  auto rs = known_winners();
  DecisionTable t = decide(rs);
  EXPECT_EQ(t.cells.size(), 8u + 40u);  // reads: 4 bands x warm/cold; writes: 4 bands x 5 flush rows x 2
  EXPECT_EQ(t.find("write", Band::Over1M, "every", "cold")->verdict(), "no data");
  EXPECT_EQ(t.find("read", Band::Under64, "none", "cold")->summary(), "no data");
  // One method alone wins nothing.
  std::vector<harness::Result> one{make({"s", "e", "pread", "read", 8192, 1u << 20, 100})};
  EXPECT_EQ(decide(one).find("read", Band::To1M, "none", "warm")->verdict(), "only pread measured");
}

TEST(Decide, IgnoresSkippedParallelAndOtherOps) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"s", "e", "mmap", "read", 32, 1u << 20, 400}));
  auto skipped = make({"s", "e", "io_uring", "read", 32, 1u << 20, 9999});
  skipped.skipped = "not here";
  rs.push_back(skipped);
  auto parallel = make({"s", "e", "pread", "read", 32, 1u << 20, 9999});
  parallel.threads = 4;
  rs.push_back(parallel);
  rs.push_back(make({"s", "e", "readwrite", "copy", 32, 1u << 20, 9999}));
  EXPECT_EQ(decide(rs).find("read", Band::Under64, "none", "warm")->verdict(), "only mmap measured");
}

TEST(Format, TextMarkdownAndJsonCarryTheVerdicts) {
  auto rs = known_winners();
  DecisionTable t = decide(rs);
  std::string text = format_text(t);
  // 400 vs 200 MiB/s, +-2%: at worst 400/1.02 vs 200/0.98 = 1.92x.
  EXPECT_NE(text.find("mmap: 2.00x over stdio at 2 conditions (at worst 1.92x)"), std::string::npos) << text;
  EXPECT_NE(text.find("no data"), std::string::npos);
  std::string md = format_markdown(t);
  EXPECT_EQ(md.rfind("| op | packet | flush |", 0), 0u);
  nlohmann::json j = to_json(t);
  EXPECT_EQ(j["cells"].size(), 48u);
  EXPECT_EQ(j["cells"][0]["verdict"], "mmap");
  EXPECT_TRUE(j["cells"][0]["flush"].is_null());
}

// Issue 29 item 11: records whose data did not verify are no evidence:
// left out (mmap's 3x over pread disappears) and counted.
TEST(Decide, UnverifiedRecordsAreLeftOutAndCounted) {
  std::vector<harness::Result> rs;
  for (std::uint64_t bs : {1024u, 2048u}) {
    rs.push_back(make({"s", "e", "mmap", "read", bs, 4u << 20, 3000, 0.01}));
    rs.back().verified = false;
    rs.push_back(make({"s", "e", "pread", "read", bs, 4u << 20, 1000, 0.01}));
  }
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->unverified_records, 2u);
  EXPECT_EQ(c->methods, std::vector<std::string>{"pread"});
  EXPECT_NE(c->summary().find("2 records left out as unverified"), std::string::npos) << c->summary();
  EXPECT_EQ(to_json(t)["cells"][2]["unverified"], 2);
}

// Issue 10: a third method that beats the winner at one size must stop a
// "clear" verdict, even though the winner beats its closest rival everywhere.
TEST(Decide, AThirdMethodWinningOneSizeStopsAClearVerdict) {
  std::vector<harness::Result> rs;
  auto add = [&](std::string method, std::uint64_t bs, double mib_s) {
    rs.push_back(make({"s", "e", method, "read", bs, 4u << 20, mib_s, 0.02}));
  };
  // mmap beats pread by 2x at every size; stdio is far behind at 1 and 2 KiB
  // but beats mmap at 3 KiB. By geometric means mmap leads everyone.
  add("mmap", 1024, 2000), add("pread", 1024, 1000), add("stdio", 1024, 100);
  add("mmap", 2048, 2000), add("pread", 2048, 1000), add("stdio", 2048, 100);
  add("mmap", 3072, 2000), add("pread", 3072, 1000), add("stdio", 3072, 2500);
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->best, "mmap");
  EXPECT_EQ(c->runner_up, "pread");
  EXPECT_TRUE(c->ahead_of_all);
  EXPECT_EQ(c->contested, 3u);
  EXPECT_EQ(c->won, 2u);
  EXPECT_FALSE(c->clear);
  EXPECT_EQ(c->verdict(), "no clear winner");
  EXPECT_EQ(c->worst_against, "stdio");
  EXPECT_EQ(c->worst_block, 3072u);
  EXPECT_NE(c->summary().find("vs stdio at 3 KiB"), std::string::npos) << c->summary();

  // Without the 3 KiB condition, mmap wins everywhere: clear.
  rs.erase(rs.end() - 3, rs.end());
  t = decide(rs);
  c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_TRUE(c->clear) << c->summary();
  EXPECT_EQ(c->verdict(), "mmap");
}

// The winner must have run wherever methods met: pread beating stdio at a
// size where mmap did not run leaves mmap unproven there.
TEST(Decide, AWinnerAbsentFromAConditionIsNotClear) {
  std::vector<harness::Result> rs;
  auto add = [&](std::string method, std::uint64_t bs, double mib_s) {
    rs.push_back(make({"s", "e", method, "read", bs, 4u << 20, mib_s, 0.02}));
  };
  add("mmap", 1024, 2000), add("pread", 1024, 1000);
  add("pread", 2048, 1000), add("stdio", 2048, 100);
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->best, "mmap");
  EXPECT_EQ(c->absent, 1u);
  EXPECT_FALSE(c->clear);
  EXPECT_NE(c->summary().find("mmap not measured at 1 of 2 conditions"), std::string::npos) << c->summary();
}

// Within 5% is a tie even when the repetitions' ranges do not overlap.
TEST(Decide, ALeadWithinTheTieRatioIsNotClear) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"s", "e", "mmap", "read", 1024, 4u << 20, 1030, 0.001}));
  rs.push_back(make({"s", "e", "pread", "read", 1024, 4u << 20, 1000, 0.001}));
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_GT(c->worst_ratio, 1);
  EXPECT_FALSE(c->clear);
  EXPECT_NE(c->summary().find("a lead within 5% is a tie"), std::string::npos) << c->summary();
}

// Records whose figures carry warnings are left out of the ranking and
// counted; they still stop a clear verdict unless the winner clearly beats
// even them (marked, not ignored).
TEST(Decide, RecordsWithWarningsAreLeftOutAndCounted) {
  std::vector<harness::Result> rs;
  auto add = [&](std::string method, double mib_s) {
    rs.push_back(make({"s", "e", method, "read", 1024, 4u << 20, mib_s, 0.02}));
    return &rs.back();
  };
  add("mmap", 2000), add("pread", 1000);
  // stdio looks fastest, but its repetitions were too short to trust...
  harness::Result* fast = add("stdio", 9000);
  fast->samples_s = {0.001, 0.001, 0.001};
  // ... syscall's "warm" file was half evicted, and iostream had an outlier.
  add("syscall", 8000)->resident_fraction = 0.5;
  add("iostream", 7000)->warn(harness::WarningKind::Outliers, "outliers");
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->methods.size(), 5u);  // every method measured is named
  EXPECT_EQ(c->left_out_records, 3u);
  EXPECT_EQ(c->left_out.at("too_short"), 1u);
  EXPECT_EQ(c->left_out.at("not_warm"), 1u);
  EXPECT_EQ(c->left_out.at("outliers"), 1u);
  EXPECT_EQ(c->best, "mmap");  // ranked on the figures without warnings
  EXPECT_EQ(c->runner_up, "pread");
  EXPECT_EQ(c->unresolved, 3u);  // none of them is shown to be slower
  EXPECT_FALSE(c->clear);
  std::string summary = c->summary();
  EXPECT_NE(summary.find("iostream at 1 KiB has warnings and is not clearly behind (and 2 more)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("3 records left out for warnings (1 not_warm, 1 outliers, 1 too_short)"), std::string::npos) << summary;

  // Imprecise figures that lose clearly even so do not stop the verdict...
  rs.resize(2);
  testing::Spec slow{"s", "e", "stdio", "read", 1024, 4u << 20, 100, 0.02};
  slow.passes = 1;  // 40 ms repetitions: too short
  rs.push_back(make(slow));
  add("iostream", 50)->warn(harness::WarningKind::Outliers, "outliers");
  t = decide(rs);
  c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->left_out_records, 2u);
  EXPECT_EQ(c->unresolved, 0u);
  EXPECT_TRUE(c->clear) << c->summary();
  EXPECT_EQ(c->verdict(), "mmap");
  // ... but a figure from the wrong cache state says nothing, however slow.
  add("syscall", 10)->resident_fraction = 0.5;
  t = decide(rs);
  c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->unresolved, 1u);
  EXPECT_FALSE(c->clear);
  EXPECT_NE(c->summary().find("syscall at 1 KiB has warnings and is not clearly behind"), std::string::npos) << c->summary();

  // Only warned records: nothing to decide from, and it says so.
  std::vector<harness::Result> warned{rs[2], rs[4]};
  t = decide(warned);
  c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_EQ(c->verdict(), "no clear winner");
  EXPECT_EQ(c->summary().rfind("no figures without warnings: 2 records left out", 0), 0u) << c->summary();
}

// "end" (one flush after the last write) has its own row: its data is durable
// when the timed region ends, "none"'s is not.
TEST(Decide, AFinalFlushIsItsOwnRow) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"s", "w", "pread", "write", 1024, 4u << 20, 800, 0.02, 5, ""}));
  rs.push_back(make({"s", "w", "mmap", "write", 1024, 4u << 20, 400, 0.02, 5, ""}));
  rs.push_back(make({"s", "w", "pread", "write", 1024, 4u << 20, 200, 0.02, 5, "", "end:fdatasync"}));
  rs.push_back(make({"s", "w", "mmap", "write", 1024, 4u << 20, 300, 0.02, 5, "", "end:msync"}));
  DecisionTable t = decide(rs);
  EXPECT_EQ(t.find("write", Band::To4K, "none", "warm")->verdict(), "pread");
  EXPECT_EQ(t.find("write", Band::To4K, "end", "warm")->verdict(), "mmap");
  EXPECT_NE(format_text(t).find("end"), std::string::npos);
}

// Method names from a results file cannot drive the terminal.
TEST(Format, MethodNamesAreShownWithControlCharactersEscaped) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"s", "e", "\x1b[31mred\x1b[0m\nforged line", "read", 1024, 4u << 20, 2000, 0.02}));
  rs.push_back(make({"s", "e", "pread", "read", 1024, 4u << 20, 1000, 0.02}));
  DecisionTable t = decide(rs);
  for (const std::string& out : {format_text(t), format_markdown(t)}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_NE(out.find("\\x1b[31mred\\x1b[0m\\x0aforged line"), std::string::npos) << out;
    EXPECT_EQ(out.find("\nforged line"), std::string::npos) << out;
  }
}


// O_DIRECT writes end on the device, page-cache writes in memory: they are
// different work, in different columns.
TEST(Decide, DirectWritesHaveTheirOwnColumn) {
  std::vector<harness::Result> rs;
  rs.push_back(make({"direct", "write 1m", "direct", "write", 1u << 20, 64u << 20, 900, 0.02, 5, "direct", "none"}));
  rs.push_back(make({"direct", "write 1m", "pread", "write", 1u << 20, 64u << 20, 3000, 0.02, 5, "", "none"}));
  DecisionTable t = decide(rs);
  EXPECT_EQ(t.find("write", Band::Over1M, "none", "warm")->verdict(), "only pread measured");
  EXPECT_EQ(t.find("write", Band::Over1M, "none", "cold")->verdict(), "only direct measured");
}

// Every verdict says of how many methods it is, and which usual ones did not run.
TEST(Decide, EveryVerdictSaysOfHowManyMethodsAndWhichDidNotRun) {
  auto rs = known_winners();
  DecisionTable t = decide(rs);
  const Cell* c = t.find("read", Band::To4K, "none", "warm");
  EXPECT_NE(c->summary().find("of 2 methods (not measured: io_uring, stdio, syscall)"), std::string::npos) << c->summary();
  EXPECT_EQ(t.find("read", Band::Under64, "none", "cold")->summary(), "no data");
}

}  // namespace
}  // namespace iolab::report
