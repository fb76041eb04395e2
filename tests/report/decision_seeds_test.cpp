// The seeds' rules beside this machine's verdicts: a rule's cell found by
// its op, band, flush and column; a winner that is the named method agrees,
// one the rule says loses does not, a tie with it agrees partly, an
// undecided or unmeasured cell cannot say.
#include <gtest/gtest.h>

#include <algorithm>

#include "iolab/report/decision_seeds.h"

namespace iolab::report {
namespace {

DesignedCell seed_cell(const char* op, const char* band, const char* flush, const char* column,
                       harness::Verdict::Kind kind, std::vector<std::size_t> chosen) {
  DesignedCell c;
  c.op = op, c.band = band, c.flush = flush, c.column = column;
  c.candidates = {"pread", "mmap", "stdio"};
  c.rounds = 7;
  c.verdict.kind = kind;
  c.verdict.chosen = std::move(chosen);
  c.verdict.against = 2;
  c.verdict.interval = {1.3, 1.2, 1.4, 0.968, 5, 5, true};
  return c;
}

const SeedRuleRow& row_for(const std::vector<SeedRuleRow>& rows, const std::string& cell, const std::string& seed) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.cell == cell && r.seed == seed; });
  EXPECT_NE(it, rows.end()) << cell;
  return *it;
}

TEST(SeedRules, EachRuleAgreesOrNotWithItsCell) {
  using K = harness::Verdict::Kind;
  DesignedTable t;
  t.cells.push_back(seed_cell("read", "< 64 B", "none", "cold", K::Winner, {1}));         // mmap wins: 004 yes
  t.cells.push_back(seed_cell("read", ">= 1 MiB", "none", "cold", K::Winner, {1}));       // mmap wins: 004 no
  t.cells.push_back(seed_cell("read", "64 B..4 KiB", "none", "cold", K::Tie, {1, 0}));    // mmap tied: partly
  t.cells.push_back(seed_cell("read", "4 KiB..1 MiB", "none", "cold", K::Undecided, {}));
  DesignedCell gone = seed_cell("write", "< 64 B", "none", "buffered", K::Undecided, {});
  gone.unmeasurable = "not run: budget (its 5 rounds need about 20 s; 3 s of the 480 s budget were left)";
  t.cells.push_back(gone);
  auto rows = seed_rules(t);
  EXPECT_EQ(row_for(rows, "read|< 64 B|none|cold", "004").agrees, "yes");
  EXPECT_NE(row_for(rows, "read|< 64 B|none|cold", "004").machine.find("mmap wins"), std::string::npos);
  EXPECT_EQ(row_for(rows, "read|>= 1 MiB|none|cold", "004").agrees, "no");
  EXPECT_EQ(row_for(rows, "read|>= 1 MiB|none|cold", "001").agrees, "no");  // 001: pread should win there
  EXPECT_EQ(row_for(rows, "read|64 B..4 KiB|none|cold", "004").agrees, "partly");
  EXPECT_EQ(row_for(rows, "read|4 KiB..1 MiB|none|cold", "004").agrees, "cannot say");
  EXPECT_EQ(row_for(rows, "write|< 64 B|none|buffered", "004").agrees, "cannot say");
  EXPECT_NE(row_for(rows, "write|< 64 B|none|buffered", "004").machine.find("not run: budget"), std::string::npos);
  EXPECT_EQ(row_for(rows, "write|>= 1 MiB|none|buffered", "004").machine, "not in this run");
  auto j = to_json(rows);
  ASSERT_EQ(j.size(), rows.size());
  EXPECT_EQ(j[0]["seed"], "004");
  EXPECT_TRUE(j.back()["cell"].is_null());  // 003: not a question this table asks
  EXPECT_EQ(j.back()["agrees"], "not in this table");
  EXPECT_NE(format_text(rows).find("seed says / this machine says / agrees?"), std::string::npos);
}

}  // namespace
}  // namespace iolab::report
