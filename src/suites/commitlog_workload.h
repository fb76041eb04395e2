// The commit log on the harness's engine: a commit-log run and a catch-up
// read as harness::Workload, so the engine times them like every other
// experiment (repetitions, warm-up, min time, spread, thresholds, warnings,
// on_result). The commit log itself may not see the harness (the layer
// rule), so the adapters live here, with the suite.
//
// A run's pass: a fresh log in its own directory, opened with the consumer
// and the producer threads waiting (untimed); the timed region is
// TrafficRun::produce() alone (release the producers, every message
// acknowledged); the consumer's catch-up and close() come after (untimed),
// then every log is read back and checked. Timed passes read no clock per
// message (Clocking::None); the engine's latency pass is one more run with
// every message clocked (Clocking::PerMessage), and its figures (latency,
// per-second series, time to durable, consumer delay) are the record's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/commitlog/reader.h"
#include "iolab/commitlog/traffic.h"
#include "iolab/harness/engine.h"
#include "iolab/results/kinds.h"
#include "iolab/io/scratch.h"

namespace iolab::suites {

// A directory of its own in the scratch dir for one log; its files and
// itself are removed when it goes (remove_log_files removes only what a log made).
class LogDir {
 public:
  explicit LogDir(io::ScratchDir& scratch);
  ~LogDir();
  LogDir(const LogDir&) = delete;
  LogDir& operator=(const LogDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  void remove();

 private:
  std::filesystem::path path_;
};

// The logs a closed log directory holds: subdirectories with segment files
// (a log per topic, or the one shared log; the topic index has none).
std::vector<std::filesystem::path> logs_in(const std::filesystem::path& dir);

// What one timed pass of a run left, for the record (medians over passes).
struct RunPassFigures {
  double producer_cpu_s = 0, process_cpu_s = 0, close_s = 0;
  std::uint64_t flushes = 0, close_flushes = 0, durable_messages = 0, messages = 0;
};

class CommitLogRunWorkload final : public harness::Workload {
 public:
  CommitLogRunWorkload(io::ScratchDir& scratch, commitlog::TrafficConfig config);
  ~CommitLogRunWorkload() override;

  std::optional<std::string> setup() override;
  void before_pass(harness::PassKind kind) override;
  harness::PassBody pass(harness::PassKind kind) override;
  void after_pass(harness::PassKind kind) override;
  void teardown() override;
  // Every pass's logs are read back after it: no verification pass.
  bool has_verification_pass() const override { return false; }
  results::LatencySource latency_source() const override { return results::LatencySource::EveryOp; }
  // The log's calls happen on its own threads too (flush, commit, allocate-ahead).
  bool kernel_counts_calls() const override { return true; }
  void describe(results::Result& r) const override;

  // Adds what only the caller knows to the record, at the end of describe().
  using Addition = std::function<void(results::Result&, const CommitLogRunWorkload&)>;
  void also_describe(Addition more) { more_ = std::move(more); }

  // The latency pass's run (empty before it ran).
  const std::optional<commitlog::TrafficResult>& clocked_run() const noexcept { return clocked_; }
  // Clock reads of messages in all timed passes (0 for the closed loop).
  std::uint64_t timed_clock_reads() const noexcept { return timed_clock_reads_; }

 private:
  io::ScratchDir& scratch_;
  commitlog::TrafficConfig config_;
  std::unique_ptr<LogDir> dir_;
  std::unique_ptr<commitlog::TrafficRun> run_;
  std::optional<commitlog::TrafficResult> last_;      // the pass just finished
  std::optional<commitlog::TrafficResult> clocked_;   // the latency pass's
  std::optional<commitlog::TrafficResult> last_timed_;
  std::vector<RunPassFigures> timed_;
  std::uint64_t timed_clock_reads_ = 0, verified_messages_ = 0;
  Addition more_;
};

// Bytes the kernel lets sit dirty before background writeback starts, from
// /proc/sys/vm/dirty_* (proc::vm_dirty_settings: knob name without "vm.")
// and MemTotal: dirty_background_bytes when set, else dirty_background_ratio
// (10 when unreadable) percent of memory.
std::uint64_t dirty_background_limit(const std::map<std::string, std::int64_t>& vm, std::uint64_t mem_total_bytes);

// How a catch-up controls and reads the cache state of the segment files:
// the harness's cache control, replaceable in tests.
struct SegmentCache {
  std::function<double(const std::filesystem::path&)> resident;
  std::function<std::string(const std::filesystem::path&)> make_cold;
  std::function<void(const std::filesystem::path&)> make_warm;
};
SegmentCache harness_segment_cache(results::Eviction how);

// A catch-up read of whole, closed logs through one read path: each pass
// reads every frame (checked as read) with the cache state asked for, made
// and proven before the pass the engine's way: warm, read once (and a NotWarm
// warning when memory pressure evicted it); cold, evicted and proven cold
// (mincore), evicted again if not, else skipped with the reason, never
// published as cold.
class CatchUpWorkload final : public harness::Workload {
 public:
  CatchUpWorkload(std::vector<std::filesystem::path> logs, commitlog::ReadPath path, results::CacheState cache,
                  std::uint64_t messages, SegmentCache control);

  void before_pass(harness::PassKind kind) override;
  harness::PassBody pass(harness::PassKind kind) override;
  void after_pass(harness::PassKind kind) override;
  // Every frame is checked as read in every pass.
  bool has_verification_pass() const override { return false; }
  bool records_latency() const override { return false; }
  void describe(results::Result& r) const override;

 private:
  double resident() const;

  std::vector<std::filesystem::path> logs_, files_;
  commitlog::ReadPath path_;
  results::CacheState cache_;
  std::uint64_t messages_;
  SegmentCache control_;
  commitlog::LogsRead got_;
  std::string cache_method_;
  double least_resident_ = 1, most_resident_ = 0;
};

}  // namespace iolab::suites
