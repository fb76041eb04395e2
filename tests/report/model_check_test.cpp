// The model's crossovers against the decision map (issue 42): a row whose
// pick changes between two measured sizes is checked for the model's
// crossover of the two methods between them.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "decision/synthetic_decision.h"
#include "decision_rows.h"
#include "iolab/report/cost_model.h"

// Named: the report tests are a unity build.
namespace model_check_test {

using iolab::decision::Column;
using iolab::decision::Condition;
using iolab::decision::Row;

using iolab::testing::mib_s;

std::vector<iolab::results::Result> row_records(const Row& row, const std::vector<std::uint64_t>& sizes,
                                                const std::function<std::vector<iolab::testing::SyntheticCandidate>(double)>& cands) {
  return iolab::testing::row_records(row, sizes, cands, 7);
}

TEST(ModelCheck, TheModelsCrossoverLiesWhereTheDecisionsPickChanges) {
  const std::vector<std::uint64_t> sizes{32, 128, 512, 2048, 8192};
  // a: 1 µs per call, 2 GB/s; b: 100 ns per call, 1 GB/s: b is cheaper below 1800 B, a above,
  // so the pick changes from b to a between 512 B and 2 KiB.
  auto rs = row_records(Row{iolab::results::Op::Read, "none", Column::Warm}, sizes, [](double s) {
    return std::vector<iolab::testing::SyntheticCandidate>{{"a", {}, mib_s(s, 1e-6, 0.5e-9)}, {"b", {}, mib_s(s, 100e-9, 1e-9)}};
  });
  // c is fast at 512 B only: the pick changes twice, in opposite directions, which lines
  // of calls and bytes (crossing at most once) cannot both follow.
  auto bumpy = row_records(Row{iolab::results::Op::Write, "none", Column::Buffered}, sizes, [](double s) {
    return std::vector<iolab::testing::SyntheticCandidate>{{"c", {}, s == 512 ? 3000.0 : 1000.0}, {"d", {}, 2000.0}};
  });
  rs.insert(rs.end(), bumpy.begin(), bumpy.end());

  const auto model = iolab::report::fit_cost_model(rs);
  const auto decision = iolab::decision::decision_from_records(rs);
  const auto checks = iolab::report::check_crossovers(model, decision, rs);
  ASSERT_EQ(checks.size(), 3u);
  const auto& x = checks[0];
  EXPECT_EQ(x.row, "read|none|warm");
  EXPECT_EQ(x.from, 512u);
  EXPECT_EQ(x.to, 2048u);
  EXPECT_EQ(x.below, "b");
  EXPECT_EQ(x.above, "a");
  EXPECT_TRUE(x.below_fitted && x.above_fitted);
  ASSERT_TRUE(x.model);
  EXPECT_NEAR(x.model->estimate, 1800, 1800 * 0.05);
  EXPECT_FALSE(x.model_reversed);
  EXPECT_TRUE(x.between);
  EXPECT_EQ(checks[1].row, "write|none|buffered");
  EXPECT_EQ(checks[1].below, "d");
  EXPECT_EQ(checks[1].above, "c");
  EXPECT_EQ(checks[2].below, "c");
  EXPECT_EQ(checks[2].above, "d");
  EXPECT_FALSE(checks[1].between && checks[2].between);

  const std::string text = iolab::report::crossover_check_text(checks);
  const std::size_t between = 1 + checks[1].between + checks[2].between;
  EXPECT_NE(text.find("Crossovers against the decision map: " + std::to_string(between) + " of 3 pick changes the rounds told apart"),
            std::string::npos) << text;
  EXPECT_NE(text.find("read|none|warm 512 B..2 KiB: b -> a; model: at 1."), std::string::npos) << text;
  const auto j = iolab::report::to_json(checks);
  EXPECT_EQ(j["changes"], 3);
  EXPECT_EQ(j["between"], between);
  EXPECT_EQ(j["rows"][0]["between"], true);
}

// Two methods 2% apart, the lead swapping between sizes: each pick is among
// the other condition's survivors within the zone, so the change is listed
// but not counted (no crossover need lie there), while a change the rounds
// told apart is.
TEST(ModelCheck, AChangeBetweenPicksTheRoundsDidNotTellApartIsListedNotCounted) {
  const std::vector<std::uint64_t> sizes{32, 128, 512, 2048, 8192};
  auto rs = row_records(Row{iolab::results::Op::Read, "none", Column::Warm}, sizes, [](double s) {
    return std::vector<iolab::testing::SyntheticCandidate>{{"a", {}, 1000.0}, {"b", {}, s <= 512 ? 980.0 : 1020.0}};
  });
  // Other names: the synthetic records carry no cache state, and the fits are per method.
  auto told = row_records(Row{iolab::results::Op::Write, "none", Column::Buffered}, sizes, [](double s) {
    return std::vector<iolab::testing::SyntheticCandidate>{{"c", {}, mib_s(s, 1e-6, 0.5e-9)}, {"d", {}, mib_s(s, 100e-9, 1e-9)}};
  });
  rs.insert(rs.end(), told.begin(), told.end());
  const auto checks = iolab::report::check_crossovers(iolab::report::fit_cost_model(rs),
                                                      iolab::decision::decision_from_records(rs), rs);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].row, "read|none|warm");
  EXPECT_EQ(checks[0].below, "a");
  EXPECT_EQ(checks[0].above, "b");
  EXPECT_FALSE(checks[0].told_apart);
  EXPECT_EQ(checks[1].row, "write|none|buffered");
  EXPECT_TRUE(checks[1].told_apart);
  EXPECT_TRUE(checks[1].between);
  const std::string text = iolab::report::crossover_check_text(checks);
  EXPECT_NE(text.find("1 of 1 pick changes the rounds told apart"), std::string::npos) << text;
  EXPECT_NE(text.find("1 more between picks the rounds did not tell apart"), std::string::npos) << text;
  EXPECT_NE(text.find("[not told apart]"), std::string::npos) << text;
  const auto j = iolab::report::to_json(checks);
  EXPECT_EQ(j["changes"], 2);
  EXPECT_EQ(j["told_apart"], 1);
  EXPECT_EQ(j["between"], 1);
  EXPECT_EQ(j["share_between"], 1.0);
  EXPECT_EQ(j["rows"][0]["told_apart"], false);
}

TEST(ModelCheck, ARowThatKeepsItsPickHasNothingToCheck) {
  auto rs = row_records(Row{iolab::results::Op::Read, "none", Column::Warm}, {512, 2048, 8192}, [](double s) {
    return std::vector<iolab::testing::SyntheticCandidate>{{"a", {}, mib_s(s, 100e-9, 0.5e-9)}, {"b", {}, mib_s(s, 1e-6, 1e-9)}};
  });
  const auto checks = iolab::report::check_crossovers(iolab::report::fit_cost_model(rs),
                                                      iolab::decision::decision_from_records(rs), rs);
  EXPECT_TRUE(checks.empty());
  EXPECT_NE(iolab::report::crossover_check_text(checks).find("no row's pick changes"), std::string::npos);
}

}  // namespace model_check_test
