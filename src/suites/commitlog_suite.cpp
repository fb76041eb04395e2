// seed 004's last row: the commit log (issue 12). The six message-queue
// designs of iolab::commitlog under the workload driver, one record per run:
// the designs across message sizes, producers (group commit's messages per
// fdatasync), topics (hypothesis c), the flush thread on and off (hypothesis
// b), a run that writes past the kernel's dirty-page background limit
// (hypothesis a), the cost of segment rolls, and catch-up reads of a whole
// log, warm and cold, by pread, mmap and sendfile.
//
// How a run maps onto a record: each is a harness::Workload on the engine
// (commitlog_workload.h), so a record has the engine's repetitions of
// passes, warm-up, spread (pass_s), warnings and on_result like every other
// experiment. A pass is one run of a message count on a fresh log, timed
// from releasing the producers to the last acknowledgement with no clock
// read per message; per-message latency (LatencySource::EveryOp) is the
// engine's separate latency pass, an extra run with every message clocked,
// labelled open or closed loop (extra.latency_loop). Catch-up reads are a
// workload too, their cache state made and proven before every pass.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "commitlog_workload.h"
#include "iolab/base/proc.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/reader.h"
#include "iolab/commitlog/traffic.h"
#include "iolab/harness/engine.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using namespace iolab::commitlog;
using nlohmann::json;

// What each scale runs. A pass sends a message count (the engine repeats
// passes to its min time): `messages` when set (tiny), else `pass_bytes` of
// message bodies; designs whose acknowledgement waits for an fdatasync
// (~1-10 ms each here) send `durable_messages` per producer.
// Passes of about --min-time (0.1 s) or more: every pass opens a fresh log
// and syncs it at close (untimed), so passes far shorter than a repetition
// cost more outside the timed region than in it.
struct Plan {
  std::uint64_t messages = 0;
  std::uint64_t pass_bytes = 0;
  std::uint64_t max_messages = 0;  // small messages: a count that still takes ~0.1-1 s
  std::uint64_t durable_messages = 0;
  // Segment size of most runs: about a pass's bytes (rocketmq preallocates
  // its segment and the next when a log opens, every pass).
  std::uint64_t segment = 0;
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
    case Scale::Tiny: return {500, 0, 500, 25, 256 * KiB, 64 * KiB, {1 * KiB}, {2}, {4}, 2, 2 * MiB, false, 0};
    case Scale::Quick:
      return {0, 64 * MiB, 256 * 1024, 64, 64 * MiB, 1 * MiB, {64, 1 * KiB, 64 * KiB}, {1, 4}, {1, 64}, 2, 32 * MiB, false, 0};
    case Scale::Default:
      return {0, 128 * MiB, 512 * 1024, 256, 128 * MiB, 1 * MiB, {64, 1 * KiB, 4 * KiB, 64 * KiB}, {1, 2, 4, 8}, {1, 16, 64, 256}, 2,
              256 * MiB, true, 100 * MiB};
    case Scale::Full:
      return {0, 256 * MiB, 2048 * 1024, 1024, 256 * MiB, 4 * MiB, {64, 1 * KiB, 4 * KiB, 64 * KiB, 1 * MiB}, {1, 2, 4, 8, 16},
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
io::FlushPolicy sync_of(const Options& o) {
  DesignTraits t = traits(o.design);
  if (t.ack == AckLevel::Durable) return {io::FlushSchedule::EveryWrite, io::Durability::Fdatasync, 0};
  if (t.flush_thread && flushing(o))
    return {io::FlushSchedule::AsyncBytes, t.writes_through_map ? io::Durability::MsyncSync : io::Durability::Fdatasync,
            o.flush_min_bytes};
  return {};
}

// One workload run as a record.
struct RunSpec {
  std::string experiment;
  TrafficConfig config;
};

class CommitLogRuns {
 public:
  CommitLogRuns(harness::Runner& runner, const Plan& plan) : runner_(runner), plan_(plan) {}

  TrafficConfig config(Design d, std::uint64_t size, unsigned producers = 1, std::uint32_t topics = 1) const {
    TrafficConfig c;
    c.log.design = d;
    c.log.segment_size = plan_.segment;
    c.log.topics = topics;
    c.message_size = static_cast<std::size_t>(size);
    c.producers = producers;
    if (traits(d).ack == AckLevel::Durable)
      c.messages = plan_.durable_messages * producers;
    else if (plan_.messages > 0)
      c.messages = plan_.messages;
    else
      c.messages = std::clamp<std::uint64_t>(plan_.pass_bytes / size, 64, plan_.max_messages);
    c.seed = runner_.config().seed;
    return c;
  }

  // Measures the run on the engine with `runner`'s settings (or `settings_runner`'s).
  results::Result run(const RunSpec& spec,
                      const std::function<void(results::Result&, const CommitLogRunWorkload&)>& more = {},
                      harness::Runner* settings_runner = nullptr) {
    harness::Runner& runner = settings_runner != nullptr ? *settings_runner : runner_;
    CommitLogRunWorkload workload(runner_.scratch(), spec.config);
    if (more) workload.also_describe(more);
    return runner.run(workload, labels(spec));
  }

  results::Result labels(const RunSpec& spec) const {
    const TrafficConfig& c = spec.config;
    results::Result r;
    r.suite = "commitlog";
    r.experiment = spec.experiment;
    r.method = std::string(to_string(c.log.design));
    r.op = results::Op::Write;
    r.pattern = results::AccessPattern::Seq;
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
  harness::Runner& runner_;
  const Plan& plan_;
};

// Messages per second of a record: a repetition's ops over its median repetition.
double messages_per_second(const results::Result& r) {
  if (r.skipped || r.samples_s.empty()) return 0;
  double per_rep = results::median(r.samples_s);
  return per_rep > 0 ? static_cast<double>(r.ops) / per_rep : 0;
}

void designs_by_size(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  // Producer-only rows (issue 28): what message-queue benchmarks and the
  // seed measure. Then the same runs with a tailing consumer reading along
  // through the design's read path, which shares this machine's two cores.
  std::map<std::pair<std::uint64_t, Design>, double> alone;
  for (std::uint64_t size : plan.sizes)
    for (Design d : kAllDesigns) {
      TrafficConfig c = runs.config(d, size);
      c.consumer = false;
      out.push_back(runs.run({"designs: 1 producer, no consumer, 1 topic, closed loop", c}));
      alone[{size, d}] = messages_per_second(out.back());
    }
  for (std::uint64_t size : plan.sizes)
    for (Design d : kAllDesigns) {
      double without = alone[{size, d}];
      out.push_back(runs.run({"designs with a tailing consumer: 1 producer, 1 topic, closed loop", runs.config(d, size)},
                             [without](results::Result& r, const CommitLogRunWorkload&) {
                               double with = messages_per_second(r);
                               if (without > 0 && with > 0) r.extra["vs_no_consumer"] = with / without;
                             }));
    }
}

void producers(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  // Group commit against the same pwrite appends with a flush thread.
  for (Design d : {Design::GroupCommit, Design::Qmq})
    for (unsigned p : plan.producers)
      out.push_back(runs.run({"producers: 1 KiB, 1 topic, closed loop", runs.config(d, 1 * KiB, p)}));
}

void topics(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  // Hypothesis (c): a log per topic (kafka) against one shared log (rocketmq).
  for (std::uint32_t t : plan.topics)
    for (Design d : {Design::Kafka, Design::RocketMq})
      out.push_back(runs.run({"topics " + std::to_string(t) + ": 1 KiB, " + std::to_string(plan.topic_producers) +
                                  " producers, closed loop (hypothesis c)",
                              runs.config(d, 1 * KiB, plan.topic_producers, t)}));
}

void flush_on_off(CommitLogRuns& runs, std::vector<results::Result>& out) {
  // Hypothesis (b): the same write path with its flush thread and without.
  for (Design d : {Design::RocketMq, Design::Qmq})
    for (bool flush : {true, false}) {
      TrafficConfig c = runs.config(d, 1 * KiB);
      if (!flush) no_flush(c.log);
      out.push_back(runs.run({"flush thread on and off: 1 KiB, 1 producer (hypothesis b)", c}));
    }
}

void past_dirty_limit(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  const std::string experiment = "past the dirty background limit: 4 KiB, open loop (hypothesis a)";
  const Design designs[] = {Design::RocketMq, Design::Qmq, Design::Kafka};
  if (!plan.dirty_run) {
    for (Design d : designs)
      out.push_back(skipped(runs.runner(), runs.labels({experiment, runs.config(d, 4 * KiB)}),
                            "writes more than the kernel's dirty background limit (GiB): default and full scales only"));
    return;
  }
  std::uint64_t limit = dirty_background_limit(proc::vm_dirty_settings(), proc::physical_memory_bytes());
  std::uint64_t target = limit + limit / 10;
  // Each pass writes GiBs at the offered rate (~30 s): one timed pass and
  // the latency pass, whatever --reps says (the record's reps say so).
  harness::RunConfig once = runs.runner().config();
  once.reps = 1;
  once.warmup = 0;
  once.min_time = 0;
  harness::Runner one_pass(once, runs.runner().scratch());
  for (Design d : designs) {
    TrafficConfig c = runs.config(d, 4 * KiB);
    c.loop = Loop::Open;
    // An offered load every design kept up with here (~150 MiB/s when it
    // could, under load): a backlog would swamp the stalls being looked for.
    c.rate = static_cast<double>(plan.dirty_rate) / static_cast<double>(4 * KiB);
    c.messages = target / (4 * KiB);
    c.seconds = 0;
    out.push_back(runs.run(
        {experiment, c},
        [&](results::Result& r, const CommitLogRunWorkload&) {
          r.extra["rate_messages_per_s"] = c.rate;
          r.extra["dirty_background_limit_bytes"] = limit;
          r.extra["target_bytes"] = target;
          r.extra["pacing"] = "the open loop reads the clock once per round of due messages in every pass";
          const double seconds = r.samples_s.empty() ? 0 : r.samples_s.front();
          if (seconds > 0 && static_cast<double>(r.ops) / seconds < 0.9 * c.rate)
            r.warn(results::WarningKind::Note,
                   "sent " + std::to_string(static_cast<std::uint64_t>(static_cast<double>(r.ops) / seconds)) +
                       " messages/s of the offered " + std::to_string(static_cast<std::uint64_t>(c.rate)) +
                       ": the design could not keep up with the offered rate");
        },
        &one_pass));
  }
}

void segment_rolls(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  for (Design d : kAllDesigns) {
    TrafficConfig c = runs.config(d, 1 * KiB);
    c.log.segment_size = plan.roll_segment;
    out.push_back(runs.run({"segment rolls: " + label(plan.roll_segment) + " segments, 1 KiB, 1 producer", c}));
  }
}

// Catch-up reads of one whole log (written by qmq: the frames are the same in
// every design), each read path warm and cold, on the engine.
void catch_ups(CommitLogRuns& runs, const Plan& plan, std::vector<results::Result>& out) {
  harness::Runner& runner = runs.runner();
  LogDir dir(runner.scratch());
  TrafficConfig c = runs.config(Design::Qmq, 4 * KiB);
  c.consumer = false;
  c.messages = plan.catch_up_bytes / (4 * KiB);
  TrafficResult w;
  {
    TrafficRun write(dir.path(), c, Clocking::None);  // untimed: the log the reads read
    write.produce();
    w = write.finish();
  }
  std::vector<std::filesystem::path> logs = logs_in(dir.path());
  const std::string experiment = "catch-up: the whole log, " + label(plan.catch_up_bytes) + " of 4 KiB messages";
  for (ReadPath path : {ReadPath::Pread, ReadPath::Mmap, ReadPath::Sendfile})
    for (bool cold : {false, true}) {
      results::Result r;
      r.suite = "commitlog";
      r.experiment = experiment;
      r.method = std::string(to_string(path));
      r.op = results::Op::Read;
      r.pattern = results::AccessPattern::Seq;
      r.block_size = 0;
      r.file_size = w.log.bytes;
      r.buffer.reset();
      r.cache = cold ? results::CacheState::Cold : results::CacheState::Warm;
      r.extra["written_by"] = describe(Design::Qmq);
      CatchUpWorkload read(logs, path, *r.cache, w.messages,
                           harness_segment_cache(runner.config().eviction.value_or(results::Eviction::PerFile)));
      out.push_back(runner.run(read, std::move(r)));
    }
  dir.remove();
}

class CommitLogSuite final : public Suite {
 public:
  using Suite::Suite;

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    Plan plan = commitlog_plan(options.scale);
    CommitLogRuns runs(runner, plan);
    std::vector<results::Result> out;
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

// Not in the seeds group (the catalogue: SuiteGroup::ByName): `iolab run commitlog` runs it by name.
const SuiteRegistration commitlog_registration{std::make_unique<CommitLogSuite>(catalogued("commitlog"))};

}  // namespace
}  // namespace iolab::suites
