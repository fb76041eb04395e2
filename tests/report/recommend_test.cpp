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
  EXPECT_TRUE(c->clear);

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
  EXPECT_EQ(t.cells.size(), 8u + 32u);
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
  EXPECT_EQ(j["cells"].size(), 40u);
  EXPECT_EQ(j["cells"][0]["verdict"], "mmap");
  EXPECT_TRUE(j["cells"][0]["flush"].is_null());
}

TEST(TableExperiments, FillEveryCellWithSmallFiles) {
  auto es = table_experiments(1u << 20, harness::Eviction::PerFile);
  std::set<std::tuple<std::string, Band, std::string, std::string>> cells;
  for (const auto& e : es) {
    EXPECT_LE(e.ops ? e.ops * e.block_size : e.file_size, std::max<std::uint64_t>(1u << 20, e.block_size));
    EXPECT_EQ(e.eviction, harness::Eviction::PerFile);
    std::string flush = e.sync.flushes() ? harness::to_string(e.sync) : "none";
    std::string cache = e.op == harness::Op::Write || e.cache == harness::CacheState::Warm ? "warm" : "cold";
    cells.insert({std::string(harness::to_string(e.op)), band_of(e.block_size), flush, cache});
  }
  // Reads: 4 bands x warm/cold; writes: 4 bands x 4 flush policies (O_DIRECT writes among them from 4 KiB up).
  EXPECT_EQ(cells.size(), 8u + 16u);
  EXPECT_EQ(std::count_if(es.begin(), es.end(), [](const auto& e) { return e.method == "direct" && e.op == harness::Op::Write; }), 8);
}

}  // namespace
}  // namespace iolab::report
