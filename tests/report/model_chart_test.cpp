// The cost model's line on the report's sweep charts (issue 42 item 4):
// each point of a block-size sweep carries the rate the model gives for the
// record's own counts, drawn dashed per method through the measured points.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "internal/report/families.h"
#include "internal/report/model.h"
#include "synthetic.h"

// Named: the report tests are a unity build.
namespace model_chart_test {

using namespace iolab::report;
using iolab::testing::kMiB;

// A warm read of 4 MiB in `block`-byte calls costing `call_s` per call and
// `byte_s` per byte, as `iolab run` records it.
iolab::results::Result sweep_point(const std::string& method, std::uint64_t block, double call_s, double byte_s) {
  iolab::testing::Spec s;
  s.method = method;
  s.experiment = "read " + std::to_string(block) + " B calls";
  s.block = block;
  s.file = 4u << 20;
  const double pass_s = static_cast<double>(s.file / block) * call_s + static_cast<double>(s.file) * byte_s;
  s.mib_s = static_cast<double>(s.file) / kMiB / pass_s;
  return iolab::testing::make(s);
}

double true_rate(std::uint64_t block, double call_s, double byte_s) {
  const double file = 4u << 20;
  return file / kMiB / (file / static_cast<double>(block) * call_s + file * byte_s);
}

TEST(ModelChart, TheSweepChartDrawsTheModelThroughTheMeasuredPoints) {
  iolab::results::Results run;
  run.environment = iolab::testing::environment();
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    run.results.push_back(sweep_point("pread", block, 1e-6, 0.5e-9));
    run.results.push_back(sweep_point("stdio", block, 100e-9, 1e-9));
  }
  // One record the model cannot cover: a method measured at one size only.
  run.results.push_back(sweep_point("mmap", 4096, 1e-6, 1e-9));
  // The model's points point into the runs: they outlive it (a temporary list would not).
  const std::vector<iolab::results::Results> runs{run};
  ReportModel model = build_model(runs, {});
  // The 4 KiB experiment has a third contender (mmap): a family of its own.
  const FamilySection* sweep = nullptr;
  std::size_t modeled = 0;
  for (const auto& suite : model.suites)
    for (const auto& f : suite.families) {
      if (f.family.axis == Axis::BlockSize && (!sweep || f.points.size() > sweep->points.size())) sweep = &f;
      for (const auto& p : f.points) {
        // A line needs a block-size axis: the 4 KiB family is a bar chart of three methods.
        const auto block = p.series == "mmap" || f.family.axis != Axis::BlockSize
                               ? 0
                               : f.family.points.at(static_cast<std::size_t>(&p - f.points.data())).result->block_size;
        if (block == 0) {
          EXPECT_FALSE(p.model);
          continue;
        }
        ASSERT_TRUE(p.model) << p.series << " " << block;
        const double want = p.series == "pread" ? true_rate(block, 1e-6, 0.5e-9) : true_rate(block, 100e-9, 1e-9);
        EXPECT_NEAR(*p.model, want, 0.01 * want) << p.series << " " << block;
        EXPECT_NEAR(*p.model, p.rate, 0.01 * p.rate) << p.series << " " << block;  // exact costs: through the points
        ++modeled;
      }
    }
  EXPECT_EQ(modeled, 14u);  // 7 sizes x 2 methods
  ASSERT_NE(sweep, nullptr);

  const nlohmann::json spec = nlohmann::json::parse(sweep->chart_json);
  const nlohmann::json& throughput = spec["vconcat"][0];
  EXPECT_NE(throughput["title"].get<std::string>().find("dashed: the cost model"), std::string::npos);
  const nlohmann::json* line = nullptr;
  for (const auto& layer : throughput["layer"])
    if (layer["encoding"]["y"]["field"] == "model") line = &layer;
  ASSERT_NE(line, nullptr) << throughput.dump();
  EXPECT_EQ((*line)["mark"]["strokeDash"], nlohmann::json({5, 4}));
  EXPECT_EQ((*line)["encoding"]["color"]["field"], "series");
  std::size_t rows_with_model = 0;
  for (const auto& row : spec["data"]["values"]) rows_with_model += row["model"].is_number();
  EXPECT_EQ(rows_with_model, sweep->points.size());
  EXPECT_EQ(rows_with_model, 14u);
}

TEST(ModelChart, NoSweepNoLine) {
  iolab::results::Results run;
  run.environment = iolab::testing::environment();
  run.results.push_back(sweep_point("pread", 4096, 1e-6, 0.5e-9));
  run.results.push_back(sweep_point("pread", 65536, 1e-6, 0.5e-9));  // two sizes: no fit
  // The model's points point into the runs: they outlive it (a temporary list would not).
  const std::vector<iolab::results::Results> runs{run};
  ReportModel model = build_model(runs, {});
  for (const auto& suite : model.suites)
    for (const auto& f : suite.families) {
      for (const auto& p : f.points) EXPECT_FALSE(p.model);
      EXPECT_EQ(f.chart_json.find("strokeDash\":[5,4]"), std::string::npos);
      EXPECT_EQ(f.chart_json.find("dashed: the cost model"), std::string::npos);
    }
}

}  // namespace model_chart_test
