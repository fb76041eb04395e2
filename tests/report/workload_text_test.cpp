// A decision over a workload (`recommend --trace`) rebuilt from its records
// and shown: the names scripts read in its JSON (pick, within with the pick
// first, stop, methods with ops_per_s and verified, or skipped), the
// console's table, and records of a condition and a workload kept apart.
#include <gtest/gtest.h>

#include "decision/synthetic_decision.h"
#include "iolab/decision/verdict.h"
#include "iolab/report/html.h"
#include "iolab/report/workload_text.h"

namespace iolab::report {
namespace {

namespace k = decision::keys;

// A workload's records: the synthetic condition's, named by a workload, each
// with the per-kind latency and counters a replay record carries.
std::vector<results::Result> workload_records(const std::vector<testing::SyntheticCandidate>& cands,
                                              std::uint64_t seed) {
  decision::Condition c;
  auto records = testing::synthetic_condition(c, cands, 0.02, seed);
  for (auto& r : records) {
    r.extra.erase(k::kCondition);
    r.extra[k::kWorkload] = "app.iotrace";
    r.suite = "replay";
    r.op = results::Op::Replay;
    r.ops = 1000;  // a pass of the trace: 1000 operations moving 1 GiB
    r.queue_depth = r.method == "pread" ? 1u : 3u;  // the requests each kept in flight
    r.user_s = 0.001;
    r.sys_s = 0.002;
    r.extra["latency_by_kind"] = {{"write", {{"p50_ns", 2000}, {"p99_ns", 9000}, {"samples", 900}}},
                                  {"fsync", {{"p50_ns", 1500000}, {"p99_ns", 4000000}, {"samples", 100}}}};
  }
  return records;
}

TEST(WorkloadVerdict, ItsJsonGivesPickWithinStopAndEveryMethod) {
  auto records = workload_records({{"pread", {}, 400}, {"mmap", {}, 200}, {"stdio", {}, 100}}, 3);
  // A method that could not replay the trace: skipped, with the reason.
  results::Result skipped = records.back();
  skipped.method = "direct";
  skipped.skipped = "op 3 (write at 100, 50 bytes) is not 4096-aligned";
  skipped.samples_s.clear();
  skipped.verified = false;
  skipped.extra[k::kCandidate] = "direct";
  skipped.extra[k::kIndex] = 3;
  records.push_back(skipped);

  const decision::Decision d = decision::decision_from_records(records);
  ASSERT_TRUE(d.conditions.empty()) << "a workload is not a condition of the design";
  ASSERT_EQ(d.workloads.size(), 1u);
  const auto& w = d.workloads[0];
  EXPECT_EQ(w.workload, "app.iotrace");
  EXPECT_TRUE(w.replay_agrees);

  const nlohmann::json j = workload_json(w, records);
  EXPECT_EQ(j["trace"], "app.iotrace");
  EXPECT_EQ(j["pick"], "pread") << j.dump(1);
  ASSERT_TRUE(j["within"].is_array());
  EXPECT_EQ(j["within"][0], "pread") << "the pick first";
  EXPECT_EQ(j["stop"], "selected");
  ASSERT_EQ(j["methods"].size(), 4u);
  for (const auto& m : j["methods"]) {
    ASSERT_TRUE(m.contains("method"));
    if (m["method"] == "direct") {
      EXPECT_EQ(m["skipped"], "op 3 (write at 100, 50 bytes) is not 4096-aligned");
      EXPECT_FALSE(m.contains("ops_per_s"));
      continue;
    }
    EXPECT_TRUE(m["verified"].get<bool>());
    EXPECT_EQ(m["queue_depth"].get<unsigned>(), m["method"] == "pread" ? 1u : 3u) << m.dump();
    EXPECT_GT(m["ops_per_s"].get<double>(), 0);
    EXPECT_NEAR(m["cpu_us_per_op"].get<double>(), 3.0, 1e-9) << "(user + system) / operations";
    EXPECT_EQ(m["latency_by_kind"]["fsync"]["p99_ns"], 4000000);
  }
  // ops/s is the selection's rate in operations: 1000 per GiB moved.
  const double pread_ops = j["methods"][0]["ops_per_s"].get<double>();
  EXPECT_NEAR(pread_ops, 400.0 * (1 << 20) * 1000 / (1 << 30), 0.05 * pread_ops);
}

TEST(WorkloadVerdict, TheConsoleNamesThePickTheGuaranteeAndEachKindsLatency) {
  const auto records = workload_records({{"pread", {}, 400}, {"mmap", {}, 100}}, 5);
  const decision::Decision d = decision::decision_from_records(records);
  ASSERT_EQ(d.workloads.size(), 1u);
  const std::string text = format_workload_text(d.workloads[0], records);
  EXPECT_NE(text.find("trace app.iotrace: use pread"), std::string::npos) << text;
  EXPECT_NE(text.find("with probability 95% the pick is within 1.05x of the best method for this trace"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fsync p50/p99"), std::string::npos) << text;
  EXPECT_NE(text.find(" qd "), std::string::npos) << "the table says each method's queue depth\n" << text;
  EXPECT_NE(text.find("1.5 ms / 4.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("out after"), std::string::npos) << "the loser says when it was ruled out\n" << text;
}

TEST(WorkloadVerdict, ConditionsAndWorkloadsInOneFileStayApart) {
  decision::Condition c;
  c.row.op = results::Op::Read;
  c.row.column = decision::Column::Warm;
  c.size = 4096;
  auto records = testing::synthetic_condition(c, {{"pread", {}, 400}, {"mmap", {}, 100}}, 0.02, 1);
  const auto workload = workload_records({{"pread", {}, 400}, {"mmap", {}, 100}}, 2);
  records.insert(records.end(), workload.begin(), workload.end());
  ASSERT_TRUE(decision::holds_decision(workload));
  const decision::Decision d = decision::decision_from_records(records);
  EXPECT_EQ(d.conditions.size(), 1u);
  EXPECT_EQ(d.workloads.size(), 1u);
}

// The HTML report: a section for the replayed trace, its timeline chart
// (operations over time by kind, sizes), and the decision's pick and rows.
TEST(WorkloadVerdict, TheReportShowsTheTracesTimelineAndItsDecision) {
  results::Results run;
  run.results = workload_records({{"pread", {}, 400}, {"mmap", {}, 100}}, 7);
  for (auto& r : run.results) {
    r.experiment = "app.iotrace";
    r.extra["trace_timeline"] = {{"by", "time"}, {"span", 2000000}, {"buckets", 2},
                                 {"kinds", {{"write", {{"ops", {3, 1}}, {"bytes", {12288, 4096}}}}}},
                                 {"sizes", {{"write", {{"4096", 4}}}}}};
  }
  const std::string html = render_html_report({run}, ReportOptions{});
  EXPECT_NE(html.find("Replayed traces: which method serves this program"), std::string::npos);
  EXPECT_NE(html.find("Trace app.iotrace"), std::string::npos);
  EXPECT_NE(html.find("id=\"trace-0-0\""), std::string::npos) << "the timeline's chart";
  EXPECT_NE(html.find("Operations over the trace's run, by kind"), std::string::npos);
  EXPECT_NE(html.find("trace app.iotrace: use pread"), std::string::npos);
  EXPECT_NE(html.find("pread (the pick)"), std::string::npos);
  EXPECT_NE(html.find("<th>queue depth</th>"), std::string::npos) << "each method's queue depth";
  EXPECT_NE(html.find("This run decided for replayed traces only"), std::string::npos);
}

}  // namespace
}  // namespace iolab::report
