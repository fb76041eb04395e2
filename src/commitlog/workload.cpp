#include "iolab/commitlog/workload.h"

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
#include <time.h>

#include "iolab/commitlog/consumer.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/io/file.h"

namespace iolab::commitlog {

std::string_view to_string(Loop l) noexcept { return l == Loop::Closed ? "closed" : "open"; }

double WorkloadResult::messages_per_flush() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.messages) / static_cast<double>(log.flushes) : 0;
}
double WorkloadResult::bytes_per_flush() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.flushed_bytes) / static_cast<double>(log.flushes) : 0;
}
double WorkloadResult::mean_flush_seconds() const noexcept {
  return log.flushes > 0 ? static_cast<double>(log.flush_ns) / static_cast<double>(log.flushes) / 1e9 : 0;
}

namespace {

constexpr std::size_t kBodyHeader = 16;  // send time, producer and index
constexpr std::uint64_t kDurableSampleEvery = 100'000;  // ns

// A message whose time to durable is measured: the last of an append.
struct DurableSample {
  std::uint32_t log = 0;
  std::uint64_t sequence = 0, send_ns = 0;
};

struct Second {
  std::uint64_t messages = 0, bytes = 0;
  LatencyHistogram latency;
};

// What one producer measured.
struct ProducerResult {
  double cpu_seconds = 0;
  LatencyHistogram latency;
  std::vector<Second> seconds;
  std::vector<DurableSample> samples;
  std::uint64_t messages = 0, bytes = 0, last_ack_ns = 0, clock_reads = 0;
  std::uint64_t over[4] = {0, 0, 0, 0};
};

// Messages waiting to be sent to one topic, back to back.
struct Batch {
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> send_ns;
  void clear() {
    bytes.clear();
    send_ns.clear();
  }
};

// Not an I/O retry: a sleep resumed after a signal handler ran.
void sleep_until_ns(std::uint64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

class Producer {
 public:
  Producer(CommitLog& log, const WorkloadConfig& config, Clocking clocking, unsigned id, std::uint64_t quota,
           std::size_t batch_bytes)
      : log_(log), config_(config), clocked_(clocking == Clocking::PerMessage), id_(id), quota_(quota),
        batch_bytes_(batch_bytes), batches_(config.log.topics) {
    body_.resize(config.message_size);
    std::mt19937_64 rng(config.seed * 1'000'003 + id);
    for (auto& b : body_) b = static_cast<std::byte>(rng());
  }

  void run(std::uint64_t start_ns, std::uint64_t end_ns, const std::atomic<bool>& stop) {
    start_ns_ = start_ns;
    const bool open = config_.loop == Loop::Open;
    // Open loop: sleep until each send time rather than spin (two cores are
    // shared with the log's own threads), with the timer's slack cut from
    // 50 µs to 1 ns so the sleep ends on time; what it overshoots is counted
    // in the latency, measured from the intended time.
    if (open) ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    const double interval = open ? static_cast<double>(config_.producers) / config_.rate * 1e9 : 0;
    // One message per append in the closed loop: the next message is made
    // right after the last acknowledgement, so that reading of the clock
    // serves as its send time too (one clock read per message, not two).
    const bool reuse_ack_time = !open && batch_bytes_ <= body_.size();
    std::uint64_t made = 0;
    for (;;) {
      if (stop.load(std::memory_order_relaxed) ||
          (config_.cancel != nullptr && config_.cancel->load(std::memory_order_relaxed)))
        break;
      if (!open && !clocked_) {
        // A throughput pass: a message count, no clock (check_workload).
        if (made >= quota_) break;
        make(made, 0);
        ++made;
        continue;
      }
      std::uint64_t now = reuse_ack_time && made > 0 ? result_.last_ack_ns : clock();
      bool out_of_time = quota_ == 0 && now >= end_ns;
      if ((quota_ > 0 && made >= quota_) || out_of_time) break;
      if (open) {
        // Every message whose intended time has come joins its topic's batch.
        auto intended = [&](std::uint64_t i) {
          return start_ns + static_cast<std::uint64_t>(std::llround(static_cast<double>(i) * interval));
        };
        if (intended(made) > now) {
          std::uint64_t next = intended(made);
          if (next - now > 5'000) sleep_until_ns(next);
          continue;
        }
        while ((quota_ == 0 || made < quota_) && intended(made) <= now) {
          make(made, intended(made));
          ++made;
        }
        send_all();
      } else {
        make(made, now);
        ++made;
      }
    }
    send_all();
    timespec cpu{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    result_.cpu_seconds = static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9;
  }

  ProducerResult& result() noexcept { return result_; }

 private:
  // Every clock read of a message (counted: a throughput pass makes none).
  std::uint64_t clock() {
    ++result_.clock_reads;
    return iolab::steady_ns();
  }

  // Creates message `index` (sent at `send_ns`) for its topic and sends it,
  // or, when batching, adds it to the topic's batch and sends that once it
  // holds batch_bytes.
  void make(std::uint64_t index, std::uint64_t send_ns) {
    std::uint32_t topic = static_cast<std::uint32_t>((id_ + index) % config_.log.topics);
    std::uint64_t id = (std::uint64_t{id_} << 40) | index;
    if (batch_bytes_ <= body_.size()) {
      // One message per append: straight from the template, no copy.
      std::memcpy(body_.data(), &send_ns, 8);
      std::memcpy(body_.data() + 8, &id, 8);
      std::span<const std::byte> one(body_);
      acknowledged(log_.append(topic, {&one, 1}), {&send_ns, 1});
      return;
    }
    Batch& b = batches_[topic];
    std::size_t at = b.bytes.size();
    b.bytes.insert(b.bytes.end(), body_.begin(), body_.end());
    std::memcpy(b.bytes.data() + at, &send_ns, 8);
    std::memcpy(b.bytes.data() + at + 8, &id, 8);
    b.send_ns.push_back(send_ns);
    if (b.bytes.size() >= batch_bytes_) send(topic);
  }

  void send_all() {
    for (std::uint32_t t = 0; t < batches_.size(); ++t)
      if (!batches_[t].send_ns.empty()) send(t);
  }

  void send(std::uint32_t topic) {
    Batch& b = batches_[topic];
    spans_.clear();
    for (std::size_t at = 0; at < b.bytes.size(); at += body_.size()) spans_.emplace_back(b.bytes.data() + at, body_.size());
    acknowledged(log_.append(topic, spans_), b.send_ns);
    b.clear();
  }

  // Records the messages an acknowledgement covers, sent at `send_ns`.
  void acknowledged(const Ack& ack, std::span<const std::uint64_t> send_ns) {
    if (!clocked_) {
      result_.messages += send_ns.size();
      result_.bytes += send_ns.size() * body_.size();
      return;
    }
    std::uint64_t ack_ns = clock();
    for (std::uint64_t sent : send_ns) record(sent, ack_ns, body_.size());
    result_.last_ack_ns = ack_ns;
    if (ack_ns - last_sample_ns_ >= kDurableSampleEvery) {
      result_.samples.push_back({ack.log, ack.first_sequence + ack.count - 1, send_ns.back()});
      last_sample_ns_ = ack_ns;
    }
  }

  void record(std::uint64_t send_ns, std::uint64_t ack_ns, std::size_t bytes) {
    std::uint64_t latency = ack_ns > send_ns ? ack_ns - send_ns : 0;
    result_.latency.record(latency);
    result_.over[0] += latency > 1'000'000;
    result_.over[1] += latency > 10'000'000;
    result_.over[2] += latency > 100'000'000;
    result_.over[3] += latency > 1'000'000'000;
    std::size_t second = (ack_ns - start_ns_) / 1'000'000'000;
    if (second >= result_.seconds.size()) result_.seconds.resize(second + 1);
    Second& s = result_.seconds[second];
    ++s.messages;
    s.bytes += bytes;
    s.latency.record(latency);
    ++result_.messages;
    result_.bytes += bytes;
  }

  CommitLog& log_;
  const WorkloadConfig& config_;
  bool clocked_;
  unsigned id_;
  std::uint64_t quota_;
  std::size_t batch_bytes_;
  std::vector<std::byte> body_;
  std::vector<Batch> batches_;
  std::vector<std::span<const std::byte>> spans_;
  std::uint64_t start_ns_ = 0, last_sample_ns_ = 0;
  ProducerResult result_;
};

}  // namespace

void check_workload(const WorkloadConfig& c, Clocking clocking) {
  if (c.message_size < kBodyHeader || c.message_size > kMaxBodySize)
    throw UsageError("message size " + std::to_string(c.message_size),
                     "must be 16 bytes (a send time and an id) to 16 MiB");
  if (c.producers == 0) throw UsageError("producers 0", "at least one producer is needed");
  if (c.messages == 0 && !(c.seconds > 0)) throw UsageError("workload", "give a message count or a duration");
  if (c.messages == 0 && clocking == Clocking::None)
    throw UsageError("workload of " + std::to_string(c.seconds) + " s",
                     "a run that reads no clock per message sends a message count, not a duration");
  if (c.loop == Loop::Open && !(c.rate > 0)) throw UsageError("open loop", "needs a rate above 0 messages/s");
}

struct WorkloadRun::State {
  State(const WorkloadConfig& c, Clocking k) : config(c), clocking(k) {}
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

  WorkloadConfig config;
  Clocking clocking;
  DesignTraits traits{};
  std::unique_ptr<CommitLog> log;
  std::vector<std::unique_ptr<Producer>> producers;
  std::vector<std::thread> threads;
  std::thread consumer;
  std::latch go{1};
  bool released = false, closed = false, error_thrown = false;
  std::uint64_t start_ns = 0, end_ns = 0;
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
void WorkloadRun::State::consume() {
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

WorkloadRun::WorkloadRun(const std::filesystem::path& dir, const WorkloadConfig& config, Clocking clocking)
    : state_(std::make_unique<State>(config, clocking)) {
  State& s = *state_;
  check_workload(s.config, clocking);
  s.traits = traits(s.config.log.design);
  std::size_t batch_bytes =
      s.config.batch_bytes > 0 ? s.config.batch_bytes : (s.traits.batches ? s.config.log.batch_bytes : 1);
  s.log = open_commit_log(dir, s.config.log);
  for (unsigned p = 0; p < s.config.producers; ++p) {
    std::uint64_t quota = s.config.messages / s.config.producers + (p < s.config.messages % s.config.producers ? 1 : 0);
    if (s.config.messages > 0 && quota == 0) continue;
    s.producers.push_back(std::make_unique<Producer>(*s.log, s.config, clocking, p, quota, batch_bytes));
  }
  if (s.config.consumer) s.consumer = std::thread([&s] { s.consume(); });
  // The producers wait for produce(): starting threads is not the run's work.
  try {
    for (auto& p : s.producers)
      s.threads.emplace_back([&s, p = p.get()] {
        s.go.wait();
        if (s.stop.load()) return;
        try {
          p->run(s.start_ns, s.end_ns, s.stop);
        } catch (...) {
          s.fail(std::current_exception());
        }
      });
  } catch (...) {
    s.stop = true;
    throw;  // ~State joins what started
  }
}

WorkloadRun::~WorkloadRun() = default;

Produced WorkloadRun::produce() {
  State& s = *state_;
  // The clocked loops measure from here (the open loop's intended times too).
  if (s.clocking == Clocking::PerMessage || s.config.loop == Loop::Open) {
    s.start_ns = iolab::steady_ns();
    s.end_ns = s.start_ns + static_cast<std::uint64_t>(s.config.seconds * 1e9);
  }
  s.release_and_join();
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

WorkloadResult WorkloadRun::finish() {
  State& s = *state_;
  if (!s.released) s.stop = true;  // produce() never ran: send nothing
  s.release_and_join();
  WorkloadResult r;
  r.design = s.config.log.design;
  r.ack = s.traits.ack;
  std::uint64_t last_ack = s.start_ns;
  for (auto& p : s.producers) {
    ProducerResult& pr = p->result();
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
    for (const DurableSample& sample : p->result().samples) {
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

WorkloadResult run_workload(const std::filesystem::path& dir, const WorkloadConfig& config) {
  WorkloadRun run(dir, config, Clocking::PerMessage);
  run.produce();
  return run.finish();
}

}  // namespace iolab::commitlog
