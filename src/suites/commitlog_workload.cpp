// The commit log on the engine (commitlog_workload.h): a run and a catch-up
// as harness::Workload.
#include "commitlog_workload.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <utility>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/file.h"

namespace iolab::suites {

using namespace iolab::commitlog;
using nlohmann::json;

LogDir::LogDir(io::ScratchDir& scratch) {
  // Made through the scratch directory, so a run killed outright loses it with the rest.
  for (unsigned n = 0; path_.empty(); ++n) {
    try {
      path_ = scratch.create_dir("commitlog-" + std::to_string(n));
    } catch (const Error& e) {
      if (e.error_number() != EEXIST) throw;
    }
  }
}
LogDir::~LogDir() {
  try {
    remove();
  } catch (...) {
  }
}
void LogDir::remove() {
  if (path_.empty()) return;
  remove_log_files(path_);
  if (::rmdir(path_.c_str()) != 0) throw Error("rmdir", path_.string(), errno);
  path_.clear();
}

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

namespace {

// What an acknowledgement at each level promised, in words (records' extra).
constexpr NameTable<AckLevel, 3> kAcknowledged{
    {{AckLevel::Buffered, "copied into a user-space buffer (lost if the process dies before the commit thread's pwrite)"},
     {AckLevel::Written, "in the page cache (survives the process, not a power loss)"},
     {AckLevel::Durable, "fdatasync'ed (survives a power loss)"}}};

std::string cl_acknowledged(AckLevel a) { return std::string(name_of(kAcknowledged, a)); }

json cl_percentiles(const LatencyHistogram& h) {
  return {{"p50_ns", h.percentile(0.50)}, {"p99_ns", h.percentile(0.99)}, {"p999_ns", h.percentile(0.999)},
          {"max_ns", h.max()},           {"samples", h.count()}};
}

// The syncs done by the end of the run (the last acknowledgement: the timed
// region's end), the messages they made durable, and the syncs after it (the
// consumer's catch-up, close's final sync), counted apart.
RunPassFigures cl_pass_figures(const TrafficResult& w) {
  RunPassFigures f;
  const TrafficResult::RunSyncs syncs = w.syncs();
  f.flushes = syncs.during_run;
  f.durable_messages = syncs.durable_messages;
  f.close_flushes = syncs.after_run;
  f.producer_cpu_s = w.producer_cpu_seconds;
  f.process_cpu_s = w.process_cpu_seconds;
  f.close_s = w.close_seconds;
  f.messages = w.messages;
  return f;
}

template <class F>
double cl_median_of(const std::vector<RunPassFigures>& v, F get) {
  std::vector<double> x;
  for (const auto& f : v) x.push_back(static_cast<double>(get(f)));
  return x.empty() ? 0 : results::median(x);
}

}  // namespace

CommitLogRunWorkload::CommitLogRunWorkload(io::ScratchDir& scratch, TrafficConfig config)
    : scratch_(scratch), config_(std::move(config)) {}
CommitLogRunWorkload::~CommitLogRunWorkload() = default;

std::optional<std::string> CommitLogRunWorkload::setup() {
  check_traffic(config_, Clocking::None);  // UsageError before any log is made
  return std::nullopt;
}

void CommitLogRunWorkload::before_pass(harness::PassKind) {
  last_.reset();
  dir_ = std::make_unique<LogDir>(scratch_);
}

harness::PassBody CommitLogRunWorkload::pass(harness::PassKind kind) {
  harness::PassBody body;
  const Clocking clocking = kind == harness::PassKind::Latency ? Clocking::PerMessage : Clocking::None;
  body.prepare = [this, clocking](unsigned) { run_ = std::make_unique<TrafficRun>(dir_->path(), config_, clocking); };
  body.timed = [this](unsigned) {
    Produced p = run_->produce();
    // The log's calls are counted by the kernel (kernel_counts_calls).
    return harness::WorkerTally{p.bytes, p.messages, 0};
  };
  body.finish = [this](unsigned) {
    if (!run_) return;
    std::unique_ptr<TrafficRun> run = std::move(run_);
    last_ = run->finish();  // consumer caught up, log closed (rethrows only a failure produce() did not)
  };
  return body;
}

void CommitLogRunWorkload::after_pass(harness::PassKind kind) {
  if (!last_) throw Error("commit-log run", dir_->path().string(), "the pass ended without a result", EIO);
  const TrafficResult& w = *last_;
  // Every log read back after close (CRC32C and sequence of every frame) on
  // a full check; the log's own count of appended messages on a tail check.
  std::uint64_t found = w.log.messages;
  std::string damage;
  if (data_check() == harness::DataCheck::Full) {
    found = 0;
    for (const auto& log : logs_in(dir_->path())) {
      LogScan scan = scan_log(log);
      found += scan.messages;
      if (scan.damage && damage.empty()) damage = scan.damage->describe();
    }
    verified_messages_ = found;
  }
  if (found != w.messages || !damage.empty())
    throw Error("verify", dir_->path().string(),
                "the log holds " + std::to_string(found) + " messages for " + std::to_string(w.messages) +
                    " acknowledged" + (damage.empty() ? "" : ": " + damage) + "; no figure is reported for it",
                EIO);
  if (kind == harness::PassKind::Timed) {
    timed_.push_back(cl_pass_figures(w));
    timed_clock_reads_ += w.message_clock_reads;
    last_timed_ = w;
  }
  if (kind == harness::PassKind::Latency) {
    latency(0).merge(w.append_latency);
    clocked_ = w;
  }
  dir_->remove();
  dir_.reset();
}

void CommitLogRunWorkload::teardown() {
  run_.reset();
  dir_.reset();
}

void CommitLogRunWorkload::describe(results::Result& r) const {
  r.threads = config_.producers;  // producer threads (the engine's team is one worker that starts them)
  json& x = r.extra;
  x["design"] = commitlog::describe(config_.log.design);
  x["acknowledged"] = cl_acknowledged(traits(config_.log.design).ack);
  // The engine's ops and bytes are a repetition's (passes x a pass's); a pass sends config_.messages.
  const std::uint64_t per_pass = last_timed_ ? last_timed_->messages : config_.messages;
  x["messages"] = per_pass;
  x["consumer"] = config_.consumer;
  x["usage_covers"] = "the timed region of each pass: the producers' run, with the consumer and the log's own threads "
                      "beside it (CPU, faults, calls, device bytes); opening, the consumer's catch-up and close are outside";
  x["timed_region"] = "producers released to every message acknowledged; no clock read per message in the closed loop";
  x["timed_pass_clock_reads"] = timed_clock_reads_;
  if (!timed_.empty()) {
    const double cpu = cl_median_of(timed_, [](const RunPassFigures& f) { return f.producer_cpu_s; });
    x["producer_cpu_s"] = cpu;
    if (cpu > 0) x["messages_per_producer_cpu_s"] = static_cast<double>(per_pass) / cpu;
    // Every thread of the log (producers, commit / flush / allocate-ahead
    // threads, a tailing consumer) over the same region: what a message costs in all.
    const double all = cl_median_of(timed_, [](const RunPassFigures& f) { return f.process_cpu_s; });
    x["process_cpu_s"] = all;
    if (all > 0) x["messages_per_process_cpu_s"] = static_cast<double>(per_pass) / all;
    x["close_s"] = cl_median_of(timed_, [](const RunPassFigures& f) { return f.close_s; });
    // Syncs of a pass up to its last acknowledgement (the console's and
    // report's flushes per pass); those of the catch-up and close apart.
    const double flushes = cl_median_of(timed_, [](const RunPassFigures& f) { return f.flushes; });
    const double durable = cl_median_of(timed_, [](const RunPassFigures& f) { return f.durable_messages; });
    x["flushes"] = static_cast<std::uint64_t>(flushes);
    x["close_flushes"] = static_cast<std::uint64_t>(cl_median_of(timed_, [](const RunPassFigures& f) { return f.close_flushes; }));
    const double frame_bytes = static_cast<double>(config_.message_size + kFrameHeaderSize);
    if (flushes > 0) {
      x["messages_per_flush"] = durable / flushes;
      x["bytes_per_flush"] = durable / flushes * frame_bytes;
    }
    // Where the acknowledged messages were when a pass's run ended (its last acknowledgement).
    const double share = per_pass ? std::min(1.0, durable / static_cast<double>(per_pass)) : 0;
    x["durable_at_run_end"] = share;
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", share * 100);
    const AckLevel ack = traits(config_.log.design).ack;
    x["bytes_ended"] = share >= 1 ? std::string("every acknowledged message synced during the run")
                                  : std::string(text) + " of the acknowledged messages synced during the run; the rest " +
                                        (ack == AckLevel::Buffered ? "in the user buffer or " : "in ") +
                                        "the page cache until close's final sync";
  }
  if (last_timed_) {
    const Stats& s = last_timed_->log;  // the last timed pass's log
    if (s.flushes > 0) {
      x["mean_flush_ms"] = last_timed_->mean_flush_seconds() * 1e3;
      x["flush_p99_ms"] = s.flush_latency.percentile(0.99) / 1e6;
    }
    if (s.commits > 0) x["commits"] = s.commits;
    if (s.buffer_full_waits > 0) x["buffer_full_waits"] = s.buffer_full_waits;
    x["rolls"] = s.rolls;
    if (s.rolls > 0) x["roll_latency"] = cl_percentiles(s.roll_latency);
    if (s.segments_allocated_ahead > 0) {
      x["segments_allocated_ahead"] = s.segments_allocated_ahead;
      x["allocate_ahead_s"] = static_cast<double>(s.allocate_ahead_ns) / 1e9;
    }
    if (s.roll_waits > 0) x["roll_waits"] = s.roll_waits;
    if (!s.warm_up_note.empty()) x["warm_up_note"] = s.warm_up_note;
    if (s.touched_ahead_bytes > 0) x["touched_ahead_bytes"] = s.touched_ahead_bytes;
    x["consumed"] = last_timed_->consumed;
    // Each kind of thread's CPU in the last timed pass's region, seconds:
    // the producers, the log's commit / flush / touch / allocate threads, a
    // tailing consumer (TrafficResult::thread_cpu_seconds).
    json threads = json::object();
    for (const auto& [name, seconds] : last_timed_->thread_cpu_seconds) threads[name] = seconds;
    x["thread_cpu_s"] = threads;
    x["log_stats_from"] = "the last timed pass (flushes, messages per flush, durable share and CPU: medians over timed passes)";
  }
  // The latency pass: every message clocked.
  const bool open = config_.loop == Loop::Open;
  x["latency_loop"] = std::string(to_string(config_.loop));
  x["latency_measures"] =
      open ? "open loop: each message's latency from its intended send time (scheduled arrivals at the offered rate), "
             "so a stall counts for every message due during it (no coordinated omission)"
           : "closed loop: service time of an append (send to acknowledgement, the next send waits for it); a stall "
             "delays the sends behind it uncounted (coordinated omission): not a latency under offered load";
  if (clocked_) {
    const TrafficResult& w = *clocked_;
    x["latency_pass_messages_per_s"] = w.messages_per_second;
    x["slow_appends"] = {{"over_1ms", w.slower_than_1ms},
                         {"over_10ms", w.slower_than_10ms},
                         {"over_100ms", w.slower_than_100ms},
                         {"over_1s", w.slower_than_1s}};
    if (w.durable_samples > 0) {
      json d = cl_percentiles(w.time_to_durable);
      d["not_durable_during_run"] = w.not_durable_during_run;
      x["time_to_durable"] = d;
    } else {
      x["time_to_durable"] = nullptr;
      x["time_to_durable_note"] = "no sampled message was synced before the run ended (" +
                                  std::to_string(w.not_durable_during_run) + " samples): durable only at close";
    }
    if (w.consumer_delay.count() > 0) x["consumer_delay"] = cl_percentiles(w.consumer_delay);
    json series = json::array();
    for (const SecondSample& p : w.per_second)
      series.push_back({{"t", p.start},
                        {"messages", p.messages},
                        {"mib", static_cast<double>(p.bytes) / iolab::kMiB},  // MiB is seed_common.h's, not included here
                        {"p99_ns", p.p99_ns},
                        {"max_ns", p.max_ns}});
    x["per_second"] = series;
    x["latency_figures_from"] = "the latency pass (one more run with every message clocked, not in the throughput)";
  }
  if (more_) more_(r, *this);
  x["verified_by"] = "every log read back after close (scan_log: CRC32C and sequence of every frame) after the first "
                     "pass of every repetition and the latency pass, the log's message count after the others: " +
                     std::to_string(verified_messages_) + " messages in the last full check";
}

std::uint64_t dirty_background_limit(const std::map<std::string, std::int64_t>& vm, std::uint64_t mem_total_bytes) {
  auto bytes = vm.find("dirty_background_bytes");
  if (bytes != vm.end() && bytes->second > 0) return static_cast<std::uint64_t>(bytes->second);
  auto ratio = vm.find("dirty_background_ratio");
  std::uint64_t percent = ratio != vm.end() && ratio->second >= 0 ? static_cast<std::uint64_t>(ratio->second) : 10;
  return mem_total_bytes / 100 * percent;
}

// ---- catch-up -------------------------------------------------------------------------

SegmentCache harness_segment_cache(results::Eviction how) {
  SegmentCache c;
  c.resident = [](const std::filesystem::path& f) { return harness::resident_fraction(f); };
  c.make_cold = [how](const std::filesystem::path& f) { return harness::make_cold(f, how); };
  c.make_warm = [](const std::filesystem::path& f) { harness::make_warm(f); };
  return c;
}

CatchUpWorkload::CatchUpWorkload(std::vector<std::filesystem::path> logs, ReadPath path, results::CacheState cache,
                                 std::uint64_t messages, SegmentCache control)
    : logs_(std::move(logs)), files_(segment_files(logs_)), path_(path), cache_(cache), messages_(messages),
      control_(std::move(control)) {}

double CatchUpWorkload::resident() const {
  double total = 0, cached = 0;
  for (const auto& f : files_) {
    auto size = static_cast<double>(std::filesystem::file_size(f));
    total += size;
    cached += control_.resident(f) * size;
  }
  return total > 0 ? cached / total : 0.0;
}

void CatchUpWorkload::before_pass(harness::PassKind kind) {
  const bool timed = kind == harness::PassKind::Timed;
  if (cache_ == results::CacheState::Warm) {
    double r = resident();
    if (r < 1.0) {
      for (const auto& f : files_) control_.make_warm(f);
      r = resident();
    }
    if (r < results::thresholds::kWarmResidentMin) {  // evicted by memory pressure: warm it once more
      for (const auto& f : files_) control_.make_warm(f);
      r = resident();
    }
    if (timed) least_resident_ = std::min(least_resident_, r);
    cache_method_ = "read once";
    return;
  }
  auto evict = [&] {
    for (const auto& f : files_) cache_method_ = control_.make_cold(f) + " per segment";
    return resident();
  };
  double r = evict();
  if (r > results::thresholds::kColdResidentMax) r = evict();  // pages written back since: drop them again
  if (r > results::thresholds::kColdResidentMax)
    throw harness::SkipExperiment("could not make the log cold: " + format_percent(r) + " of it stayed resident after " +
                                  cache_method_ + "; a figure from it would be a warm one");
  if (timed) most_resident_ = std::max(most_resident_, r);
}

harness::PassBody CatchUpWorkload::pass(harness::PassKind) {
  harness::PassBody body;
  body.timed = [this](unsigned) {
    got_ = read_logs(logs_, path_);  // throws on a frame that fails its check
    return harness::WorkerTally{got_.bytes, got_.messages, got_.calls};
  };
  return body;
}

void CatchUpWorkload::after_pass(harness::PassKind) {
  if (got_.messages != messages_)
    throw Error("verify", logs_.empty() ? std::string("catch-up") : logs_.front().parent_path().string(),
                "a catch-up read " + std::to_string(got_.messages) + " messages of the " + std::to_string(messages_) +
                    " written; no figure is reported for it",
                EIO);
}

void CatchUpWorkload::describe(results::Result& r) const {
  r.cache_method = cache_method_;
  const bool warm = cache_ == results::CacheState::Warm;
  r.resident_fraction = warm ? least_resident_ : most_resident_;
  if (warm && least_resident_ < results::thresholds::kWarmResidentMin)
    r.warn(results::WarningKind::NotWarm,
           "not warm: only " + format_percent(least_resident_) + " of the log was resident before a timed pass "
           "(memory pressure?); the figure mixes page-cache and device reads",
           {format_percent(least_resident_) + " resident"});
  r.extra["messages"] = messages_;
  r.extra["segments"] = files_.size();
  r.extra["verified_by"] = "every frame checked as read (CRC32C, sequence) in every pass; the count must be every message written";
  r.extra["cpu_covers"] = "the read of every segment (eviction or warming before it is outside)";
}

}  // namespace iolab::suites
