// The designed decision table from its records: verdicts from the rounds'
// samples, unverified records left out and counted, unmeasurable cells with
// their reason, the JSON schema (format_version 3).
#include <gtest/gtest.h>

#include "iolab/report/decision_table.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

using testing::make;

harness::Result candidate(const std::string& cell, const std::string& label, std::size_t condition,
                          std::uint64_t block, double mib_s, unsigned rounds = 6) {
  harness::Result r = make({"decision", "read", label, "read", block, 1u << 20, mib_s, 0.01, rounds});
  r.extra["decision_cell"] = cell;
  r.extra["decision_candidate"] = label;
  r.extra["decision_condition"] = condition;
  r.extra["decision_stop"] = "decided";
  r.extra["decision_margin"] = 1.05;
  r.extra["rounds"] = rounds;
  return r;
}

std::vector<harness::Result> table_records() {
  std::vector<harness::Result> rs;
  const std::string win = "read|64 B..4 KiB|none|warm", tie = "read|64 B..4 KiB|none|cold";
  for (std::size_t k = 0; k < 2; ++k) {
    std::uint64_t bs = k ? 4095 : 64;
    rs.push_back(candidate(win, "mmap", k, bs, 3000));
    rs.push_back(candidate(win, "pread", k, bs, 1000));
    rs.push_back(candidate(tie, "mmap", k, bs, 1000));
    rs.push_back(candidate(tie, "pread", k, bs, 1000));
    rs.push_back(candidate(tie, "stdio", k, bs, 300));
  }
  harness::Result no;
  no.suite = "decision";
  no.skipped = "O_DIRECT needs packets in multiples of 512 B";
  no.extra["decision_cell"] = "read|64 B..4 KiB|none|direct";
  rs.push_back(no);
  return rs;
}

TEST(DesignedTable, WinnerTieAndUnmeasurableCells) {
  auto rs = table_records();
  ASSERT_TRUE(is_designed(rs));
  DesignedTable t = designed_table(rs);
  ASSERT_EQ(t.cells.size(), 3u);
  const DesignedCell& w = t.cells[0];
  EXPECT_EQ(w.candidates, (std::vector<std::string>{"mmap", "pread"}));
  EXPECT_EQ(w.conditions, (std::vector<std::uint64_t>{64, 4095}));
  ASSERT_EQ(w.verdict.kind, harness::Verdict::Kind::Winner) << w.verdict.reason;
  EXPECT_EQ(w.candidates[w.verdict.chosen[0]], "mmap");
  EXPECT_NE(w.summary().find("mmap: over pread (closest) 3.00x, 96.9% interval 3.00..3.00"), std::string::npos) << w.summary();
  EXPECT_NE(w.why.find("calls/MiB"), std::string::npos) << w.why;
  const DesignedCell& tie = t.cells[1];
  ASSERT_EQ(tie.verdict.kind, harness::Verdict::Kind::Tie) << tie.verdict.reason;
  EXPECT_EQ(tie.verdict.chosen.size(), 2u);
  EXPECT_EQ(t.cells[2].unmeasurable, "O_DIRECT needs packets in multiples of 512 B");
  std::string text = format_text(t);
  EXPECT_NE(text.find("2 of 2 measured cells decided"), std::string::npos) << text;
  EXPECT_NE(text.find("Not measured here:\n  read 64 B..4 KiB - direct: O_DIRECT needs"), std::string::npos) << text;
}

TEST(DesignedTable, UnverifiedRecordsAreLeftOutAndCounted) {
  auto rs = table_records();
  for (auto& r : rs)
    if (r.method == "mmap" && r.extra["decision_cell"] == "read|64 B..4 KiB|none|warm") r.verified = false;
  DesignedTable t = designed_table(rs);
  EXPECT_EQ(t.unverified, 2u);
  EXPECT_EQ(t.cells[0].unverified, 2u);
  EXPECT_EQ(t.cells[0].verdict.kind, harness::Verdict::Kind::Undecided);  // only pread is left
  EXPECT_NE(t.cells[0].summary().find("2 records left out as unverified"), std::string::npos) << t.cells[0].summary();
}

TEST(DesignedTable, JsonSchema) {
  nlohmann::json j = to_json(designed_table(table_records()));
  EXPECT_EQ(j["format"], "iolab-decision-table");
  EXPECT_EQ(j["format_version"], 3);
  ASSERT_EQ(j["cells"].size(), 3u);
  for (const auto& c : j["cells"])
    for (const char* key : {"op", "band", "flush", "column", "verdict", "winner", "tied", "candidates", "conditions",
                            "rounds", "interval", "reason", "sizes"})
      EXPECT_TRUE(c.contains(key)) << key;
  EXPECT_EQ(j["cells"][0]["verdict"], "winner");
  EXPECT_EQ(j["cells"][0]["winner"], "mmap");
  EXPECT_EQ(j["cells"][0]["interval"].size(), 2u);
  EXPECT_TRUE(j["cells"][0]["flush"].is_null());
  EXPECT_EQ(j["cells"][1]["verdict"], "tie");
  EXPECT_EQ(j["cells"][1]["tied"].size(), 2u);
  EXPECT_EQ(j["cells"][2]["verdict"], "not measured");
  EXPECT_EQ(j["cells"][0]["rounds"], 6);
  EXPECT_TRUE(j["cells"][2]["sizes"].empty());  // not measured: no size has an answer
}

// A cell whose answer changes within the band is undecided as a whole, and
// its sizes still say, each, what is best there.
TEST(DesignedTable, EachSizeSaysItsOwnAnswerInJson) {
  std::vector<harness::Result> rs;
  const std::string cell = "write|64 B..4 KiB|none|buffered";
  rs.push_back(candidate(cell, "mmap", 0, 64, 2000));
  rs.push_back(candidate(cell, "stdio", 0, 64, 1000));
  rs.push_back(candidate(cell, "mmap", 1, 4095, 1000));
  rs.push_back(candidate(cell, "stdio", 1, 4095, 2000));
  nlohmann::json j = to_json(designed_table(rs));
  ASSERT_EQ(j["cells"].size(), 1u);
  const auto& c = j["cells"][0];
  EXPECT_EQ(c["verdict"], "undecided");
  ASSERT_EQ(c["sizes"].size(), 2u);
  EXPECT_EQ(c["sizes"][0]["size"], 64);
  EXPECT_EQ(c["sizes"][0]["settled"], true);
  EXPECT_EQ(c["sizes"][0]["unbeaten"], nlohmann::json::array({"mmap"}));
  EXPECT_EQ(c["sizes"][1]["size"], 4095);
  EXPECT_EQ(c["sizes"][1]["settled"], true);
  EXPECT_EQ(c["sizes"][1]["unbeaten"], nlohmann::json::array({"stdio"}));
}

}  // namespace
}  // namespace iolab::report
