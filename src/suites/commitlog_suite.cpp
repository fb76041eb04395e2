// seed 004's last row: the commit log (issue 12). The six message-queue
// designs of iolab::commitlog under the workload driver, one record per run:
// the designs across message sizes, producers (group commit's messages per
// fdatasync), topics (hypothesis c), the flush thread on and off (hypothesis
// b), a run that writes past the kernel's dirty-page background limit
// (hypothesis a), the cost of segment rolls, and catch-up reads of a whole
// log, warm and cold, by pread, mmap and sendfile.
//
// How a run maps onto a record: run_workload() times itself (producers start
// together; the run lasts until the last acknowledgement), so a record is
// one run of the workload (reps = passes = 1), its samples_s that run's
// seconds, its latency every message's append latency as the run went
// (LatencySource::EveryOp), its CPU and faults the whole run (open, producers,
// consumer, close). The run's own variation is in extra.per_second. Catch-up
// reads repeat (--reps) and are one sample each.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/reader.h"
#include "iolab/commitlog/workload.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/usage.h"
#include "iolab/io/file.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using namespace iolab::commitlog;
using nlohmann::json;

// What each scale runs. Runs last `seconds`, or send `messages` when set
// (tiny: a deterministic count).
struct Plan {
  double seconds = 0;
  std::uint64_t messages = 0;
  std::uint64_t segment = 0;       // segment size of most runs
  std::uint64_t roll_segment = 0;  // the segment-roll experiment's
  std::vector<std::uint64_t> sizes;
  std::vector<unsigned> producers;
  std::vector<std::uint32_t> topics;
  unsigned topic_producers = 2;
  std::uint64_t catch_up_bytes = 0;
  bool dirty_run = false;          // hypothesis (a) past the background limit
  std::uint64_t dirty_rate = 0;    // its offered load, bytes per second
};

Plan commitlog_plan(Scale s) {
  switch (s) {
    case Scale::Tiny: return {0, 500, 256 * KiB, 64 * KiB, {1 * KiB}, {2}, {4}, 2, 2 * MiB, false, 0};
    case Scale::Quick:
      return {0.5, 0, 64 * MiB, 1 * MiB, {64, 1 * KiB, 64 * KiB}, {1, 4}, {1, 64}, 2, 32 * MiB, false, 0};
    case Scale::Default:
      return {2, 0, 256 * MiB, 1 * MiB, {64, 1 * KiB, 4 * KiB, 64 * KiB}, {1, 2, 4, 8}, {1, 16, 64, 256}, 2,
              256 * MiB, true, 100 * MiB};
    case Scale::Full:
      return {10, 0, 1 * GiB, 4 * MiB, {64, 1 * KiB, 4 * KiB, 64 * KiB, 1 * MiB}, {1, 2, 4, 8, 16},
              {1, 16, 64, 128, 256}, 4, 1 * GiB, true, 100 * MiB};
  }
  return commitlog_plan(Scale::Default);
}

// The flush threads never find enough to sync (close still syncs): a
// design's write path without its flushing (hypothesis b).
void no_flush(Options& o) {
  o.flush_min_bytes = std::numeric_limits<std::size_t>::max();
  o.flush_thorough_interval = std::chrono::hours(24 * 365);
}
bool flushing(const Options& o) { return o.flush_min_bytes != std::numeric_limits<std::size_t>::max(); }

// The design's flushing as a flush policy: decided by its traits.
harness::SyncPolicy sync_of(const Options& o) {
  DesignTraits t = traits(o.design);
  if (t.ack == AckLevel::Durable) return {harness::FlushSchedule::EveryWrite, io::Durability::Fdatasync, 0};
  if (t.flush_thread && flushing(o))
    return {harness::FlushSchedule::AsyncBytes, t.writes_through_map ? io::Durability::MsyncSync : io::Durability::Fdatasync,
            o.flush_min_bytes};
  return {};
}

std::string acknowledged(AckLevel a) {
  switch (a) {
    case AckLevel::Buffered: return "copied into a user-space buffer (lost if the process dies before the commit thread's pwrite)";
    case AckLevel::Written: return "in the page cache (survives the process, not a power loss)";
    case AckLevel::Durable: return "fdatasync'ed (survives a power loss)";
  }
  return "?";
}

json percentiles(const LatencyHistogram& h) {
  return {{"p50_ns", h.percentile(0.50)}, {"p99_ns", h.percentile(0.99)}, {"p999_ns", h.percentile(0.999)},
          {"max_ns", h.max()},           {"samples", h.count()}};
}

// A directory of its own in the scratch dir for one log; its files and
// itself are removed when it goes (remove_log_files removes only what a log made).
class LogDir {
 public:
  explicit LogDir(io::ScratchDir& scratch) {
    for (unsigned n = 0;; ++n) {
      path_ = scratch.path() / ("commitlog-" + std::to_string(n));
      if (::mkdir(path_.c_str(), 0700) == 0) break;
      if (errno != EEXIST) throw Error("mkdir", path_.string(), errno);
    }
  }
  ~LogDir() {
    try {
      remove();
    } catch (...) {
    }
  }
  LogDir(const LogDir&) = delete;
  LogDir& operator=(const LogDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  void remove() {
    if (path_.empty()) return;
    remove_log_files(path_);
    if (::rmdir(path_.c_str()) != 0) throw Error("rmdir", path_.string(), errno);
    path_.clear();
  }

 private:
  std::filesystem::path path_;
};

// The logs a closed log directory holds: subdirectories with segment files
// (a log per topic, or the one shared log; the topic index has none).
std::vector<std::filesystem::path> logs_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> logs;
  for (const auto& d : std::filesystem::directory_iterator(dir)) {
    if (!d.is_directory() || d.is_symlink()) continue;
    for (const auto& f : std::filesystem::directory_iterator(d.path())) {
      std::uint64_t base = 0;
      if (f.is_regular_file() && parse_segment_name(f.path().filename().string(), base)) {
        logs.push_back(d.path());
        break;
      }
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// Every message of every log read back and checked (CRC32C, sequence): the
// count must be what was acknowledged, with no damage anywhere.
struct Verification {
  bool ok = false;
  std::uint64_t messages = 0;
  std::string damage;
};
Verification verify_logs(const std::filesystem::path& dir, std::uint64_t acknowledged_messages) {
  Verification v;
  v.ok = true;
  for (const auto& log : logs_in(dir)) {
    LogScan scan = scan_log(log);
    v.messages += scan.messages;
    if (scan.damage) {
      v.ok = false;
      if (v.damage.empty()) v.damage = scan.damage->describe();
    }
  }
  if (v.messages != acknowledged_messages) v.ok = false;
  return v;
}

// CPU, faults, context switches and storage bytes of a measured region.
void add_usage(harness::Result& r, const harness::Usage& u) {
  r.user_s = u.user_s;
  r.sys_s = u.sys_s;
  r.minor_faults = u.minor_faults;
  r.major_faults = u.major_faults;
  r.voluntary_ctx = u.voluntary_ctx;
  r.involuntary_ctx = u.involuntary_ctx;
  r.storage_read_bytes = u.storage_read_bytes;
  r.dirtied_bytes = u.dirtied_bytes;
  if (u.have_device) {
    r.device_read_bytes = u.device_read_bytes;
    r.device_write_bytes = u.device_write_bytes;
  }
}

// The syncs done before close began, and the messages they made durable
// (per log, the highest sequence synced: sequences start at 1 in every log).
struct RunFlushes {
  std::uint64_t flushes = 0, messages = 0;
};
RunFlushes flushes_before(const Stats& s, std::uint64_t end_ns) {
  RunFlushes f;
  std::map<std::uint32_t, std::uint64_t> synced;
  for (const FlushEvent& e : s.flush_events) {
    if (e.done_ns > end_ns) continue;
    ++f.flushes;
    synced[e.log] = std::max(synced[e.log], e.sequence);
  }
  for (const auto& [log, sequence] : synced) f.messages += sequence;
  return f;
}

// One workload run as a record.
struct RunSpec {
  std::string experiment;
  WorkloadConfig config;
};

class CommitLogRuns {
 public:
  CommitLogRuns(harness::Runner& runner, const Plan& plan) : runner_(runner), plan_(plan) {}

  WorkloadConfig config(Design d, std::uint64_t size, unsigned producers = 1, std::uint32_t topics = 1) const {
    WorkloadConfig c;
    c.log.design = d;
    c.log.segment_size = plan_.segment;
    c.log.topics = topics;
    c.message_size = static_cast<std::size_t>(size);
    c.producers = producers;
    // Tiny: a durable acknowledgement waits for an fdatasync each (~1-10 ms
    // here), so those designs send a quarter of the count.
    c.messages = traits(d).ack == AckLevel::Durable ? plan_.messages / 4 : plan_.messages;
    c.seconds = plan_.messages ? 0 : plan_.seconds;
    c.seed = runner_.config().seed;
    return c;
  }

  harness::Result run(const RunSpec& spec, const std::function<void(harness::Result&, const WorkloadResult&)>& more = {}) {
    const WorkloadConfig& c = spec.config;
    if (runner_.config().on_experiment) runner_.config().on_experiment(spec.experiment + " " + std::string(to_string(c.log.design)));
    LogDir dir(runner_.scratch());
    harness::UsageMeter meter;
    meter.start();
    WorkloadResult w = run_workload(dir.path(), c);
    // When close began (its final sync is not part of the run), on the clock of the flush events.
    std::uint64_t close_start_ns = iolab::steady_ns() - static_cast<std::uint64_t>(w.close_seconds * 1e9);
    harness::Usage u = meter.stop();
    Verification v = verify_logs(dir.path(), w.messages);
    harness::Result r = labels(spec);
    fill(r, w, u, v, flushes_before(w.log, close_start_ns));
    if (more) more(r, w);
    dir.remove();
    harness::add_statistics_warnings(r);
    if (runner_.config().on_result) runner_.config().on_result(r);
    return r;
  }

  harness::Result labels(const RunSpec& spec) const {
    const WorkloadConfig& c = spec.config;
    harness::Result r;
    r.suite = "commitlog";
    r.experiment = spec.experiment;
    r.method = std::string(to_string(c.log.design));
    r.op = harness::Op::Write;
    r.pattern = harness::AccessPattern::Seq;
    r.block_size = c.message_size;
    r.file_size = 0;
    r.buffer.reset();
    r.cache.reset();
    r.cache_method = "fresh log";
    r.sync = sync_of(c.log);
    r.threads = c.producers;
    return r;
  }

  harness::Runner& runner() { return runner_; }

 private:
  static void fill(harness::Result& r, const WorkloadResult& w, const harness::Usage& u, const Verification& v,
                   const RunFlushes& during) {
    const Stats& s = w.log;
    r.reps = 1;
    r.passes = 1;
    r.samples_s = {w.seconds};
    r.bytes = w.bytes;
    r.ops = w.messages;
    if (w.append_latency.count() > 0) {
      r.latency_ns = harness::latency_of(w.append_latency, harness::LatencySource::EveryOp);
      r.latency_ns->source = harness::LatencySource::EveryOp;
      r.latency_ns->samples = w.append_latency.count();
    }
    add_usage(r, u);
    r.io_calls = u.syscalls_read + u.syscalls_write;
    r.verified = v.ok;

    json& x = r.extra;
    x["design"] = describe(w.design);
    x["acknowledged"] = acknowledged(w.ack);
    x["messages"] = w.messages;
    x["messages_per_s"] = w.messages_per_second;
    x["mib_per_s"] = w.mib_per_second;
    x["close_s"] = w.close_seconds;
    x["producer_cpu_s"] = w.producer_cpu_seconds;
    if (w.producer_cpu_seconds > 0) x["messages_per_producer_cpu_s"] = static_cast<double>(w.messages) / w.producer_cpu_seconds;
    x["usage_covers"] = "the whole run: open, producers, consumer and close (CPU, faults, calls, device bytes)";
    x["slow_appends"] = {{"over_1ms", w.slower_than_1ms},
                         {"over_10ms", w.slower_than_10ms},
                         {"over_100ms", w.slower_than_100ms},
                         {"over_1s", w.slower_than_1s}};
    if (w.durable_samples > 0) {
      json d = percentiles(w.time_to_durable);
      d["not_durable_during_run"] = w.not_durable_during_run;
      x["time_to_durable"] = d;
    } else {
      x["time_to_durable"] = nullptr;
      x["time_to_durable_note"] = "no sampled message was synced before the run ended (" +
                                  std::to_string(w.not_durable_during_run) + " samples): durable only at close";
    }
    // Syncs of the run (the console's and report's flushes per pass); close's come after.
    const double frame_bytes = static_cast<double>(r.block_size + kFrameHeaderSize);
    x["flushes"] = during.flushes;
    x["close_flushes"] = s.flushes - std::min(s.flushes, during.flushes);
    if (during.flushes > 0) {
      double per_flush = static_cast<double>(during.messages) / static_cast<double>(during.flushes);
      x["messages_per_flush"] = per_flush;
      x["bytes_per_flush"] = per_flush * frame_bytes;
    }
    if (s.flushes > 0) {
      x["mean_flush_ms"] = w.mean_flush_seconds() * 1e3;
      x["flush_p99_ms"] = s.flush_latency.percentile(0.99) / 1e6;
    }
    // Where the acknowledged messages were when the run ended (before close's final sync).
    double durable = w.messages ? static_cast<double>(std::min(during.messages, w.messages)) / static_cast<double>(w.messages) : 0;
    x["durable_at_run_end"] = durable;
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", durable * 100);
    x["bytes_ended"] = durable >= 1 ? std::string("every acknowledged message synced during the run")
                                    : std::string(share) + " of the acknowledged messages synced during the run; the rest " +
                                          (w.ack == AckLevel::Buffered ? "in the user buffer or " : "in ") +
                                          "the page cache until close's final sync";
    if (s.commits > 0) x["commits"] = s.commits;
    if (s.buffer_full_waits > 0) x["buffer_full_waits"] = s.buffer_full_waits;
    x["rolls"] = s.rolls;
    if (s.rolls > 0) x["roll_latency"] = percentiles(s.roll_latency);
    if (s.segments_allocated_ahead > 0) {
      x["segments_allocated_ahead"] = s.segments_allocated_ahead;
      x["allocate_ahead_s"] = static_cast<double>(s.allocate_ahead_ns) / 1e9;
    }
    if (s.roll_waits > 0) x["roll_waits"] = s.roll_waits;
    if (!s.warm_up_note.empty()) x["warm_up_note"] = s.warm_up_note;
    x["consumed"] = w.consumed;
    if (w.consumer_delay.count() > 0) x["consumer_delay"] = percentiles(w.consumer_delay);
    json series = json::array();
    for (const SecondSample& p : w.per_second)
      series.push_back({{"t", p.start},
                        {"messages", p.messages},
                        {"mib", static_cast<double>(p.bytes) / static_cast<double>(MiB)},
                        {"p99_ns", p.p99_ns},
                        {"max_ns", p.max_ns}});
    x["per_second"] = series;
    x["verified_by"] = "every log read back after close (scan_log: CRC32C and sequence of every frame): " +
                       std::to_string(v.messages) + " messages for " + std::to_string(w.messages) + " acknowledged" +
                       (v.damage.empty() ? "" : "; " + v.damage);
  }

  harness::Runner& runner_;
  const Plan& plan_;
};

// Bytes the kernel lets sit dirty before background writeback starts: the
// background limit (bytes, or ratio of memory; MemTotal bounds what the
// kernel counts as dirtyable, so exceeding this exceeds its threshold).
std::uint64_t dirty_background_limit() {
  std::uint64_t bytes = 0, ratio = 10, mem_kib = 0;
  for (const auto& [name, value] : dirty_page_settings()) {
    try {
      if (name == "dirty_background_bytes") bytes = std::stoull(value);
      if (name == "dirty_background_ratio") ratio = std::stoull(value);
    } catch (...) {
    }
  }
  if (bytes > 0) return bytes;
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t v = 0;
  std::string unit;
  while (in >> key >> v >> unit)
    if (key == "MemTotal:") mem_kib = v;
  return mem_kib * 1024 / 100 * ratio;
}

void designs_by_size(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  for (std::uint64_t size : plan.sizes)
    for (Design d : kAllDesigns)
      out.push_back(runs.run({"designs: 1 producer, 1 topic, closed loop", runs.config(d, size)}));
}

void producers(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  // Group commit against the same pwrite appends with a flush thread.
  for (Design d : {Design::GroupCommit, Design::Qmq})
    for (unsigned p : plan.producers)
      out.push_back(runs.run({"producers: 1 KiB, 1 topic, closed loop", runs.config(d, 1 * KiB, p)}));
}

void topics(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  // Hypothesis (c): a log per topic (kafka) against one shared log (rocketmq).
  for (std::uint32_t t : plan.topics)
    for (Design d : {Design::Kafka, Design::RocketMq})
      out.push_back(runs.run({"topics " + std::to_string(t) + ": 1 KiB, " + std::to_string(plan.topic_producers) +
                                  " producers, closed loop (hypothesis c)",
                              runs.config(d, 1 * KiB, plan.topic_producers, t)}));
}

void flush_on_off(CommitLogRuns& runs, std::vector<harness::Result>& out) {
  // Hypothesis (b): the same write path with its flush thread and without.
  for (Design d : {Design::RocketMq, Design::Qmq})
    for (bool flush : {true, false}) {
      WorkloadConfig c = runs.config(d, 1 * KiB);
      if (!flush) no_flush(c.log);
      out.push_back(runs.run({"flush thread on and off: 1 KiB, 1 producer (hypothesis b)", c}));
    }
}

void past_dirty_limit(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  const std::string experiment = "past the dirty background limit: 4 KiB, open loop (hypothesis a)";
  const Design designs[] = {Design::RocketMq, Design::Qmq, Design::Kafka};
  if (!plan.dirty_run) {
    for (Design d : designs)
      out.push_back(skipped(runs.runner(), runs.labels({experiment, runs.config(d, 4 * KiB)}),
                            "writes more than the kernel's dirty background limit (GiB): default and full scales only"));
    return;
  }
  std::uint64_t limit = dirty_background_limit();
  std::uint64_t target = limit + limit / 10;
  for (Design d : designs) {
    WorkloadConfig c = runs.config(d, 4 * KiB);
    c.loop = Loop::Open;
    // An offered load every design kept up with here (~150 MiB/s when it
    // could, under load): a backlog would swamp the stalls being looked for.
    c.rate = static_cast<double>(plan.dirty_rate) / static_cast<double>(4 * KiB);
    c.messages = target / (4 * KiB);
    c.seconds = 0;
    out.push_back(runs.run({experiment, c}, [&](harness::Result& r, const WorkloadResult& w) {
      r.extra["rate_messages_per_s"] = c.rate;
      r.extra["dirty_background_limit_bytes"] = limit;
      r.extra["target_bytes"] = target;
      if (w.bytes < limit)
        r.warn(harness::WarningKind::Note,
               "wrote " + std::to_string(w.bytes) + " bytes, less than the dirty background limit " +
                   std::to_string(limit) + ": the design could not keep up with the offered rate");
    }));
  }
}

void segment_rolls(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  for (Design d : kAllDesigns) {
    WorkloadConfig c = runs.config(d, 1 * KiB);
    c.log.segment_size = plan.roll_segment;
    out.push_back(runs.run({"segment rolls: " + label(plan.roll_segment) + " segments, 1 KiB, 1 producer", c}));
  }
}

// Catch-up reads of one whole log (written by qmq: the frames are the same in
// every design), each read path warm and cold, --reps times.
void catch_ups(CommitLogRuns& runs, const Plan& plan, std::vector<harness::Result>& out) {
  harness::Runner& runner = runs.runner();
  LogDir dir(runner.scratch());
  WorkloadConfig c = runs.config(Design::Qmq, 4 * KiB);
  c.consumer = false;
  c.seconds = 0;
  c.messages = plan.catch_up_bytes / (4 * KiB);
  WorkloadResult w = run_workload(dir.path(), c);
  std::vector<std::filesystem::path> logs = logs_in(dir.path());
  std::uint64_t frame_bytes = w.log.bytes;
  const std::string experiment = "catch-up: the whole log, " + label(plan.catch_up_bytes) + " of 4 KiB messages";
  for (ReadPath path : {ReadPath::Pread, ReadPath::Mmap, ReadPath::Sendfile})
    for (bool cold : {false, true}) {
      harness::Result r;
      r.suite = "commitlog";
      r.experiment = experiment;
      r.method = std::string(to_string(path));
      r.op = harness::Op::Read;
      r.pattern = harness::AccessPattern::Seq;
      r.block_size = 0;
      r.file_size = frame_bytes;
      r.buffer.reset();
      r.cache = cold ? harness::CacheState::Cold : harness::CacheState::Warm;
      r.cache_method = cold ? "fdatasync + fadvise(DONTNEED) per segment" : "read once";
      if (runner.config().on_experiment) runner.config().on_experiment(experiment + " " + r.method);
      bool all_read = true;
      std::vector<double> resident;
      std::uint64_t calls = 0;
      for (unsigned rep = 0; rep < std::max(1u, runner.config().reps); ++rep) {
        harness::UsageMeter meter;
        meter.start();
        CatchUpResult got = catch_up(logs, path, cold);  // throws on a frame that fails its check
        harness::Usage u = meter.stop();
        add_usage(r, u);  // the last repetition's
        r.samples_s.push_back(got.seconds);
        all_read = all_read && got.messages == w.messages;
        resident.push_back(got.resident_before);
        r.bytes = got.bytes;
        r.ops = got.messages;
        calls = got.calls;
      }
      r.reps = static_cast<unsigned>(r.samples_s.size());
      r.io_calls = calls;
      r.resident_fraction = cold ? *std::max_element(resident.begin(), resident.end())
                                 : *std::min_element(resident.begin(), resident.end());
      if (cold && *r.resident_fraction > 0.1)
        r.warn(harness::WarningKind::NotCold, "part of the log was resident before a cold read");
      if (!cold && *r.resident_fraction < 0.9)
        r.warn(harness::WarningKind::NotWarm, "part of the log was not resident before a warm read");
      r.verified = all_read;
      r.extra["messages"] = w.messages;
      r.extra["verified_by"] = "every frame checked as read (CRC32C, sequence); the count must be every message written";
      r.extra["written_by"] = describe(Design::Qmq);
      r.extra["cpu_covers"] = cold ? "the read and the eviction before it (fdatasync + fadvise per segment)"
                                   : "the read and the untimed warming read before it";
      harness::add_statistics_warnings(r);
      if (runner.config().on_result) runner.config().on_result(r);
      out.push_back(std::move(r));
    }
  dir.remove();
}

class CommitLogSuite final : public Suite {
 public:
  std::string_view name() const override { return "commitlog"; }
  std::string_view seed() const override { return "004"; }
  std::string_view description() const override {
    return "message-queue commit logs (kafka, rocketmq, rocketmq-transient, qmq, activemq, group-commit): "
           "message sizes, producers, topics, flush on/off, past the dirty limit, segment rolls, catch-up reads";
  }

  std::vector<harness::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    Plan plan = commitlog_plan(options.scale);
    CommitLogRuns runs(runner, plan);
    std::vector<harness::Result> out;
    designs_by_size(runs, plan, out);
    producers(runs, plan, out);
    topics(runs, plan, out);
    flush_on_off(runs, out);
    past_dirty_limit(runs, plan, out);
    segment_rolls(runs, plan, out);
    catch_ups(runs, plan, out);
    return out;
  }
};

const CommitLogSuite commitlog_suite_instance;
// Not in the seeds group (order >= 100): `iolab run commitlog` runs it by name.
const SuiteRegistration commitlog_registration{110, SuiteGroup::ByName, &commitlog_suite_instance};

}  // namespace
}  // namespace iolab::suites
