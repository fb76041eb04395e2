#include "iolab/commitlog/traffic.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <latch>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "iolab/commitlog/consumer.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/base/proc.h"
#include "iolab/io/file.h"
#include "producer.h"
#include "worker.h"  // name_this_thread

namespace iolab::commitlog {

namespace {
constexpr NameTable<Loop, 2> kLoops{{{Loop::Closed, "closed"}, {Loop::Open, "open"}}};
}  // namespace

std::string_view to_string(Loop l) noexcept { return name_of(kLoops, l); }

TrafficResult::RunSyncs TrafficResult::syncs() const {
  RunSyncs out;
  // Per log, the highest sequence synced by the end of the run: sequences
  // start at 1 in every log, so that is the messages it made durable.
  std::map<std::uint32_t, std::uint64_t> synced;
  for (const FlushEvent& e : log.flush_events) {
    if (e.done_ns > run_end_ns) continue;
    ++out.during_run;
    synced[e.log] = std::max(synced[e.log], e.sequence);
  }
  for (const auto& [id, sequence] : synced) out.durable_messages += sequence;
  out.durable_messages = std::min(out.durable_messages, messages);
  out.after_run = log.flushes - std::min(log.flushes, out.during_run);
  return out;
}

double TrafficResult::messages_per_flush() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.messages) / static_cast<double>(log.flushes) : 0;
}
double TrafficResult::bytes_per_flush() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.flushed_bytes) / static_cast<double>(log.flushes) : 0;
}
double TrafficResult::mean_flush_seconds() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.flush_ns) / static_cast<double>(log.flushes) / 1e9 : 0;
}

void check_traffic(const TrafficConfig& c, Clocking clocking) {
  if (c.message_size < detail::kBodyHeader || c.message_size > kMaxBodySize)
    throw UsageError("message size " + std::to_string(c.message_size),
                     "must be 16 bytes (a send time and an id) to 16 MiB");
  if (c.producers == 0) throw UsageError("producers 0", "at least one producer is needed");
  if (c.messages == 0 && !(c.seconds > 0)) throw UsageError("workload", "give a message count or a duration");
  if (c.messages == 0 && clocking == Clocking::None)
    throw UsageError("workload of " + std::to_string(c.seconds) + " s",
                     "a run that reads no clock per message sends a message count, not a duration");
  if (c.loop == Loop::Open && !(c.rate > 0)) throw UsageError("open loop", "needs a rate above 0 messages/s");
}

namespace {
// CPU seconds of every thread of the process so far (user + system).
double process_cpu_now() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}
}  // namespace

struct TrafficRun::State {
  State(const TrafficConfig& c, Clocking k) : config(c), clocking(k) {}
  // Stops and joins what still runs (also when the constructor failed part way), closes the log.
  ~State() {
    if (!released) stop = true;
    release_and_join();
    stop = true;
    join_consumer();
    if (log && !closed) {
      try {
        log->close();
      } catch (...) {  // already failing, or finish() was not reached
      }
    }
  }

  TrafficConfig config;
  Clocking clocking;
  DesignTraits traits{};
  std::unique_ptr<CommitLog> log;
  std::vector<std::unique_ptr<detail::Producer>> producers;
  std::vector<std::thread> threads;
  std::thread consumer;
  std::latch go{1};
  bool released = false, closed = false, error_thrown = false;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint64_t produced_ns = 0;  // when produce() found every producer done (one clock read a run)
  double process_cpu_s = 0;       // the process's CPU over produce()'s release and join
  rusage usage_before{}, usage_after{};  // the same window's rusage
  // The same window's CPU per named thread, and read/write-like calls.
  std::map<std::string, double> thread_cpu_before, thread_cpu_after;
  std::optional<proc::IoAccounting> io_before, io_after;
  std::atomic<bool> stop{false}, producing{true};
  std::atomic<std::uint64_t> to_consume{UINT64_MAX};
  std::exception_ptr error;
  std::mutex error_mu;
  // The consumer's figures (written by its thread, read after it is joined).
  LatencyHistogram consumer_delay;
  std::uint64_t consumed = 0, consumer_clock_reads = 0;

  void fail(std::exception_ptr e) {
    std::lock_guard lock(error_mu);
    if (!error) error = std::move(e);
    stop = true;
  }
  // Releases the producers (to stop at once when `stop` is set) and joins them.
  void release_and_join() {
    if (!released) {
      released = true;
      go.count_down();
    }
    for (auto& th : threads)
      if (th.joinable()) th.join();
  }
  void join_consumer() {
    producing = false;
    if (consumer.joinable()) consumer.join();
  }
  void consume();
};

// The tailing consumer reads along until the producers are done and it has caught up.
void TrafficRun::State::consume() {
  try {
    TailingConsumer c(*log, config.consumer_read_path.value_or(traits.read_path));
    const bool clocked = clocking == Clocking::PerMessage;
    auto visit = [&](std::uint32_t, const Frame& f) {
      if (!clocked) return;
      std::uint64_t sent;
      std::memcpy(&sent, f.body.data(), 8);
      std::uint64_t now = iolab::steady_ns();
      ++consumer_clock_reads;
      consumer_delay.record(now > sent ? now - sent : 0);
    };
    std::uint64_t give_up = UINT64_MAX;
    while (!stop.load()) {
      c.poll_wait(std::chrono::milliseconds(1), visit);
      if (producing.load()) continue;
      if (c.consumed() >= to_consume.load()) break;
      // What a commit thread still holds becomes visible within its
      // interval; past that, report what was read.
      std::uint64_t now = iolab::steady_ns();
      if (give_up == UINT64_MAX)
        give_up = now + 2'000'000'000ull + static_cast<std::uint64_t>(config.log.commit_interval.count());
      if (now > give_up) break;
    }
    consumed = c.consumed();
  } catch (...) {
    fail(std::current_exception());
  }
}

TrafficRun::TrafficRun(const std::filesystem::path& dir, const TrafficConfig& config, Clocking clocking)
    : state_(std::make_unique<State>(config, clocking)) {
  State& s = *state_;
  check_traffic(s.config, clocking);
  s.traits = traits(s.config.log.design);
  std::size_t batch_bytes =
      s.config.batch_bytes > 0 ? s.config.batch_bytes : (s.traits.batches ? s.config.log.batch_bytes : 1);
  s.log = open_commit_log(dir, s.config.log);
  for (unsigned p = 0; p < s.config.producers; ++p) {
    std::uint64_t quota = s.config.messages / s.config.producers + (p < s.config.messages % s.config.producers ? 1 : 0);
    if (s.config.messages > 0 && quota == 0) continue;
    s.producers.push_back(std::make_unique<detail::Producer>(*s.log, s.config, clocking, p, quota, batch_bytes));
  }
  if (s.config.consumer) {
    s.consumer = std::thread([&s] { s.consume(); });
    detail::name_thread(s.consumer, "log-consumer");
  }
  // The producers wait for produce(): starting threads is not the run's work.
  try {
    for (auto& p : s.producers) {
      s.threads.emplace_back([&s, p = p.get()] {
        s.go.wait();
        if (s.stop.load()) return;
        try {
          p->run(s.start_ns, s.end_ns, s.stop);
        } catch (...) {
          s.fail(std::current_exception());
        }
      });
      detail::name_thread(s.threads.back(), "log-producer");
    }
  } catch (...) {
    s.stop = true;
    throw;  // ~State joins what started
  }
}

TrafficRun::~TrafficRun() = default;

Produced TrafficRun::produce() {
  State& s = *state_;
  // The clocked loops measure from here (the open loop's intended times too).
  if (s.clocking == Clocking::PerMessage || s.config.loop == Loop::Open) {
    s.start_ns = iolab::steady_ns();
    s.end_ns = s.start_ns + static_cast<std::uint64_t>(s.config.seconds * 1e9);
  }
  s.io_before = proc::read_io();
  s.thread_cpu_before = proc::thread_cpu_seconds_by_name();
  ::getrusage(RUSAGE_SELF, &s.usage_before);
  const double cpu_before = process_cpu_now();
  s.release_and_join();
  s.produced_ns = iolab::steady_ns();
  s.process_cpu_s = process_cpu_now() - cpu_before;
  ::getrusage(RUSAGE_SELF, &s.usage_after);
  s.thread_cpu_after = proc::thread_cpu_seconds_by_name();
  s.io_after = proc::read_io();
  Produced out;
  for (auto& p : s.producers) {
    out.messages += p->result().messages;
    out.bytes += p->result().bytes;
  }
  std::lock_guard lock(s.error_mu);
  if (s.error) {
    s.error_thrown = true;
    std::rethrow_exception(s.error);
  }
  return out;
}

TrafficResult TrafficRun::finish() {
  State& s = *state_;
  if (!s.released) s.stop = true;  // produce() never ran: send nothing
  s.release_and_join();
  TrafficResult r;
  r.design = s.config.log.design;
  r.ack = s.traits.ack;
  std::uint64_t last_ack = s.start_ns;
  for (auto& p : s.producers) {
    detail::ProducerResult& pr = p->result();
    r.append_latency.merge(pr.latency);
    r.producer_cpu_seconds += pr.cpu_seconds;
    r.messages += pr.messages;
    r.bytes += pr.bytes;
    r.slower_than_1ms += pr.over[0];
    r.slower_than_10ms += pr.over[1];
    r.slower_than_100ms += pr.over[2];
    r.slower_than_1s += pr.over[3];
    r.message_clock_reads += pr.clock_reads;
    last_ack = std::max(last_ack, pr.last_ack_ns);
  }
  r.process_cpu_seconds = s.process_cpu_s;
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  r.process_user_seconds = secs(s.usage_after.ru_utime) - secs(s.usage_before.ru_utime);
  r.process_system_seconds = secs(s.usage_after.ru_stime) - secs(s.usage_before.ru_stime);
  r.minor_faults = static_cast<std::uint64_t>(std::max(0L, s.usage_after.ru_minflt - s.usage_before.ru_minflt));
  // The producers have ended by now (their CPU is their own count); every
  // other thread is read at both ends of the window.
  for (const auto& [name, after] : s.thread_cpu_after) {
    auto before = s.thread_cpu_before.find(name);
    r.thread_cpu_seconds[name] = std::max(0.0, after - (before == s.thread_cpu_before.end() ? 0.0 : before->second));
  }
  if (!s.producers.empty()) r.thread_cpu_seconds["log-producer"] = r.producer_cpu_seconds;
  if (s.io_before && s.io_after) {
    r.io_calls_counted = true;
    r.read_calls = s.io_after->syscr - s.io_before->syscr;
    r.write_calls = s.io_after->syscw - s.io_before->syscw;
  }
  s.to_consume = r.messages;
  s.join_consumer();
  r.consumed = s.consumed;
  r.consumer_delay = s.consumer_delay;
  r.message_clock_reads += s.consumer_clock_reads;

  r.close_start_ns = iolab::steady_ns();
  s.closed = true;
  try {
    s.log->close();
  } catch (...) {
    if (!s.error) s.error = std::current_exception();
  }
  r.close_seconds = static_cast<double>(iolab::steady_ns() - r.close_start_ns) / 1e9;
  if (s.error && !s.error_thrown) {
    s.error_thrown = true;
    std::rethrow_exception(s.error);
  }

  r.log = s.log->stats();
  // The end of the run: the last acknowledgement where it was clocked (no
  // producer ran: the start), else when the producers were found done.
  r.run_end_ns = s.clocking == Clocking::PerMessage ? last_ack : s.produced_ns;
  if (s.clocking != Clocking::PerMessage) return r;
  r.seconds = static_cast<double>(last_ack - s.start_ns) / 1e9;
  if (r.seconds > 0) {
    r.messages_per_second = static_cast<double>(r.messages) / r.seconds;
    r.mib_per_second = static_cast<double>(r.bytes) / r.seconds / (1024.0 * 1024.0);
  }

  // Per second, all producers together.
  std::size_t seconds = 0;
  for (auto& p : s.producers) seconds = std::max(seconds, p->result().seconds.size());
  for (std::size_t at = 0; at < seconds; ++at) {
    LatencyHistogram h;
    SecondSample out;
    out.start = static_cast<double>(at);
    for (auto& p : s.producers) {
      auto& v = p->result().seconds;
      if (at >= v.size()) continue;
      out.messages += v[at].messages;
      out.bytes += v[at].bytes;
      h.merge(v[at].latency);
    }
    out.p99_ns = h.percentile(0.99);
    out.max_ns = static_cast<double>(h.max());
    r.per_second.push_back(out);
  }

  // Time to durable: each sample against the first sync of its log that
  // covered it, among the syncs done by the end of the run.
  std::map<std::uint32_t, std::vector<FlushEvent>> events;
  for (const FlushEvent& e : r.log.flush_events)
    if (e.done_ns <= last_ack) events[e.log].push_back(e);
  for (auto& p : s.producers)
    for (const detail::DurableSample& sample : p->result().samples) {
      auto it = events.find(sample.log);
      const FlushEvent* hit = nullptr;
      if (it != events.end()) {
        auto& v = it->second;
        auto e = std::lower_bound(v.begin(), v.end(), sample.sequence,
                                  [](const FlushEvent& f, std::uint64_t seq) { return f.sequence < seq; });
        if (e != v.end()) hit = &*e;
      }
      if (hit == nullptr) {
        ++r.not_durable_during_run;
        continue;
      }
      ++r.durable_samples;
      r.time_to_durable.record(hit->done_ns > sample.send_ns ? hit->done_ns - sample.send_ns : 0);
    }
  return r;
}

TrafficResult run_traffic(const std::filesystem::path& dir, const TrafficConfig& config) {
  TrafficRun run(dir, config, Clocking::PerMessage);
  run.produce();
  return run.finish();
}

}  // namespace iolab::commitlog
