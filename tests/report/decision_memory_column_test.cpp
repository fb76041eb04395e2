// The larger-than-memory column in the table built from records: its cell
// is found by its key like any other, its "why" adds the faults that went
// to the device and the device's bytes per byte, the JSON, the console and
// the HTML report name the column, and the published rule it asks about
// (Crotty et al.: random reads past memory, not mmap) agrees or not by the
// winner's traits.
#include <gtest/gtest.h>

#include "iolab/report/decision_seeds.h"
#include "iolab/report/decision_table.h"
#include "iolab/report/html.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

const std::string kCell = "read|4 KiB..1 MiB|none|larger than memory";

// mmap (the mapping) and a deep O_DIRECT queue at both edges; `mmap_mib_s` sets who wins.
harness::Results column_run(double mmap_mib_s) {
  harness::Results run = testing::realistic();
  run.results.clear();
  struct Candidate {
    const char* label;
    double mib_s;
    nlohmann::json traits;
    const char* cache;
    double major_faults_per_mib, device_bytes_per_byte;
  };
  const Candidate candidates[] = {
      {"mmap", mmap_mib_s, {"maps_file", "positional"}, "full", 160, 1230},
      {"libaio QD32", 280, {"bypasses_page_cache", "needs_alignment", "queued", "positional"}, "direct", 0, 1}};
  for (std::size_t k = 0; k < 2; ++k)
    for (const auto& c : candidates) {
      const std::uint64_t block = k ? 1020u << 10 : 4096;
      harness::Result r = testing::make({"decision", "random read", c.label, "read", block, 256u << 20, c.mib_s, 0.01, 6, c.cache});
      r.extra["decision_cell"] = kCell;
      r.extra["decision_candidate"] = c.label;
      r.extra["decision_condition"] = k;
      r.extra["decision_stop"] = "decided";
      r.extra["decision_margin"] = 1.05;
      r.extra["rounds"] = 6;
      r.extra["decision_traits"] = c.traits;
      r.extra["memory_limit_bytes"] = 64u << 20;
      r.extra["working_set_ratio"] = 4;
      r.extra["major_faults_per_mib"] = c.major_faults_per_mib;
      r.extra["device_read_bytes_per_byte"] = c.device_bytes_per_byte;
      run.results.push_back(r);
    }
  return run;
}

TEST(DesignedTableLargerThanMemory, TheColumnIsACellLikeAnyOtherAndSaysWhyFromTheDevice) {
  const harness::Results run = column_run(0.8);
  DesignedTable t = designed_table(run.results);
  ASSERT_EQ(t.cells.size(), 1u);
  const DesignedCell& c = t.cells[0];
  EXPECT_EQ(c.column, "larger than memory");
  EXPECT_EQ(c.band, "4 KiB..1 MiB");
  ASSERT_EQ(c.verdict.kind, harness::Verdict::Kind::Winner) << c.verdict.reason;
  EXPECT_EQ(c.candidates[c.verdict.chosen[0]], "libaio QD32");
  EXPECT_NE(c.why.find("160 major faults/MiB"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("1,230 bytes read from the device per byte"), std::string::npos) << c.why;
  EXPECT_NE(format_text(t).find("read  4 KiB..1 MiB  -      larger than memory"), std::string::npos) << format_text(t);
  EXPECT_EQ(to_json(t)["cells"][0]["column"], "larger than memory");

  const std::vector<SeedRuleRow> rows = seed_rules(t);
  auto paper = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.seed == "Crotty et al. (CIDR 2022)"; });
  ASSERT_NE(paper, rows.end());
  EXPECT_EQ(paper->cell, kCell);
  EXPECT_EQ(paper->agrees, "yes") << paper->machine;  // the winner maps nothing
  auto mmap_wins = seed_rules(designed_table(column_run(5000).results));
  paper = std::find_if(mmap_wins.begin(), mmap_wins.end(), [](const auto& r) { return r.seed == "Crotty et al. (CIDR 2022)"; });
  ASSERT_NE(paper, mmap_wins.end());
  EXPECT_EQ(paper->agrees, "no") << paper->machine;

  const std::string page = render_html_report({run});
  const std::size_t section = page.find("<section id=\"decision\">");
  ASSERT_NE(section, std::string::npos);
  const std::string decision = page.substr(section, page.find("</section>", section) - section);
  EXPECT_NE(decision.find("reads: cold cache, O_DIRECT or larger than memory"), std::string::npos);
  EXPECT_NE(decision.find("larger than memory: libaio QD32: over mmap"), std::string::npos) << decision;
}

}  // namespace
}  // namespace iolab::report
