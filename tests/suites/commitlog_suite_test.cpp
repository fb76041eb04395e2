// The commitlog suite at the tiny scale: every record verified or skipped
// with a reason, records that tell apart, nothing left in the scratch dir,
// and the per-second series through the results JSON and back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {

harness::RunConfig one_repetition_config() {
  harness::RunConfig config;
  config.reps = 1;
  config.warmup = 0;
  config.min_time = 0;
  return config;
}

class CommitLogSuiteTiny : public ::testing::Test {
 protected:
  // The suite runs once for every test here (a few seconds).
  static void SetUpTestSuite() {
    scratch_ = new io::ScratchDir("/tmp");
    harness::Runner runner(one_repetition_config(), *scratch_);
    SuiteOptions options;
    options.scale = Scale::Tiny;
    results_ = new std::vector<harness::Result>(find_suite("commitlog").run(runner, options));
    leftovers_ = new std::vector<std::string>;
    for (const auto& e : std::filesystem::directory_iterator(scratch_->path()))
      leftovers_->push_back(e.path().filename().string());
  }
  static void TearDownTestSuite() {
    delete results_;
    delete leftovers_;
    delete scratch_;
  }
  static io::ScratchDir* scratch_;
  static std::vector<harness::Result>* results_;
  static std::vector<std::string>* leftovers_;
};
io::ScratchDir* CommitLogSuiteTiny::scratch_ = nullptr;
std::vector<harness::Result>* CommitLogSuiteTiny::results_ = nullptr;
std::vector<std::string>* CommitLogSuiteTiny::leftovers_ = nullptr;

bool is_run(const harness::Result& r) { return !r.skipped && r.op == harness::Op::Write; }

TEST_F(CommitLogSuiteTiny, EveryRecordIsVerifiedOrSkippedWithAReason) {
  ASSERT_FALSE(results_->empty());
  std::set<std::string> designs;
  for (const auto& r : *results_) {
    SCOPED_TRACE(r.experiment + " / " + r.method);
    EXPECT_EQ(r.suite, "commitlog");
    if (r.skipped) {
      EXPECT_FALSE(r.skipped->empty());
      continue;
    }
    EXPECT_TRUE(r.verified);
    EXPECT_GT(r.ops, 0u);
    EXPECT_GT(r.bytes, 0u);
    ASSERT_EQ(r.samples_s.size(), r.reps);
    if (is_run(r)) {
      designs.insert(r.method);
      ASSERT_TRUE(r.latency_ns.has_value());
      EXPECT_EQ(r.latency_ns->samples, r.ops) << "every acknowledged message's latency";
      EXPECT_EQ(r.extra.at("messages").get<std::uint64_t>(), r.ops);
      EXPECT_EQ(r.bytes, r.ops * r.block_size) << "bytes are the acknowledged messages' bodies";
      EXPECT_TRUE(r.extra.contains("acknowledged"));
      EXPECT_TRUE(r.extra.contains("slow_appends"));
    }
  }
  // Every design ran (tiny: 1 KiB each).
  EXPECT_EQ(designs, (std::set<std::string>{"kafka", "rocketmq", "rocketmq-transient", "qmq", "activemq", "group-commit"}));
}

TEST_F(CommitLogSuiteTiny, RecordsTellApart) {
  std::set<std::tuple<std::string, std::string, std::uint64_t, unsigned, std::string, std::string>> seen;
  for (const auto& r : *results_) {
    auto key = std::make_tuple(r.experiment, r.method, r.block_size, r.threads, harness::to_string(r.sync),
                               harness::cache_name(r));
    EXPECT_TRUE(seen.insert(key).second) << "two records alike: " << r.experiment << " / " << r.method;
  }
}

TEST_F(CommitLogSuiteTiny, FlushPoliciesFollowTheDesigns) {
  bool saw_off = false, saw_durable = false;
  for (const auto& r : *results_) {
    if (!is_run(r)) continue;
    if (r.method == "group-commit") {
      // Its acknowledgement waits for the sync: every sampled message was durable at once.
      EXPECT_EQ(r.sync.schedule, harness::FlushSchedule::EveryWrite);
      ASSERT_TRUE(r.extra.at("time_to_durable").is_object());
      EXPECT_GT(r.extra.at("time_to_durable").at("samples").get<std::uint64_t>(), 0u);
      EXPECT_GT(r.extra.at("flushes").get<std::uint64_t>(), 0u);
      EXPECT_EQ(r.extra.at("durable_at_run_end").get<double>(), 1.0) << "acknowledged means synced";
      saw_durable = true;
    }
    if (r.method == "activemq") {
      EXPECT_FALSE(r.sync.flushes());
    }
    if (r.experiment.find("flush thread on and off") != std::string::npos && !r.sync.flushes()) {
      // No sync during the run; close's final one comes after it.
      EXPECT_EQ(r.extra.at("flushes").get<std::uint64_t>(), 0u) << r.method << " without its flush thread";
      EXPECT_EQ(r.extra.at("durable_at_run_end").get<double>(), 0.0);
      saw_off = true;
    }
  }
  EXPECT_TRUE(saw_off);
  EXPECT_TRUE(saw_durable);
}

TEST_F(CommitLogSuiteTiny, PerSecondSeriesAddsUpAndSurvivesTheResultsFile) {
  harness::Results written;
  written.results = *results_;
  auto file = scratch_->path() / "results.json";
  harness::write_json(written, file);
  harness::Results back = harness::read_results(file);
  std::filesystem::remove(file);
  ASSERT_EQ(back.results.size(), results_->size());
  for (std::size_t i = 0; i < results_->size(); ++i) {
    const auto& r = (*results_)[i];
    if (!is_run(r)) continue;
    SCOPED_TRACE(r.experiment + " / " + r.method);
    const auto& series = r.extra.at("per_second");
    ASSERT_TRUE(series.is_array());
    ASSERT_FALSE(series.empty());
    std::uint64_t messages = 0;
    for (const auto& s : series) messages += s.at("messages").get<std::uint64_t>();
    EXPECT_EQ(messages, r.ops) << "each acknowledged message in exactly one second";
    EXPECT_EQ(back.results[i].extra.at("per_second"), series);
  }
}

TEST_F(CommitLogSuiteTiny, LeavesNothingInTheScratchDir) { EXPECT_EQ(*leftovers_, std::vector<std::string>{}); }

TEST(CommitLogSuite, RunsByNameOutsideTheSeedsGroup) {
  const Suite& s = find_suite("commitlog");
  EXPECT_FALSE(s.description().empty());
  for (const Suite* seed : seed_suites()) EXPECT_NE(seed->name(), "commitlog");
}

}  // namespace
}  // namespace iolab::suites
