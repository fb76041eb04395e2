// The seeds' rules beside this machine's verdicts: a rule's cell found by
// its op, band, flush and column; a winner of the kind of method the rule
// names (by the candidate's traits, never its label) agrees, one the rule
// says loses does not, a tie with it agrees partly; an undecided cell is
// read size by size; an unmeasured cell, or records that name no traits,
// cannot say.
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
  io::MethodTraits mapped, user_buffer;
  mapped.maps_file = true;
  user_buffer.user_space_buffer = user_buffer.library_calls = true;
  user_buffer.positional = false;
  c.traits = {io::MethodTraits{}, mapped, user_buffer};
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

// An undecided cell answers a rule size by size (candidates pread, mmap,
// stdio): each size's unbeaten set and who beat whom. A rule claims its
// whole band: it fails where its kind is beaten at one size and holds at
// none, holds only where it holds at every size, and cannot say while a
// size is open and nothing contradicts it.
TEST(SeedRules, AnUndecidedCellAnswersSizeBySize) {
  using K = harness::Verdict::Kind;
  const harness::RatioInterval by_1_2{1.2, 1.17, 1.23, 0.969, 6, 6, true};
  auto undecided = [&](const char* op, const char* band, const char* column) {
    DesignedCell c = seed_cell(op, band, "none", column, K::Undecided, {});
    c.conditions = {64, 4095};
    c.verdict.beaten.assign(2, std::vector<std::optional<harness::Verdict::Beat>>(3));
    c.verdict.unbeaten.assign(2, {});
    c.verdict.settled.assign(2, false);
    return c;
  };
  DesignedTable t;
  // 64 B..4 KiB cold reads (004 and 001: mmap wins): mmap alone at 64 B; at 4095 B beaten by pread.
  DesignedCell changes = undecided("read", "64 B..4 KiB", "cold");
  changes.verdict.unbeaten = {{1}, {0}};
  changes.verdict.settled = {true, true};
  changes.verdict.beaten[0][0] = changes.verdict.beaten[0][2] = harness::Verdict::Beat{1, by_1_2};
  changes.verdict.beaten[1][1] = changes.verdict.beaten[1][2] = harness::Verdict::Beat{0, by_1_2};
  t.cells.push_back(changes);
  // < 64 B cold reads (004: mmap wins): mmap beaten at 64 B, the other size still open.
  DesignedCell refuted = undecided("read", "< 64 B", "cold");
  refuted.verdict.unbeaten = {{2, 0}, {1, 0, 2}};
  refuted.verdict.beaten[0][1] = harness::Verdict::Beat{2, by_1_2};
  t.cells.push_back(refuted);
  // 4 KiB..1 MiB cold reads (004: the others beat mmap): mmap beaten at both sizes, pread and stdio unresolved.
  DesignedCell holds = undecided("read", "4 KiB..1 MiB", "cold");
  holds.verdict.unbeaten = {{0, 2}, {2, 0}};
  holds.verdict.beaten[0][1] = holds.verdict.beaten[1][1] = harness::Verdict::Beat{0, by_1_2};
  t.cells.push_back(holds);
  // >= 1 MiB cold reads (004: the others beat mmap): mmap beaten at one size, unresolved at the other.
  DesignedCell half = undecided("read", ">= 1 MiB", "cold");
  half.verdict.unbeaten = {{0, 2}, {1, 0}};
  half.verdict.beaten[0][1] = harness::Verdict::Beat{0, by_1_2};
  t.cells.push_back(half);
  auto rows = seed_rules(t);
  const auto& both = row_for(rows, "read|64 B..4 KiB|none|cold", "004");
  EXPECT_EQ(both.agrees, "partly") << both.machine;
  EXPECT_NE(both.machine.find("at 64 B: mmap wins; at 4095 B: mmap beaten by pread (1.20x, 1.17..1.23)"),
            std::string::npos)
      << both.machine;
  EXPECT_EQ(row_for(rows, "read|64 B..4 KiB|none|cold", "001").agrees, "partly");
  const auto& no = row_for(rows, "read|< 64 B|none|cold", "004");
  EXPECT_EQ(no.agrees, "no") << no.machine;
  EXPECT_NE(no.machine.find("at 64 B: mmap beaten by stdio"), std::string::npos) << no.machine;
  EXPECT_NE(no.machine.find("at 4095 B: unresolved"), std::string::npos) << no.machine;
  const auto& yes = row_for(rows, "read|4 KiB..1 MiB|none|cold", "004");
  EXPECT_EQ(yes.agrees, "yes") << yes.machine;
  EXPECT_NE(yes.machine.find("undecided after 7 rounds"), std::string::npos) << yes.machine;
  EXPECT_EQ(row_for(rows, "read|>= 1 MiB|none|cold", "004").agrees, "cannot say");
  // 001 at >= 1 MiB (pread wins): open at both sizes where pread is unbeaten.
  EXPECT_EQ(row_for(rows, "read|>= 1 MiB|none|cold", "001").agrees, "cannot say");
  // Records that name no traits cannot answer, size by size either.
  DesignedTable old;
  DesignedCell no_traits = changes;
  no_traits.traits.assign(3, std::nullopt);
  old.cells.push_back(no_traits);
  const auto old_rows = seed_rules(old);
  const auto& unknown = row_for(old_rows, "read|64 B..4 KiB|none|cold", "004");
  EXPECT_EQ(unknown.agrees, "cannot say");
  EXPECT_NE(unknown.machine.find("name no method traits"), std::string::npos) << unknown.machine;
}

// The rule's kind is the candidate's traits: a label that begins with
// "mmap" but comes from a method that maps nothing is not memory-mapped,
// and a mapping method under any label is.
TEST(SeedRules, KindOfMethodComesFromTraitsNotLabels) {
  using K = harness::Verdict::Kind;
  DesignedTable t;
  DesignedCell misleading = seed_cell("read", "< 64 B", "none", "cold", K::Winner, {0});
  misleading.candidates = {"mmap_like_pread", "mapper", "stdio"};
  misleading.traits[0] = io::traits_from_names(std::vector<std::string>{"positional"});
  misleading.traits[1] = io::traits_from_names(std::vector<std::string>{"maps_file", "positional"});
  t.cells.push_back(misleading);
  DesignedCell mapped = misleading;
  mapped.band = "64 B..4 KiB";
  mapped.verdict.chosen = {1};
  t.cells.push_back(mapped);
  DesignedCell old = seed_cell("read", ">= 1 MiB", "none", "cold", K::Winner, {0});
  old.traits.assign(3, std::nullopt);  // a results file from before records named traits
  t.cells.push_back(old);
  auto rows = seed_rules(t);
  const auto& small = row_for(rows, "read|< 64 B|none|cold", "004");
  EXPECT_EQ(small.agrees, "no") << small.machine;  // "mmap_like_pread" maps nothing
  EXPECT_EQ(small.expects, "a memory-mapped method wins");
  EXPECT_EQ(row_for(rows, "read|64 B..4 KiB|none|cold", "004").agrees, "yes");  // "mapper" maps the file
  EXPECT_EQ(row_for(rows, "read|64 B..4 KiB|none|cold", "001").agrees, "yes");
  const auto& unknown = row_for(rows, "read|>= 1 MiB|none|cold", "001");
  EXPECT_EQ(unknown.agrees, "cannot say");
  EXPECT_NE(unknown.machine.find("name no method traits"), std::string::npos) << unknown.machine;
  EXPECT_EQ(row_for(rows, "read|>= 1 MiB|none|cold", "004").expects, "the winner is not a memory-mapped method");
  // The traits as records write them come back as they were.
  io::MethodTraits m;
  m.maps_file = true;
  m.data_sync = io::Durability::MsyncSync;
  std::vector<std::string> names;
  for (auto n : io::trait_names(m)) names.emplace_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"maps_file", "positional"}));
  io::MethodTraits back = io::traits_from_names(names);
  EXPECT_TRUE(back.maps_file && back.positional && !back.queued && !back.user_space_buffer);
}

// Records of a designed run carry each candidate's traits, and the table reads them back.
TEST(SeedRules, TraitsReadFromRecords) {
  harness::Result r;
  r.suite = "decision";
  r.method = "some label";
  r.op = harness::Op::Read;
  r.block_size = 8;
  r.skipped = "not here";
  r.extra["decision_cell"] = "read|< 64 B|none|cold";
  r.extra["decision_candidate"] = "some label";
  r.extra["decision_condition"] = 0;
  r.extra["decision_traits"] = {"maps_file", "positional"};
  DesignedTable t = designed_table(std::vector<harness::Result>{r});
  ASSERT_EQ(t.cells.size(), 1u);
  ASSERT_EQ(t.cells[0].traits.size(), 1u);
  ASSERT_TRUE(t.cells[0].traits[0].has_value());
  EXPECT_TRUE(t.cells[0].traits[0]->maps_file);
  EXPECT_FALSE(t.cells[0].traits[0]->user_space_buffer);
}

}  // namespace
}  // namespace iolab::report
