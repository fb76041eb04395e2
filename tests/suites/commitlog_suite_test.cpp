// The commitlog suite at the tiny scale: every record verified or skipped
// with a reason, records that tell apart, nothing left in the scratch dir,
// and the per-second series through the results JSON and back. Then the
// engine adapters on their own: a run's record has the engine's
// repetitions and spread, no clock per message in its timed passes and a
// latency that says its loop; a catch-up gets the engine's cache rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"
#include "internal/suites/commitlog_workload.h"

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
    results_ = new std::vector<results::Result>(find_suite("commitlog").run(runner, options));
    leftovers_ = new std::vector<std::string>;
    for (const auto& e : std::filesystem::directory_iterator(scratch_->path()))
      if (e.path().filename() != io::kScratchListName) leftovers_->push_back(e.path().filename().string());
  }
  static void TearDownTestSuite() {
    delete results_;
    delete leftovers_;
    delete scratch_;
  }
  static io::ScratchDir* scratch_;
  static std::vector<results::Result>* results_;
  static std::vector<std::string>* leftovers_;
};
io::ScratchDir* CommitLogSuiteTiny::scratch_ = nullptr;
std::vector<results::Result>* CommitLogSuiteTiny::results_ = nullptr;
std::vector<std::string>* CommitLogSuiteTiny::leftovers_ = nullptr;

bool is_run(const results::Result& r) { return !r.skipped && r.op == results::Op::Write; }

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
      // The engine's figures: its repetitions and the spread of its passes.
      EXPECT_EQ(r.reps, 1u);
      EXPECT_TRUE(r.pass_s.has_value());
      EXPECT_EQ(r.extra.at("timed_pass_clock_reads").get<std::uint64_t>(), 0u) << "no clock per message";
      EXPECT_TRUE(r.extra.at("thread_cpu_s").contains("log-producer")) << "each kind of thread's CPU";
      EXPECT_EQ(r.extra.at("latency_loop").get<std::string>(), "closed");
      EXPECT_NE(r.extra.at("latency_measures").get<std::string>().find("coordinated omission"), std::string::npos);
    } else {
      EXPECT_TRUE(r.pass_s.has_value()) << "catch-ups are timed by the engine too";
    }
  }
  // Every design ran (tiny: 1 KiB each).
  EXPECT_EQ(designs, (std::set<std::string>{"kafka", "rocketmq", "rocketmq-transient", "qmq", "activemq", "group-commit"}));
}

// Issue 28: a producer-only row per design and size, and the consumer's rows apart.
TEST_F(CommitLogSuiteTiny, DesignRowsRunWithAndWithoutTheConsumer) {
  std::set<std::string> alone, along;
  for (const auto& r : *results_) {
    if (!is_run(r) || !r.experiment.starts_with("designs")) continue;
    SCOPED_TRACE(r.experiment + " / " + r.method);
    if (r.experiment.find("no consumer") != std::string::npos) {
      EXPECT_EQ(r.extra.at("consumed").get<std::uint64_t>(), 0u);
      EXPECT_FALSE(r.extra.at("consumer").get<bool>());
      alone.insert(r.method);
    } else {
      EXPECT_EQ(r.extra.at("consumed").get<std::uint64_t>(), r.ops);
      along.insert(r.method);
    }
  }
  EXPECT_EQ(alone.size(), 6u);
  EXPECT_EQ(along, alone);
}

TEST_F(CommitLogSuiteTiny, RecordsTellApart) {
  std::set<std::tuple<std::string, std::string, std::uint64_t, unsigned, std::string, std::string>> seen;
  for (const auto& r : *results_) {
    auto key = std::make_tuple(r.experiment, r.method, r.block_size, r.threads, io::to_string(r.sync),
                               results::cache_name(r));
    EXPECT_TRUE(seen.insert(key).second) << "two records alike: " << r.experiment << " / " << r.method;
  }
}

// Issue 40 item 3: CPU per message of every thread of the log (the commit
// thread's pwrite is most of rocketmq-transient's) beside the producers' alone.
TEST_F(CommitLogSuiteTiny, CpuPerMessageCoversEveryThreadBesideTheProducers) {
  std::size_t runs = 0;
  for (const auto& r : *results_) {
    if (!is_run(r)) continue;
    SCOPED_TRACE(r.experiment + " / " + r.method);
    ++runs;
    ASSERT_TRUE(r.extra.contains("process_cpu_s"));
    EXPECT_GT(r.extra.at("process_cpu_s").get<double>(), 0);
    ASSERT_TRUE(r.extra.contains("messages_per_process_cpu_s"));
    EXPECT_NEAR(r.extra.at("messages_per_process_cpu_s").get<double>() * r.extra.at("process_cpu_s").get<double>(),
                r.extra.at("messages").get<double>(), 1e-6 * r.extra.at("messages").get<double>());
    EXPECT_TRUE(r.extra.contains("messages_per_producer_cpu_s"));
  }
  EXPECT_GT(runs, 0u);
}

TEST_F(CommitLogSuiteTiny, FlushPoliciesFollowTheDesigns) {
  bool saw_off = false, saw_durable = false;
  for (const auto& r : *results_) {
    if (!is_run(r)) continue;
    if (r.method == "group-commit") {
      // Its acknowledgement waits for the sync: every sampled message was durable at once.
      EXPECT_EQ(r.sync.schedule, io::FlushSchedule::EveryWrite);
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
  results::Results written;
  written.results = *results_;
  auto file = scratch_->path() / "results.json";
  results::write_json(written, file);
  results::Results back = results::read_results(file);
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

commitlog::TrafficConfig tiny_run(commitlog::Design d) {
  commitlog::TrafficConfig c;
  c.log.design = d;
  c.log.segment_size = 256 * 1024;
  c.message_size = 256;
  c.messages = 300;
  return c;
}

TEST(CommitLogOnTheEngine, ARunHasTheEnginesRepetitionsAndSpread) {
  io::ScratchDir scratch("/tmp");
  harness::RunConfig config = one_repetition_config();
  config.reps = 3;
  unsigned reported = 0;
  config.on_result = [&](const results::Result&) { ++reported; };
  harness::Runner runner(config, scratch);
  CommitLogRunWorkload workload(scratch, tiny_run(commitlog::Design::Qmq));
  results::Result labels;
  labels.suite = "commitlog";
  labels.method = "qmq";
  labels.op = results::Op::Write;
  results::Result r = runner.run(workload, labels);
  EXPECT_EQ(reported, 1u) << "on_result, as for every experiment";
  EXPECT_EQ(r.reps, 3u);
  EXPECT_EQ(r.samples_s.size(), 3u);
  ASSERT_TRUE(r.pass_s.has_value());
  EXPECT_EQ(r.ops, 300u);
  EXPECT_EQ(r.bytes, 300u * 256u);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(workload.timed_clock_reads(), 0u) << "three timed passes, no clock per message";
  ASSERT_TRUE(r.latency_ns.has_value());
  EXPECT_EQ(r.latency_ns->samples, 300u) << "the latency pass clocks every message";
  ASSERT_TRUE(workload.clocked_run().has_value());
  EXPECT_GE(workload.clocked_run()->message_clock_reads, 300u);
  EXPECT_EQ(r.extra.at("latency_loop").get<std::string>(), "closed");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch.path()), {}), 1) << "only its list, .iolab-scratch";
}

// The engine's ops are a repetition's; the record's messages and CPU per message are a pass's.
TEST(CommitLogOnTheEngine, RepetitionsOfSeveralPassesCountEachMessageOnce) {
  io::ScratchDir scratch("/tmp");
  harness::RunConfig config;
  config.reps = 2;
  config.warmup = 1;
  config.min_time = 0.002;  // a few passes of ~1 ms (how many is the machine's; the counts hold for any)
  config.max_time = 0.05;
  config.latency = false;
  harness::Runner runner(config, scratch);
  CommitLogRunWorkload workload(scratch, tiny_run(commitlog::Design::Kafka));
  results::Result r = runner.run(workload, results::Result{});
  ASSERT_GE(r.passes, 1u);
  EXPECT_EQ(r.ops, r.passes * 300u);
  EXPECT_EQ(r.extra.at("messages").get<std::uint64_t>(), 300u);
  EXPECT_FALSE(r.latency_ns.has_value()) << "--no-latency: no latency pass";
  EXPECT_EQ(workload.timed_clock_reads(), 0u);
}

TEST(CommitLogOnTheEngine, AnOpenLoopRecordSaysItsLatencyIsFromIntendedTimes) {
  io::ScratchDir scratch("/tmp");
  harness::Runner runner(one_repetition_config(), scratch);
  commitlog::TrafficConfig c = tiny_run(commitlog::Design::Kafka);
  c.loop = commitlog::Loop::Open;
  c.rate = 100'000;
  CommitLogRunWorkload workload(scratch, c);
  results::Result r = runner.run(workload, results::Result{});
  EXPECT_EQ(r.extra.at("latency_loop").get<std::string>(), "open");
  EXPECT_NE(r.extra.at("latency_measures").get<std::string>().find("intended send time"), std::string::npos);
  EXPECT_GT(workload.timed_clock_reads(), 0u) << "an open loop paces by the clock";
}

// The cache state of a catch-up is made and proven before every pass, the
// engine's way (the cache control replaced: no real page cache decides it).
struct CatchUpLog {
  io::ScratchDir scratch{"/tmp"};
  std::unique_ptr<LogDir> dir;
  std::vector<std::filesystem::path> logs;
  std::uint64_t messages = 0;
  CatchUpLog() {
    dir = std::make_unique<LogDir>(scratch);
    commitlog::TrafficConfig c = tiny_run(commitlog::Design::Qmq);
    c.consumer = false;
    commitlog::TrafficRun run(dir->path(), c, commitlog::Clocking::None);
    run.produce();
    messages = run.finish().messages;
    logs = logs_in(dir->path());
  }
};

SegmentCache stays_half_resident() {
  SegmentCache c;
  c.resident = [](const std::filesystem::path&) { return 0.5; };
  c.make_cold = [](const std::filesystem::path&) { return std::string("fadvise"); };
  c.make_warm = [](const std::filesystem::path&) {};
  return c;
}

TEST(CommitLogOnTheEngine, AColdCatchUpThatStaysResidentIsSkipped) {
  CatchUpLog log;
  harness::Runner runner(one_repetition_config(), log.scratch);
  CatchUpWorkload read(log.logs, commitlog::ReadPath::Pread, results::CacheState::Cold, log.messages,
                       stays_half_resident());
  results::Result labels;
  labels.cache = results::CacheState::Cold;
  results::Result r = runner.run(read, labels);
  ASSERT_TRUE(r.skipped.has_value()) << "never published as cold";
  EXPECT_NE(r.skipped->find("stayed resident"), std::string::npos) << *r.skipped;
  EXPECT_TRUE(r.samples_s.empty());
}

TEST(CommitLogOnTheEngine, AWarmCatchUpThatIsNotResidentIsWarned) {
  CatchUpLog log;
  harness::Runner runner(one_repetition_config(), log.scratch);
  CatchUpWorkload read(log.logs, commitlog::ReadPath::Mmap, results::CacheState::Warm, log.messages,
                       stays_half_resident());
  results::Result labels;
  labels.cache = results::CacheState::Warm;
  results::Result r = runner.run(read, labels);
  ASSERT_FALSE(r.skipped.has_value());
  EXPECT_TRUE(r.has_warning(results::WarningKind::NotWarm));
  EXPECT_EQ(r.ops, log.messages);
  EXPECT_TRUE(r.pass_s.has_value());
  ASSERT_TRUE(r.resident_fraction.has_value());
  EXPECT_EQ(*r.resident_fraction, 0.5);
}

TEST(CommitLogOnTheEngine, ACatchUpThatReadsTooFewMessagesFails) {
  CatchUpLog log;
  harness::Runner runner(one_repetition_config(), log.scratch);
  CatchUpWorkload read(log.logs, commitlog::ReadPath::Pread, results::CacheState::Warm, log.messages + 1,
                       harness_segment_cache(results::Eviction::PerFile));
  EXPECT_THROW(runner.run(read, results::Result{}), iolab::Error);
}

constexpr std::uint64_t kTestMiB = 1024 * 1024;

TEST(CommitLogOnTheEngine, TheDirtyBackgroundLimitComesFromBasesReader) {
  // The knobs as proc::vm_dirty_settings names them (no "vm." prefix).
  EXPECT_EQ(dirty_background_limit({{"dirty_background_bytes", 0}, {"dirty_background_ratio", 10}}, 1000 * kTestMiB),
            100 * kTestMiB);
  EXPECT_EQ(dirty_background_limit({{"dirty_background_bytes", 64 * kTestMiB}, {"dirty_background_ratio", 10}}, 1000 * kTestMiB),
            64 * kTestMiB);
  EXPECT_EQ(dirty_background_limit({{"dirty_background_ratio", 5}}, 1000 * kTestMiB), 50 * kTestMiB);
  EXPECT_EQ(dirty_background_limit({}, 1000 * kTestMiB), 100 * kTestMiB) << "the kernel's default ratio";
}

TEST(CommitLogSuite, RunsByNameOutsideTheSeedsGroup) {
  const Suite& s = find_suite("commitlog");
  EXPECT_FALSE(s.description().empty());
  for (const Suite* seed : seed_suites()) EXPECT_NE(seed->name(), "commitlog");
}

}  // namespace
}  // namespace iolab::suites
