// The decision's design (design.h): rows, the grid and its spacings, the
// candidates a condition declares and what their experiments share.
#include "iolab/decision/design.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace iolab::decision {
namespace {

TEST(Design, EveryRowOfTheMapByDefault) {
  const auto rs = rows(DesignRequest{});
  // Reads: warm, cold, direct and the two past-memory regimes; writes: 5 flush policies x buffered, direct.
  EXPECT_EQ(rs.size(), 5u + 10u);
  std::set<std::string> keys;
  for (const auto& r : rs) keys.insert(r.key());
  EXPECT_TRUE(keys.count("read|none|past-memory"));
  EXPECT_TRUE(keys.count("read|none|past-memory-direct"));
  EXPECT_TRUE(keys.count("write|every-16k|direct"));
  EXPECT_FALSE(keys.count("read|end|warm"));
}

TEST(Design, TheUsersOwnConditionsNarrowTheRows) {
  DesignRequest r;
  r.ops = {results::Op::Write};
  r.flushes = {"every-16k"};
  r.sizes = {700, 65536};
  const auto rs = rows(r);
  ASSERT_EQ(rs.size(), 2u);  // buffered and direct
  for (const auto& row : rs) EXPECT_EQ(sizes(row, Spacing::Every4x, r), (std::vector<std::uint64_t>{700, 65536}));
  DesignRequest reads;
  reads.flushes = {"every"};  // a flush policy asks for writes: reads have none
  for (const auto& row : rows(reads)) EXPECT_EQ(row.op, results::Op::Write);
  DesignRequest nothing;
  nothing.ops = {results::Op::Read};
  nothing.columns = {Column::Buffered};
  EXPECT_TRUE(rows(nothing).empty());
}

TEST(Design, TheGridThinsBySpacingAndColumn) {
  const DesignRequest r;
  const Row warm{results::Op::Read, "none", Column::Warm};
  EXPECT_EQ(sizes(warm, Spacing::Every4x, r).size(), 11u);
  EXPECT_EQ(sizes(warm, Spacing::Every16x, r), (std::vector<std::uint64_t>{8, 128, 2048, 32768, 524288, 8388608}));
  EXPECT_EQ(sizes(warm, Spacing::Every64x, r), (std::vector<std::uint64_t>{8, 512, 32768, 2097152}));
  // O_DIRECT from 512 B; past memory from a page to 1 MiB; the anchor in every spacing.
  for (Spacing sp : {Spacing::Every4x, Spacing::Every16x, Spacing::Every64x}) {
    const auto direct = sizes({results::Op::Write, "none", Column::Direct}, sp, r);
    EXPECT_TRUE(std::all_of(direct.begin(), direct.end(), [](auto s) { return s >= 512 && s % 512 == 0; }));
    const auto past = sizes({results::Op::Read, "none", Column::PastMemory}, sp, r);
    EXPECT_EQ(past.front(), 4096u);
    EXPECT_TRUE(std::all_of(past.begin(), past.end(), [](auto s) { return s >= 4096 && s <= (1u << 20); }));
    EXPECT_TRUE(std::count(past.begin(), past.end(), kAnchorSize));
    EXPECT_TRUE(std::count(direct.begin(), direct.end(), kAnchorSize));
  }
}

TEST(Design, CandidatesFollowTheirTraitsNotTheirNames) {
  const DesignRequest r;
  const DesignedCondition warm = design({{results::Op::Read, "none", Column::Warm}, 4096}, r);
  ASSERT_TRUE(warm.unmeasurable.empty());
  for (const auto& c : warm.candidates) EXPECT_FALSE(c.traits.bypasses_page_cache) << c.label;
  EXPECT_EQ(warm.candidates.size(), warm.experiments.size());
  // Every candidate at a condition reads or writes the same file size.
  for (const auto& e : warm.experiments) EXPECT_EQ(e.file_size, warm.experiments[0].file_size);
  const DesignedCondition direct = design({{results::Op::Read, "none", Column::Direct}, 4096}, r);
  for (const auto& c : direct.candidates) EXPECT_TRUE(c.traits.bypasses_page_cache) << c.label;
  // A flush between writes has no single point with a queue of writes in flight.
  const DesignedCondition every = design({{results::Op::Write, "every", Column::Buffered}, 4096}, r);
  for (const auto& c : every.candidates) EXPECT_FALSE(c.traits.queued) << c.label;
  EXPECT_TRUE(every.device_bound);
  for (const auto& e : every.experiments) EXPECT_LE(e.ops, 64u);
  const DesignedCondition async = design({{results::Op::Write, "async-16k", Column::Buffered}, 4096}, r);
  EXPECT_TRUE(std::any_of(async.candidates.begin(), async.candidates.end(), [](auto& c) { return c.traits.queued; }));
}

TEST(Design, PastMemoryThroughThePageCacheIsOneRequestAtATimeWithMadvRandom) {
  DesignRequest r;
  r.memory_room = 32u << 20;
  const DesignedCondition d = design({{results::Op::Read, "none", Column::PastMemory}, 4096}, r);
  ASSERT_FALSE(d.candidates.empty());
  bool random = false;
  for (const auto& c : d.candidates) {
    EXPECT_FALSE(c.traits.bypasses_page_cache) << c.label;
    random = random || c.label.ends_with("MADV_RANDOM");
  }
  EXPECT_TRUE(random) << "mmap with MADV_RANDOM is mmap's peer past memory";
  if (!d.unmeasurable.empty()) GTEST_SKIP() << d.unmeasurable;  // no memory cgroup here: no experiments to check
  for (std::size_t i = 0; i < d.candidates.size(); ++i) {
    if (d.candidates[i].traits.queued) {
      EXPECT_EQ(d.experiments[i].options.queue_depth, 1u) << d.candidates[i].label;
    }
  }
  if (d.unmeasurable.empty()) {
    for (const auto& e : d.experiments) {
      EXPECT_EQ(e.cache, results::CacheState::Full);
      EXPECT_EQ(e.file_size, 4u * r.memory_room);
      EXPECT_EQ(e.pattern, results::AccessPattern::Rand);
    }
  }
  const DesignedCondition q = design({{results::Op::Read, "none", Column::PastMemoryDirect}, 4096}, r);
  ASSERT_TRUE(q.unmeasurable.empty()) << q.unmeasurable;
  EXPECT_TRUE(std::any_of(q.experiments.begin(), q.experiments.end(), [](auto& e) { return e.options.queue_depth == 32; }));
}

TEST(Design, WhatCannotBeMeasuredSaysWhy) {
  const DesignRequest r;
  const DesignedCondition odd = design({{results::Op::Write, "every-16k", Column::Direct}, 700}, r);
  EXPECT_NE(odd.unmeasurable.find("multiples of 512 B"), std::string::npos) << odd.unmeasurable;
  const DesignedCondition one = design({{results::Op::Write, "every", Column::Direct}, 4096}, r);
  EXPECT_NE(one.unmeasurable.find("only direct can do this"), std::string::npos) << one.unmeasurable;
  EXPECT_EQ(Condition({{results::Op::Write, "every", Column::Direct}, 4096}).key(), "write|4096|every|direct");
}

}  // namespace
}  // namespace iolab::decision
