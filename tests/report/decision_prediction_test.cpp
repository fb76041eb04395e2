// The cost model between the decision's measured sizes (issue 42 item 5):
// synthetic decisions (the real selection over seeded rounds) of two methods
// whose costs cross at a known size, predicted at the grid sizes between.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "chromium.h"
#include "decision/synthetic_decision.h"
#include "decision_rows.h"
#include "iolab/base/units.h"
#include "iolab/report/decision_prediction.h"
#include "iolab/report/decision_text.h"
#include "iolab/report/html.h"
#include "iolab/testing/test_dir.h"
#include "synthetic.h"

// Named: the report tests are a unity build.
namespace decision_prediction_test {

using iolab::decision::Column;
using iolab::decision::Condition;
using iolab::decision::Row;
using iolab::testing::SyntheticCandidate;

const Row kRead{iolab::results::Op::Read, "none", Column::Warm};

using iolab::testing::mib_s;

std::vector<iolab::results::Result> row_records(const Row& row, const std::vector<std::uint64_t>& sizes,
                                                const std::function<std::vector<iolab::testing::SyntheticCandidate>(double)>& cands) {
  return iolab::testing::row_records(row, sizes, cands, 11);
}

// a: 1 µs per call, 2 GB/s; b: 100 ns per call, 1 GB/s: b is cheaper below
// 1800 B, a above. c is slow and measured only at the two smallest sizes.
std::vector<iolab::results::Result> crossing_records() {
  return row_records(kRead, {32, 512, 8192, 131072}, [](double s) {
    std::vector<SyntheticCandidate> v{{"a", {}, mib_s(s, 1e-6, 0.5e-9)}, {"b", {}, mib_s(s, 100e-9, 1e-9)}};
    if (s < 1000) v.push_back({"c", {}, mib_s(s, 5e-6, 2e-9)});
    return v;
  });
}

const iolab::report::PredictedCondition* at(const iolab::report::DecisionPredictions& p, std::uint64_t size) {
  for (const auto& x : p.predicted)
    if (x.condition.size == size) return &x;
  return nullptr;
}

TEST(DecisionPrediction, PredictsThePickOnEachSideOfTheCrossover) {
  const auto rs = crossing_records();
  const auto d = iolab::decision::decision_from_records(rs);
  const auto p = iolab::report::predict_decision(d, rs);
  // The grid sizes strictly between measured ones, none of them measured.
  ASSERT_EQ(p.predicted.size(), 3u);
  for (std::uint64_t size : {128u, 2048u, 32768u}) ASSERT_NE(at(p, size), nullptr) << size;
  ASSERT_EQ(at(p, 512), nullptr);
  const auto* below = at(p, 128);
  EXPECT_EQ(below->from, 32u);
  EXPECT_EQ(below->to, 512u);
  EXPECT_EQ(below->model.ranked.front().label, "b");
  // At 128 B: a costs 1e-6/128 + 0.5e-9 s per byte, b 100e-9/128 + 1e-9.
  EXPECT_NEAR(below->model.pick_over_next, (1e-6 / 128 + 0.5e-9) / (100e-9 / 128 + 1e-9), 0.05);
  ASSERT_TRUE(below->model.resample_share);
  EXPECT_GE(*below->model.resample_share, 0.95);
  EXPECT_EQ(below->model.resamples, 200u);
  // c was measured at 32 B and 512 B only: two sizes, no fit.
  ASSERT_EQ(below->left_out.size(), 1u);
  EXPECT_EQ(below->left_out[0].label, "c");
  EXPECT_NE(below->left_out[0].why.find("no fit"), std::string::npos);
  for (std::uint64_t size : {2048u, 32768u}) {
    const auto* above = at(p, size);
    EXPECT_EQ(above->model.ranked.front().label, "a") << size;
    ASSERT_TRUE(above->model.resample_share);
    EXPECT_GE(*above->model.resample_share, 0.9) << size;
  }
  // Between 512 B and 8 KiB, c is named as not measured at 8 KiB.
  ASSERT_EQ(at(p, 2048)->left_out.size(), 1u);
  EXPECT_EQ(at(p, 2048)->left_out[0].why, "not measured at 8 KiB");
  EXPECT_TRUE(at(p, 32768)->left_out.empty());
  // The model agrees with every measured pick of a row it follows.
  ASSERT_EQ(p.checks.size(), 4u);
  for (const auto& k : p.checks) EXPECT_TRUE(k.agrees) << d.conditions[k.condition].condition.key();
}

TEST(DecisionPrediction, FewerThanTwoRankedCandidatesPredictNothing) {
  // Only a has a fit: b is measured at two sizes.
  auto rs = row_records(kRead, {512, 8192, 131072}, [](double s) {
    std::vector<SyntheticCandidate> v{{"a", {}, mib_s(s, 1e-6, 0.5e-9)}};
    if (s < 100000) v.push_back({"b", {}, mib_s(s, 100e-9, 1e-9)});
    return v;
  });
  const auto d = iolab::decision::decision_from_records(rs);
  EXPECT_TRUE(iolab::report::predict_decision(d, rs).predicted.empty());
}

TEST(DecisionPrediction, TheJsonAppendsPredictedConditionsNeverCountedAsMeasured) {
  const auto rs = crossing_records();
  const auto d = iolab::decision::decision_from_records(rs);
  const auto p = iolab::report::predict_decision(d, rs);
  nlohmann::json j = iolab::decision::to_json(d);
  iolab::report::add_predictions(j, p);
  EXPECT_EQ(j["format_version"], 5);
  std::size_t measured = 0, predicted = 0;
  for (const auto& c : j["conditions"]) {
    if (c["stop"] == "selected" || c["stop"] == "budget") {
      ++measured;
      EXPECT_FALSE(c["predicted"].get<bool>()) << c.dump();
      ASSERT_TRUE(c.contains("model_check")) << c.dump();
      EXPECT_TRUE(c["model_check"]["agrees"].get<bool>()) << c.dump();
      continue;
    }
    ASSERT_EQ(c["stop"], "predicted") << c.dump();
    ++predicted;
    EXPECT_TRUE(c["predicted"].get<bool>());
    for (const char* k : {"op", "size", "flush", "column", "pick", "within", "seconds_per_byte", "resample_share",
                          "pick_over_next", "between", "left_out"})
      EXPECT_TRUE(c.contains(k)) << k << ": " << c.dump();
    EXPECT_EQ(c["within"][0], c["pick"]);
    EXPECT_TRUE(c["seconds_per_byte"].contains("a") && c["seconds_per_byte"].contains("b")) << c.dump();
  }
  EXPECT_EQ(measured, 4u);
  EXPECT_EQ(predicted, 3u);
  EXPECT_EQ(j["conditions"][4]["size"], 128);
  EXPECT_EQ(j["conditions"][4]["pick"], "b");
  EXPECT_EQ(j["conditions"][4]["column"], "warm");
}

TEST(DecisionPrediction, TheConsoleMapMarksPredictedCellsAndExplainsThem) {
  const auto rs = crossing_records();
  const auto d = iolab::decision::decision_from_records(rs);
  const auto p = iolab::report::predict_decision(d, rs);
  const std::string plain = iolab::report::format_text(d, false);
  EXPECT_EQ(plain.find("(b)"), std::string::npos) << "without predictions the map is as measured";
  const std::string text = iolab::report::format_text(d, true, &p);
  EXPECT_NE(text.find("128 B"), std::string::npos) << text;
  EXPECT_NE(text.find("(b)"), std::string::npos) << text;
  EXPECT_NE(text.find("(a)"), std::string::npos) << text;
  EXPECT_NE(text.find(iolab::report::kPredictedLegend), std::string::npos) << text;
  EXPECT_NE(text.find("4 measured conditions"), std::string::npos) << "predictions are not counted: " << text;
  EXPECT_NE(text.find("read - warm at 128 B: predicted b, between the measured 32 B and 512 B; b "), std::string::npos)
      << text;
  EXPECT_NE(text.find("of 200 resamples"), std::string::npos) << text;
  EXPECT_NE(text.find("c: left out: not measured at 8 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("it picks otherwise at 0 of 4 conditions"), std::string::npos) << text;
}

// A bump no line of calls and bytes follows: c is fast at 512 B only, so
// the pick changes twice and the model, asked at the measured sizes, cannot
// agree with all of them. Where it picks otherwise, that is said; the
// measurement stands.
TEST(DecisionPrediction, SaysWhereTheModelPicksOtherwiseAtAMeasuredSize) {
  auto rs = row_records(Row{iolab::results::Op::Write, "none", Column::Buffered}, {32, 128, 512, 2048, 8192}, [](double s) {
    return std::vector<SyntheticCandidate>{{"c", {}, s == 512 ? 3000.0 : 1000.0}, {"d", {}, 2000.0}};
  });
  const auto d = iolab::decision::decision_from_records(rs);
  const auto p = iolab::report::predict_decision(d, rs);
  ASSERT_EQ(p.checks.size(), 5u);
  const iolab::report::ModelCheck* other = nullptr;
  for (const auto& k : p.checks)
    if (!k.agrees && !other) other = &k;
  ASSERT_NE(other, nullptr) << "one smooth model cannot follow d, d, c, d, d";
  const auto& c = d.conditions[other->condition];
  const std::string measured = c.candidates[*c.pick].label, model = other->model.ranked.front().label;
  EXPECT_NE(measured, model);
  const std::string text = iolab::report::format_text(d, true, &p);
  EXPECT_NE(text.find("write none buffered at " + iolab::exact_size(c.condition.size) + ": measured " + measured +
                      ", the model picks " + model),
            std::string::npos)
      << text;
  nlohmann::json j = iolab::decision::to_json(d);
  iolab::report::add_predictions(j, p);
  EXPECT_EQ(j["conditions"][other->condition]["model_check"]["agrees"], false);
  EXPECT_EQ(j["conditions"][other->condition]["model_check"]["pick"], model);
  EXPECT_EQ(j["conditions"][other->condition]["pick"], measured) << "the measurement stands";
}

// Where the pick changes (b at 512 B, a at 8 KiB) and the model's crossover
// (1800 B) lies between: one more condition at the grid size nearest it.
TEST(DecisionPrediction, AsksForAConditionWhereTheModelPutsTheCrossing) {
  const auto extra = iolab::report::crossing_conditions(crossing_records());
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0].condition.key(), "read|2048|none|warm");
  EXPECT_EQ(extra[0].why.rfind("where the model puts b/a crossing (1.", 0), 0u) << extra[0].why;
  // A row that keeps its pick asks for nothing.
  auto same = row_records(kRead, {512, 8192, 131072}, [](double s) {
    return std::vector<SyntheticCandidate>{{"a", {}, mib_s(s, 100e-9, 0.5e-9)}, {"b", {}, mib_s(s, 1e-6, 1e-9)}};
  });
  EXPECT_TRUE(iolab::report::crossing_conditions(same).empty());
}

iolab::results::Results crossing_run() {
  iolab::results::Results run = iolab::testing::realistic();
  run.results = crossing_records();
  return run;
}

TEST(DecisionPrediction, TheHtmlMapDrawsPredictedCellsApart) {
  const std::string page = iolab::report::render_html_report({crossing_run()});
  const std::size_t map = page.find("<table class=\"decision map\">");
  ASSERT_NE(map, std::string::npos);
  const std::string table = page.substr(map, page.find("</table>", map) - map);
  EXPECT_NE(table.find("<th>128 B</th>"), std::string::npos) << table;
  EXPECT_NE(table.find("class=\"predicted\""), std::string::npos) << table;
  EXPECT_NE(table.find("title=\"predicted by the model, not measured: b at 128 B"), std::string::npos) << table;
  EXPECT_NE(page.find("predicted by the cost model fitted on this decision"), std::string::npos);
}

TEST(DecisionPredictionInChromium, ThePredictedCellsDrawWithTheirHover) {
  if (iolab::testing::chromium_path().empty()) GTEST_SKIP() << "chromium is not installed";
  iolab::testing::TestDir dir;
  const std::filesystem::path page = dir.path() / "predicted.html";
  iolab::report::write_html_report({crossing_run()}, page);
  const auto run = iolab::testing::run_chromium(page, "--dump-dom");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err.find(":CONSOLE("), std::string::npos) << run.err;
  const std::size_t map = run.out.find("class=\"decision map\"");
  ASSERT_NE(map, std::string::npos);
  const std::string table = run.out.substr(map, run.out.find("</table>", map) - map);
  std::size_t predicted = 0;
  for (std::size_t at = table.find("class=\"predicted\""); at != std::string::npos;
       at = table.find("class=\"predicted\"", at + 1))
    ++predicted;
  EXPECT_EQ(predicted, 3u) << table;
  EXPECT_NE(table.find("title=\"predicted by the model"), std::string::npos) << table;
}

}  // namespace decision_prediction_test
