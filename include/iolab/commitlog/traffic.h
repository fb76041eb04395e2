// The commit log's traffic: producers appending messages to a design, a
// tailing consumer reading along, and what a run measured, as plain data.
//
// Latency is measured per message from its send time to its
// acknowledgement. In the open loop the send time is the *intended* one
// (message i of a producer at start + i / rate), so a stall delays every
// message queued behind it and none of that waiting is lost (no coordinated
// omission). In the closed loop a producer sends as fast as it can and the
// send time is when it made the message: a closed-loop latency is the
// service time of an append, and a stall delays the sends queued behind it
// without counting them (coordinated omission).
//
// Nothing here times throughput: a run is driven in steps (TrafficRun) so
// that the harness's engine, through the suites' adapter
// (src/suites/commitlog_workload.cpp), times produce() as a pass. A run that
// does not clock messages (Clocking::None) reads no clock per message in
// the closed loop; per-message latency is a separate run (Clocking::PerMessage).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/commitlog/commit_log.h"
#include "iolab/base/histogram.h"

namespace iolab::commitlog {

enum class Loop { Closed, Open };
std::string_view to_string(Loop l) noexcept;

// What a run reads the clock for, per message.
enum class Clocking {
  // Nothing per message in the closed loop (a throughput pass): no latency,
  // per-second series, time to durable or consumer delay. An open loop still
  // reads the clock to pace its sends (once per round of due messages).
  None,
  // Every message's send and acknowledgement (latency, per-second series,
  // sampled time to durable) and the consumer's delay per message.
  PerMessage,
};

struct TrafficConfig {
  Options log;                      // the design and its settings (topics among them)
  std::size_t message_size = 1024;  // body bytes; at least 16 (a send time and an id lead every body)
  unsigned producers = 1;
  Loop loop = Loop::Closed;
  double rate = 0;                  // open loop: messages per second, all producers together
  std::uint64_t messages = 0;       // stop after this many in all; 0: run for `seconds` (Clocking::PerMessage only)
  double seconds = 0;
  bool consumer = true;             // a tailing consumer reads along through the design's read path
  std::optional<ReadPath> consumer_read_path;  // the consumer's, instead of the design's (tests)
  // Bytes of messages a producer gathers per append of a topic; 0: the
  // design's own (Kafka's batch.size, one message for the others).
  std::size_t batch_bytes = 0;
  std::uint64_t seed = 1;           // message contents
  // When set, the run ends early once it reads true (a Ctrl-C handler sets
  // it): producers stop, the log is closed, what was measured is returned.
  const std::atomic<bool>* cancel = nullptr;
};

// One second of the run (by acknowledgement time): a flush stall shows as a dip here.
struct SecondSample {
  double start = 0;  // seconds since the run began
  std::uint64_t messages = 0, bytes = 0;
  double p99_ns = 0, max_ns = 0;
};

struct TrafficResult {
  Design design = Design::Kafka;
  AckLevel ack = AckLevel::Written;
  std::uint64_t messages = 0, bytes = 0;  // acknowledged messages and their body bytes
  // Clocking::PerMessage: from the start to the last acknowledgement (0 otherwise).
  double seconds = 0;
  double messages_per_second = 0, mib_per_second = 0;
  LatencyHistogram append_latency;  // per message: send (intended, in the open loop) to acknowledgement
  std::uint64_t slower_than_1ms = 0, slower_than_10ms = 0, slower_than_100ms = 0, slower_than_1s = 0;
  std::vector<SecondSample> per_second;
  // Sampled messages (one per producer every 100 µs at most): from the send
  // time to the end of the sync that made them durable (for group-commit,
  // whose acknowledgement waits for that sync, the append latency).
  LatencyHistogram time_to_durable;
  std::uint64_t durable_samples = 0, not_durable_during_run = 0;
  LatencyHistogram consumer_delay;  // send to the tailing consumer reading it
  std::uint64_t consumed = 0;
  double close_seconds = 0;  // close(): the final sync of a clean shutdown, not in `seconds`
  // CPU time of the producer threads (user + system): on a busy machine,
  // messages per producer-CPU-second is what an idle one would reach when
  // the producers are what limits.
  double producer_cpu_seconds = 0;
  // CPU time of the whole process (user + system, every thread) from the
  // producers' release to the last producer's end: the producers and the
  // log's own threads (commit, flush, allocate-ahead) and a tailing consumer,
  // what a message costs in all. The log's threads work on after it (the
  // consumer's catch-up, close) uncounted, as in a caller's timed region.
  double process_cpu_seconds = 0;
  // The same window's getrusage(RUSAGE_SELF): user and system time apart,
  // and the minor page faults (a mapped design's first touches show here).
  double process_user_seconds = 0, process_system_seconds = 0;
  std::uint64_t minor_faults = 0;
  // The same window's CPU per kind of thread, seconds, by thread name:
  // log-producer, log-consumer, and the log's own (log-flush, log-commit,
  // log-touch, log-allocate, log-roll-flush); other threads of the process
  // under their own names. Threads that end inside the window (but the
  // producers, counted by themselves) are missed.
  std::map<std::string, double> thread_cpu_seconds;
  // The same window's read- and write-like system calls of the process
  // (/proc/self/io syscr, syscw: read, pread, write, pwrite(v), ...; not
  // msync, fdatasync or madvise); io_calls_counted false where the kernel
  // keeps no such count.
  bool io_calls_counted = false;
  std::uint64_t read_calls = 0, write_calls = 0;
  Stats log;                 // flushes, bytes per flush, commits, rolls, ... (Stats in commit_log.h)
  // Clock reads the producers and the consumer made while producing and
  // consuming (send and acknowledgement times, pacing, consumer delay): 0
  // for a closed-loop run under Clocking::None.
  std::uint64_t message_clock_reads = 0;
  // When close() began, on the steady clock of Stats::flush_events.
  std::uint64_t close_start_ns = 0;
  // When the run ended, on the same clock: the last acknowledgement when
  // every message is clocked, else the moment produce() found every producer
  // done (the end of a caller's timed region). Syncs done by then were done
  // during the run; the consumer's catch-up and close() come after it.
  std::uint64_t run_end_ns = 0;

  // The log's syncs split at run_end_ns (from Stats::flush_events).
  struct RunSyncs {
    std::uint64_t during_run = 0;        // done by the end of the run
    std::uint64_t after_run = 0;         // done after it: during the consumer's catch-up and close()
    std::uint64_t durable_messages = 0;  // acknowledged messages the syncs during the run made durable
  };
  RunSyncs syncs() const;

  double messages_per_flush() const noexcept;
  double bytes_per_flush() const noexcept;
  // Mean of the flush calls' latency (each fdatasync or msync round), seconds.
  double mean_flush_seconds() const noexcept;
};

// Throws UsageError for a configuration a run cannot do under `clocking`.
void check_traffic(const TrafficConfig& config, Clocking clocking);

// What the producers acknowledged in produce().
struct Produced {
  std::uint64_t messages = 0, bytes = 0;
};

// One run in steps. The constructor opens a log of `config.log.design` in
// `dir` (an empty directory iolab made), starts the tailing consumer and the
// producer threads, which wait; produce() releases them and returns once
// every producer has sent its messages; finish() lets the consumer catch up,
// closes the log and returns what the run measured. Only produce() is the
// run's work: a caller times it alone. Throws UsageError for a bad
// configuration and Error for a failure of the log (produce() throws the
// first failure of a producer or the consumer; finish() closes the log then).
class TrafficRun {
 public:
  TrafficRun(const std::filesystem::path& dir, const TrafficConfig& config, Clocking clocking);
  ~TrafficRun();  // stops and joins what is still running, closes the log
  TrafficRun(const TrafficRun&) = delete;
  TrafficRun& operator=(const TrafficRun&) = delete;

  Produced produce();
  TrafficResult finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// One run with every message clocked (Clocking::PerMessage), start to finish.
TrafficResult run_traffic(const std::filesystem::path& dir, const TrafficConfig& config);

}  // namespace iolab::commitlog
