// Runs commit-log designs with the workload driver and prints what they did:
// messages/s, MiB/s, append latency percentiles, stalls, flushes, time to
// durable, the consumer's delay; with --series, the per-second throughput and
// p99; with --catch-up, whole-log reads warm and cold by pread, mmap and
// sendfile. For group-commit it also prints the bound the flushes allow
// (messages per flush / mean fdatasync latency, from the same run) and the
// fraction of it reached (docs/performance.md).
//
//   commitlog_bench [--design kafka,rocketmq,...] [--size 1k] [--producers 1] [--topics 1]
//                   [--messages N | --seconds S] [--rate MSGS_PER_S] [--segment 1g] [--batch 16k]
//                   [--flush-interval-ms 10] [--flush-min 16k] [--no-flush]
//                   [--warm-up] [--touch-ahead 16m | --no-touch-ahead]
//                   [--transient-buffer 64m] [--commit-interval-ms 200]
//                   [--no-consumer | --consumer-pairs] [--catch-up] [--series] [--bare] [--throughput]
//                   [--floors pwrite,mmap,mmap-warm,ring|all] [--floor-msync-ms 0]
//                   [--dir PARENT] [--reps N]
//
// --floors runs plain C loops of the designs' mechanisms beside them, in the
// same interleaved order (commitlog_floors.h): the floor each design is held
// against (issue 45). Every row, design or floor, prints per message the
// process's user and system time and minor faults over the timed region.
//
// --bare runs, beside each design, the same design as its bare mechanism
// (after it in odd repetitions, before it in even ones):
// no index (kafka's offset index, the per-topic index), so what the index
// costs is the difference of the two rows. (bench/commitlog_vs_java.sh
// runs every row at the Java reference's 16 MiB ring: --transient-buffer.)
//
// --consumer-pairs runs each design twice a repetition, with a tailing
// consumer and without one, the order swapped every repetition (as --bare),
// and ends with what a consumer leaves of the producer-only rate per
// design: each pair's ratio, their median, and the paired ratio interval
// the decision uses (harness::paired_ratio_interval, 95%: 6 or more
// repetitions). Runs back to back share the machine's moment; runs in
// separate invocations minutes apart do not (issue 45's bar: >= 0.8).
//
// --throughput times each design's run as the floors and the Java reference
// time theirs: two clock reads around the whole run, none per message
// (Clocking::None), so no latency figures; without it every message is
// clocked (the latency percentiles), which costs the design rows ~2 clock
// reads and a histogram entry per message that the floors do not pay.
//
// Every design runs in a fresh scratch directory under --dir (default $TMPDIR
// or /tmp), removed afterwards. --reps runs each design N times, interleaved,
// and prints every run.
#include <algorithm>
#include <atomic>
#include <map>
#include <span>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench_cli.h"
#include "commitlog_floors.h"
#include "iolab/commitlog/traffic.h"
#include "iolab/harness/comparison.h"
#include "iolab/harness/job.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/base/proc.h"
#include "iolab/io/scratch.h"
#include "iolab/base/units.h"

namespace {

using namespace iolab;

// Ctrl-C ends the current run early; its files are removed before exiting.
std::atomic<bool> g_cancel{false};
extern "C" void on_signal(int) { g_cancel.store(true); }

using namespace iolab::commitlog;

struct Args {
  std::vector<Design> designs{std::begin(kAllDesigns), std::end(kAllDesigns)};
  std::vector<iolab_bench::Floor> floors;
  double floor_msync_ms = 0;
  TrafficConfig config;
  std::filesystem::path dir;
  bool catch_up_reads = false, series = false, bare = false, throughput = false, consumer_pairs = false;
  unsigned reps = 1;
};

// The options, read with CLI11 and base's parsers; --help and bad usage exit (0 and 2).
Args parse(int argc, char** argv) {
  Args a;
  a.config.messages = 1'000'000;
  a.config.log.segment_size = std::uint64_t{1} << 30;
  CLI::App app{"Commit-log designs under the workload driver (docs/performance.md)"};
  app.add_option_function<std::string>(
      "--design",
      [&](const std::string& list) {
        a.designs.clear();
        if (list == "none") return;  // floors alone
        for (const auto& d : harness::split_list(list, "--design")) a.designs.push_back(parse_design(d));
      },
      "Designs, comma-separated, or none (default: all)");
  app.add_option_function<std::string>(
      "--floors",
      [&](const std::string& list) {
        a.floors.clear();
        if (list == "all") {
          a.floors.assign(std::begin(iolab_bench::kAllFloors), std::end(iolab_bench::kAllFloors));
          return;
        }
        for (const auto& f : harness::split_list(list, "--floors")) a.floors.push_back(iolab_bench::parse_floor(f));
      },
      "Plain loops beside the designs: pwrite, mmap, mmap-warm, ring, or all (default none)");
  app.add_option("--floor-msync-ms", a.floor_msync_ms, "The mapped floors' flush thread interval (0: none)")
      ->check(CLI::NonNegativeNumber);
  iolab_bench::add_size(app, "--size", a.config.message_size, "Message size (default the driver's)");
  app.add_option("--producers", a.config.producers, "Producer threads")->check(CLI::PositiveNumber);
  app.add_option("--topics", a.config.log.topics, "Topics")->check(CLI::PositiveNumber);
  app.add_option_function<std::uint64_t>(
      "--messages", [&](std::uint64_t n) { a.config.messages = n, a.config.seconds = 0; }, "Messages per run")
      ->check(CLI::PositiveNumber);
  app.add_option_function<double>(
      "--seconds", [&](double s) { a.config.seconds = s, a.config.messages = 0; }, "Seconds per run instead")
      ->check(CLI::PositiveNumber);
  app.add_option_function<double>(
      "--rate", [&](double r) { a.config.loop = Loop::Open, a.config.rate = r; }, "Open loop at this many msg/s")
      ->check(CLI::PositiveNumber);
  iolab_bench::add_size(app, "--segment", a.config.log.segment_size, "Segment size (default 1g)");
  iolab_bench::add_size(app, "--batch", a.config.log.batch_bytes, "Batch bytes");
  auto ms = [](double v) { return std::chrono::microseconds(static_cast<long>(v * 1000)); };
  app.add_option_function<double>(
      "--flush-interval-ms", [&](double v) { a.config.log.flush_interval = ms(v); }, "Flush thread interval")
      ->check(CLI::NonNegativeNumber);
  iolab_bench::add_size(app, "--flush-min", a.config.log.flush_min_bytes, "Least dirty bytes a flush syncs");
  // The flush threads never find enough to sync (close still syncs): a
  // design's write path without its flushing, for hypothesis (b).
  app.add_flag_callback(
      "--no-flush",
      [&] {
        a.config.log.flush_min_bytes = SIZE_MAX;
        a.config.log.flush_thorough_interval = std::chrono::hours(24 * 365);
      },
      "No flushing but at close");
  iolab_bench::add_size(app, "--transient-buffer", a.config.log.transient_buffer, "rocketmq-transient's buffer");
  app.add_option_function<double>(
      "--commit-interval-ms", [&](double v) { a.config.log.commit_interval = ms(v); }, "Commit thread interval")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--warm-up", a.config.log.warm_up, "Pre-fault segments (rocketmq's warm-up)");
  iolab_bench::add_size(app, "--touch-ahead", a.config.log.touch_ahead,
                        "Mapped designs: how far ahead of the writer a thread faults pages in (default 16m)");
  app.add_flag_callback("--no-touch-ahead", [&] { a.config.log.touch_ahead = 0; }, "Appends fault pages in themselves");
  app.add_flag_callback("--no-consumer", [&] { a.config.consumer = false; }, "No tailing consumer");
  app.add_flag("--catch-up", a.catch_up_reads, "Whole-log reads warm and cold afterwards");
  app.add_flag("--series", a.series, "Per-second throughput and p99");
  app.add_flag("--throughput", a.throughput, "No clock per message: messages/s of the whole run, no latency");
  app.add_flag("--bare", a.bare, "After each design, its bare mechanism: no index");
  app.add_option("--dir", a.dir, "Parent of the scratch directories (default $TMPDIR or /tmp)");
  app.add_option("--reps", a.reps, "Runs of each design, interleaved")->check(CLI::PositiveNumber);
  app.add_flag("--consumer-pairs", a.consumer_pairs,
               "Each design with and without a tailing consumer, back to back; the rate a consumer leaves");
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) std::exit(rc);
  if (a.consumer_pairs && !a.config.consumer)
    throw UsageError("--consumer-pairs", "runs with and without a consumer itself: not with --no-consumer");
  if (a.consumer_pairs && a.bare) throw UsageError("--consumer-pairs", "not with --bare: one pair of runs at a time");
  return a;
}

std::string ns(double v) { return format_duration(v / 1e9); }

void print_result(const TrafficResult& r, const Args& a, const TrafficConfig& c, std::string_view label) {
  const auto& l = r.append_latency;
  const std::string name = std::string(to_string(r.design)) + std::string(label);
  if (a.throughput)
    std::printf("%-19s %9s msg/s %8.1f MiB/s  (throughput pass: no clock per message)\n", name.c_str(),
                format_count(r.messages_per_second).c_str(), r.mib_per_second);
  else
  std::printf("%-19s %9s msg/s %8.1f MiB/s  p50 %8s p99 %8s p99.9 %8s max %8s  >1ms %llu >10ms %llu >100ms %llu >1s %llu\n",
              name.c_str(), format_count(r.messages_per_second).c_str(), r.mib_per_second,
              ns(l.percentile(0.5)).c_str(), ns(l.percentile(0.99)).c_str(), ns(l.percentile(0.999)).c_str(),
              ns(static_cast<double>(l.max())).c_str(), static_cast<unsigned long long>(r.slower_than_1ms),
              static_cast<unsigned long long>(r.slower_than_10ms), static_cast<unsigned long long>(r.slower_than_100ms),
              static_cast<unsigned long long>(r.slower_than_1s));
  double n = r.messages > 0 ? static_cast<double>(r.messages) : 1;
  std::printf("    per message: user %.0f ns, system %.0f ns, minor faults %.3f (process, producers' window)\n",
              r.process_user_seconds * 1e9 / n, r.process_system_seconds * 1e9 / n,
              static_cast<double>(r.minor_faults) / n);
  std::printf("    per message by thread (CPU ns, share of all threads'):");
  for (const auto& [thread, cpu] : r.thread_cpu_seconds)
    if (cpu * 1e9 / n >= 0.5)
      std::printf(" %s %.0f (%.0f%%)", thread.c_str(), cpu * 1e9 / n,
                  r.process_cpu_seconds > 0 ? 100 * cpu / r.process_cpu_seconds : 0.0);
  std::printf("\n");
  const TrafficResult::RunSyncs syncs = r.syncs();
  if (r.io_calls_counted)
    std::printf("    per message: write calls %.4f, read calls %.4f (/proc/self/io), syncs (%s) %.4f during the run\n",
                static_cast<double>(r.write_calls) / n, static_cast<double>(r.read_calls) / n,
                traits(r.design).writes_through_map ? "msync" : "fdatasync", static_cast<double>(syncs.during_run) / n);
  auto per_cpu_s = [&](double cpu) { return format_count(cpu > 0 ? static_cast<double>(r.messages) / cpu : 0); };
  std::printf("    %llu messages in %.3f s, acknowledged %s; close (final sync) %s; producers' CPU %.3f s = %s msg per CPU-second; "
              "all threads' CPU %.3f s = %s msg per CPU-second\n",
              static_cast<unsigned long long>(r.messages), r.seconds, std::string(to_string(r.ack)).c_str(),
              format_duration(r.close_seconds).c_str(), r.producer_cpu_seconds, per_cpu_s(r.producer_cpu_seconds).c_str(),
              r.process_cpu_seconds, per_cpu_s(r.process_cpu_seconds).c_str());
  std::printf("    flushes %llu (%.1f messages, %s each; flush call p50 %s p99 %s mean %s); commits %llu; buffer-full waits %llu\n",
              static_cast<unsigned long long>(r.log.flushes), r.messages_per_flush(),
              format_bytes(r.bytes_per_flush()).c_str(), ns(r.log.flush_latency.percentile(0.5)).c_str(),
              ns(r.log.flush_latency.percentile(0.99)).c_str(), format_duration(r.mean_flush_seconds()).c_str(),
              static_cast<unsigned long long>(r.log.commits), static_cast<unsigned long long>(r.log.buffer_full_waits));
  if (r.durable_samples + r.not_durable_during_run > 0)
    std::printf("    time to durable p50 %s p99 %s max %s (%llu samples; %llu not durable before the run ended)\n",
                ns(r.time_to_durable.percentile(0.5)).c_str(), ns(r.time_to_durable.percentile(0.99)).c_str(),
                ns(static_cast<double>(r.time_to_durable.max())).c_str(),
                static_cast<unsigned long long>(r.durable_samples),
                static_cast<unsigned long long>(r.not_durable_during_run));
  if (c.consumer)
    std::printf("    consumer read %llu, delay p50 %s p99 %s max %s\n", static_cast<unsigned long long>(r.consumed),
                ns(r.consumer_delay.percentile(0.5)).c_str(), ns(r.consumer_delay.percentile(0.99)).c_str(),
                ns(static_cast<double>(r.consumer_delay.max())).c_str());
  std::printf("    rolls %llu on the append path (p50 %s max %s, %llu waited for the next segment); %llu segments made ahead in %s%s%s\n",
              static_cast<unsigned long long>(r.log.rolls), ns(r.log.roll_latency.percentile(0.5)).c_str(),
              ns(static_cast<double>(r.log.roll_latency.max())).c_str(), static_cast<unsigned long long>(r.log.roll_waits),
              static_cast<unsigned long long>(r.log.segments_allocated_ahead),
              format_duration(static_cast<double>(r.log.allocate_ahead_ns) / 1e9).c_str(),
              r.log.warm_up_note.empty() ? "" : "; warm-up: ", r.log.warm_up_note.c_str());
  if (r.log.touched_ahead_bytes > 0)
    std::printf("    touched ahead of the writer: %.1f MiB\n",
                static_cast<double>(r.log.touched_ahead_bytes) / (1 << 20));
  if (r.design == Design::GroupCommit && r.mean_flush_seconds() > 0) {
    double bound = r.messages_per_flush() / r.mean_flush_seconds();
    std::printf("    group commit: %.2f messages per fdatasync; bound = messages per flush / mean flush = %s msg/s; "
                "reached %.2fx of it\n",
                r.messages_per_flush(), format_count(bound).c_str(), r.messages_per_second / bound);
  }
  if (a.series) {
    std::printf("    second  messages/s      MiB/s        p99        max\n");
    for (const auto& s : r.per_second)
      std::printf("    %6.0f %11s %10.1f %10s %10s\n", s.start, format_count(static_cast<double>(s.messages)).c_str(),
                  static_cast<double>(s.bytes) / (1024.0 * 1024.0), ns(s.p99_ns).c_str(), ns(s.max_ns).c_str());
  }
}

void run_floor_row(iolab_bench::Floor f, const Args& a) {
  iolab_bench::FloorConfig c;
  c.messages = a.config.messages;
  c.message_size = a.config.message_size;
  if (a.config.batch_bytes > 0) c.batch = a.config.batch_bytes;
  c.segment = a.config.log.segment_size;
  c.ring = a.config.log.transient_buffer;
  c.commit_interval_ms = static_cast<double>(a.config.log.commit_interval.count()) / 1e6;
  c.msync_ms = a.floor_msync_ms;
  io::ScratchDir scratch(a.dir);
  iolab_bench::FloorResult r = iolab_bench::run_floor(f, c, scratch.path());
  double n = static_cast<double>(r.messages);
  std::printf("%-19s %9s msg/s %8.1f MiB/s\n", std::string(iolab_bench::to_string(f)).c_str(),
              format_count(n / r.seconds).c_str(), n * static_cast<double>(c.message_size) / r.seconds / (1 << 20));
  std::printf("    per message: user %.0f ns, system %.0f ns, minor faults %.3f, system calls %.4f, msyncs %.4f "
              "(process, timed region); producer CPU %.3f s, commit/flush thread %.3f s, in %.3f s\n",
              r.user_s * 1e9 / n, r.system_s * 1e9 / n, static_cast<double>(r.minor_faults) / n,
              static_cast<double>(r.syscalls) / n, static_cast<double>(r.msyncs) / n, r.producer_cpu_s, r.helper_cpu_s,
              r.seconds);
}

// A run timed as a whole: produce() between two clock reads, nothing per message.
TrafficResult run_unclocked(const std::filesystem::path& dir, const TrafficConfig& c) {
  TrafficRun run(dir, c, Clocking::None);
  const std::uint64_t start = steady_ns();
  const Produced produced = run.produce();
  const std::uint64_t end = steady_ns();
  TrafficResult r = run.finish();
  r.seconds = static_cast<double>(end - start) / 1e9;
  if (r.seconds > 0) {
    r.messages_per_second = static_cast<double>(produced.messages) / r.seconds;
    r.mib_per_second = static_cast<double>(produced.bytes) / r.seconds / (1024.0 * 1024.0);
  }
  return r;
}

void print_catch_up(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename();
    if (name == "log" || name.starts_with("topic-")) logs.push_back(e.path());
  }
  for (bool cold : {false, true})
    for (ReadPath p : {ReadPath::Pread, ReadPath::Mmap, ReadPath::Sendfile}) {
      CatchUpResult c = catch_up(logs, p, cold);
      std::printf("    catch-up %-8s %s: %s in %s = %s (%s msg/s, %llu calls, %.0f%% cached before)\n",
                  std::string(to_string(p)).c_str(), cold ? "cold" : "warm",
                  format_bytes(static_cast<double>(c.bytes)).c_str(), format_duration(c.seconds).c_str(),
                  format_rate(static_cast<double>(c.bytes) / c.seconds).c_str(),
                  format_count(static_cast<double>(c.messages) / c.seconds).c_str(),
                  static_cast<unsigned long long>(c.calls), c.resident_before * 100);
    }
}

// Each design's producer rate with a tailing consumer and without one, a
// pair per repetition.
struct ConsumerPairs {
  std::vector<double> consumed, alone;
};

void print_consumer_pairs(const Args& a, const std::map<Design, ConsumerPairs>& pairs) {
  std::printf("\nkept with a tailing consumer (rate with one / rate without, per back-to-back pair):\n");
  for (Design d : a.designs) {
    auto it = pairs.find(d);
    if (it == pairs.end()) continue;
    const ConsumerPairs& p = it->second;
    const std::size_t n = std::min(p.consumed.size(), p.alone.size());
    std::vector<double> ratios;
    for (std::size_t i = 0; i < n; ++i) ratios.push_back(p.alone[i] > 0 ? p.consumed[i] / p.alone[i] : 0);
    std::printf("%-19s", std::string(to_string(d)).c_str());
    for (double r : ratios) std::printf(" %.2f", r);
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.empty() ? 0
                          : sorted.size() % 2 ? sorted[sorted.size() / 2]
                                              : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf("; median %.2f", median);
    const harness::RatioInterval ri = harness::paired_ratio_interval(std::span(p.alone).first(n), std::span(p.consumed).first(n));
    if (ri.available)
      std::printf("; paired estimate %.2f [%.2f, %.2f] (%.1f%%, %zu pairs)\n", ri.estimate, ri.lo, ri.hi, 100 * ri.coverage, n);
    else
      std::printf("; no 95%% interval from %zu pairs (6 or more)\n", n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Args a = parse(argc, argv);
    std::printf("commitlog_bench: %s messages of %s, %u producer(s), %u topic(s), %s loop%s, segments of %s\n",
                a.config.messages ? format_count(static_cast<double>(a.config.messages)).c_str()
                                  : (std::to_string(a.config.seconds) + " s of").c_str(),
                format_bytes(static_cast<double>(a.config.message_size)).c_str(), a.config.producers,
                a.config.log.topics, std::string(to_string(a.config.loop)).c_str(),
                a.config.loop == Loop::Open ? (" at " + format_count(a.config.rate) + " msg/s").c_str() : "",
                format_bytes(static_cast<double>(a.config.log.segment_size)).c_str());
    std::printf("    ");
    for (const auto& [name, value] : proc::vm_dirty_settings())
      std::printf("vm.%s=%lld ", name.c_str(), static_cast<long long>(value));
    std::printf("\n");
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    a.config.cancel = &g_cancel;
    std::map<Design, ConsumerPairs> pairs;
    for (unsigned rep = 0; rep < a.reps && !g_cancel.load(); ++rep) {
      for (auto f : a.floors) {
        if (g_cancel.load()) break;
        run_floor_row(f, a);
        std::fflush(stdout);
      }
      // With --bare (or --consumer-pairs), the two runs of a design swap
      // places every repetition: a run's speed here depends on what ran
      // just before it (memory the previous run freed), which must not
      // favour either.
      const bool swap = (a.bare || a.consumer_pairs) && rep % 2 == 1;
      for (Design d : a.designs)
        for (bool second : {false, true}) {
          const bool other = second != swap;  // the bare run, or the run without a consumer
          if (g_cancel.load() || (!a.bare && !a.consumer_pairs && second)) break;
          io::ScratchDir scratch(a.dir);
          TrafficConfig c = a.config;
          c.log.design = d;
          if (a.bare && other) c.log.indexes = false;
          if (a.consumer_pairs) c.consumer = !other;
          try {
            TrafficResult r = a.throughput ? run_unclocked(scratch.path(), c) : run_traffic(scratch.path(), c);
            print_result(r, a, c, a.bare && other ? " bare" : a.consumer_pairs && other ? " alone" : "");
            if (a.consumer_pairs) (other ? pairs[d].alone : pairs[d].consumed).push_back(r.messages_per_second);
            if (a.catch_up_reads) print_catch_up(scratch.path());
          } catch (...) {
            remove_log_files(scratch.path());
            throw;
          }
          remove_log_files(scratch.path());
          std::fflush(stdout);
        }
    }
    if (a.consumer_pairs) print_consumer_pairs(a, pairs);
    if (g_cancel.load()) {
      std::fprintf(stderr, "commitlog_bench: interrupted; the last run is partial\n");
      return 130;
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "commitlog_bench: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commitlog_bench: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
