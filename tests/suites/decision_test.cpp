// The decision table's design: every cell declares its candidates (from
// traits: queued ones at QD 1 and QD 32) and two conditions per band; cells
// that cannot be measured say why; files stay small.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"

#include "iolab/suites/decision.h"

namespace iolab::suites {
namespace {

TEST(DecisionDesign, EveryCellDeclaresCandidatesAndConditions) {
  auto cells = decision_design(1u << 20);
  // Reads: 4 bands x warm, cold, direct, and larger than memory in one band; writes: 4 bands x 5 flushes x
  // buffered, direct.
  ASSERT_EQ(cells.size(), 12u + 1u + 40u);
  for (const auto& c : cells) {
    EXPECT_EQ(c.conditions.size(), 2u) << c.key();
    if (!c.unmeasurable.empty()) {
      EXPECT_TRUE(c.experiments.empty());
      continue;
    }
    ASSERT_EQ(c.experiments.size(), 2u) << c.key();
    for (std::size_t k = 0; k < 2; ++k) {
      ASSERT_EQ(c.experiments[k].size(), c.candidates.size());
      for (const auto& e : c.experiments[k]) {
        EXPECT_EQ(e.block_size, c.conditions[k]);
        if (c.column == kLargerThanMemory) continue;  // its file is 4x its room (decision_memory_test.cpp)
        EXPECT_LE(e.ops ? e.ops * e.block_size : e.file_size, std::max<std::uint64_t>(2 * e.block_size, 1u << 20));
      }
    }
  }
  auto find = [&](const std::string& key) {
    auto it = std::find_if(cells.begin(), cells.end(), [&](const auto& c) { return c.key() == key; });
    EXPECT_NE(it, cells.end()) << key;
    return *it;
  };
  DecisionCell warm = find("read|4 KiB..1 MiB|none|warm");
  for (const char* m : {"pread", "mmap", "stdio", "io_uring QD1", "io_uring QD32"})
    EXPECT_NE(std::find(warm.candidates.begin(), warm.candidates.end(), m), warm.candidates.end()) << m;
  EXPECT_EQ(std::find(warm.candidates.begin(), warm.candidates.end(), "direct"), warm.candidates.end());
  DecisionCell direct = find("read|4 KiB..1 MiB|none|direct");
  for (const char* m : {"direct", "libaio QD1", "libaio QD32", "io_uring O_DIRECT QD32"})
    EXPECT_NE(std::find(direct.candidates.begin(), direct.candidates.end(), m), direct.candidates.end()) << m;
  EXPECT_NE(find("read|< 64 B|none|direct").unmeasurable.find("512 B"), std::string::npos);
  EXPECT_EQ(find("write|>= 1 MiB|every|buffered").experiments[0][0].sync.flushes(), true);
  // A flush between writes: queued methods cannot make one, so they are not candidates there, and
  // the direct cells, with only `direct` left, say so instead of measuring one method.
  for (const char* key : {"write|< 64 B|every|buffered", "write|4 KiB..1 MiB|every-16k|buffered"}) {
    DecisionCell c = find(key);
    for (const auto& t : c.traits) EXPECT_FALSE(t.queued) << key;
    EXPECT_GE(c.candidates.size(), 2u) << key;
  }
  const DecisionCell async = find("write|< 64 B|async-16k|buffered");  // a background flush: queued ones can
  EXPECT_TRUE(std::any_of(async.traits.begin(), async.traits.end(), [](const auto& t) { return t.queued; }));
  for (const char* key : {"write|>= 1 MiB|every|direct", "write|4 KiB..1 MiB|every-16k|direct"})
    EXPECT_NE(find(key).unmeasurable.find("only direct can do this (queued methods"), std::string::npos)
        << find(key).unmeasurable;
}

// A write pass that reaches the device (a flush policy, or O_DIRECT) makes
// at most 64 flushes and writes at most 1 MiB, but always two packets:
// flushes cost the device's milliseconds, and unbounded they made one pass
// last seconds.
TEST(DecisionDesign, DeviceBoundWritePassesAreBounded) {
  for (const auto& c : decision_design(32u << 20)) {
    if (c.op != "write" || !c.unmeasurable.empty()) continue;
    for (const auto& row : c.experiments)
      for (const auto& e : row) {
        const std::uint64_t length = harness::file_length(e);
        EXPECT_GE(length / e.block_size, 2u) << c.key();
        // Their passes wait for the device: repetitions sized with more headroom.
        EXPECT_EQ(c.device_bound, e.sync.flushes() || c.column == "direct") << c.key();
        EXPECT_EQ(length, row[0].ops ? row[0].ops * row[0].block_size : row[0].file_size) << c.key();  // like for like
        if (!e.sync.flushes() && c.column != "direct") continue;
        EXPECT_LE(length, std::max<std::uint64_t>(1u << 20, 2 * e.block_size)) << c.key();
        std::uint64_t flushes = 1;  // "end"
        if (e.sync.schedule == harness::FlushSchedule::EveryWrite) flushes = length / e.block_size;
        if (e.sync.schedule == harness::FlushSchedule::EveryBytes || e.sync.schedule == harness::FlushSchedule::AsyncBytes)
          flushes = length / std::max(e.sync.interval, e.block_size);
        EXPECT_LE(flushes, 64u) << c.key() << " at " << e.block_size;
      }
  }
}

// Every candidate's traits beside its label, from the method itself.
TEST(DecisionDesign, CandidatesCarryTheirTraits) {
  for (const auto& c : decision_design(1u << 20)) {
    ASSERT_EQ(c.traits.size(), c.candidates.size()) << c.key();
    for (std::size_t i = 0; i < c.experiments.size() && !c.experiments.empty(); ++i)
      for (std::size_t j = 0; j < c.candidates.size(); ++j) {
        const auto& e = c.experiments[i][j];
        const io::MethodTraits t = io::find_file_method(e.method).traits(e.options);
        EXPECT_EQ(c.traits[j].maps_file, t.maps_file) << c.key() << " " << c.candidates[j];
        EXPECT_EQ(c.traits[j].queued, t.queued) << c.key() << " " << c.candidates[j];
        EXPECT_EQ(c.traits[j].bypasses_page_cache, t.bypasses_page_cache) << c.key() << " " << c.candidates[j];
      }
  }
}

// A read cell's candidates at one condition read one file, written once:
// each record says so, each still proved its cache state and verified every
// byte, the records name the candidates' traits, and no file is left.
TEST(DecisionRun, ReadCandidatesShareOneFileAndLeaveNothing) {
  DecisionCell cell;
  cell.op = "read", cell.band = "64 B..4 KiB", cell.flush = "none", cell.column = "warm";
  cell.conditions = {4096, 8192};
  for (const char* m : {"pread", "mmap"}) {
    cell.candidates.push_back(m);
    cell.traits.push_back(io::find_file_method(m).traits({}));
  }
  for (std::uint64_t block : cell.conditions) {
    std::vector<harness::FileExperiment> row;
    for (const auto& m : cell.candidates) {
      harness::FileExperiment e;
      e.suite = "decision", e.experiment = "read", e.method = m, e.op = harness::Op::Read;
      e.block_size = block, e.file_size = 64 * 1024, e.cache = harness::CacheState::Warm, e.latency = false;
      row.push_back(e);
    }
    cell.experiments.push_back(row);
  }
  io::ScratchDir scratch("/tmp");
  harness::RunConfig config;
  config.min_time = 0;
  config.warmup = 1;
  config.latency = false;
  harness::Runner runner(config, scratch);
  DecisionSettings settings;
  settings.budget_s = 600;
  settings.min_rounds = settings.max_rounds = 6;
  settings.min_time = settings.min_time_floor = 0;
  auto records = run_decision(runner, {cell}, settings);
  ASSERT_EQ(records.size(), 4u);
  for (const auto& r : records) {
    ASSERT_FALSE(r.skipped) << *r.skipped;
    EXPECT_TRUE(r.verified);
    EXPECT_EQ(r.reps, 6u);
    EXPECT_NE(r.cache_method.find("one file read by every candidate here"), std::string::npos) << r.cache_method;
    ASSERT_TRUE(r.resident_fraction.has_value());
    EXPECT_GE(*r.resident_fraction, 0.99);  // proven warm before every timed pass
    const auto& traits = r.extra.at("decision_traits");
    const bool mapped = std::find(traits.begin(), traits.end(), "maps_file") != traits.end();
    EXPECT_EQ(mapped, r.extra.at("decision_candidate") == "mmap") << traits.dump();
  }
  std::vector<std::string> left;
  for (const auto& f : std::filesystem::directory_iterator(scratch.path())) left.push_back(f.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{});
}

}  // namespace
}  // namespace iolab::suites
