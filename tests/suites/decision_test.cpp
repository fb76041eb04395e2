// The decision table's design: every cell declares its candidates (from
// traits: queued ones at QD 1 and QD 32) and two conditions per band; cells
// that cannot be measured say why; files stay small.
#include <gtest/gtest.h>

#include <algorithm>

#include "iolab/suites/decision.h"

namespace iolab::suites {
namespace {

TEST(DecisionDesign, EveryCellDeclaresCandidatesAndConditions) {
  auto cells = decision_design(1u << 20);
  // Reads: 4 bands x warm, cold, direct; writes: 4 bands x 5 flushes x buffered, direct.
  ASSERT_EQ(cells.size(), 12u + 40u);
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
}

}  // namespace
}  // namespace iolab::suites
