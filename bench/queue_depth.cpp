// The queued methods at the device's limit, with no engine in between:
// O_DIRECT reads streamed through iolab's io layer (File::stream, the queue
// pump) for a fixed time, the way fio runs a time_based job, so the two can
// be compared side by side (bench/fio_queue_compare.sh).
//
//   queue_depth FILE [--method io_uring|libaio] [--pattern rand|seq] [--bs 4k]
//               [--qd 32] [--batch 0] [--seconds 5] [--options a,b,...] [--json]
//
// FILE is read as it is (O_DIRECT; lay it out first, e.g. with fio).
// --options: io_uring's registered_files, fixed_buffers, sqpoll,
// single_issuer, coop_taskrun. Random offsets are uniform over the file's
// whole blocks (with repeats; fio's default random map avoids them);
// sequential reads wrap at the end. Latency is per request, from the clock
// read as its submission batch is prepared to the one after the call that
// reaped it (queue_pump.h), close to fio's slat + clat. Prints IOPS, MiB/s,
// p50/p99/p99.9 latency, the mean number in flight (Little's law: summed
// latency over elapsed time), system calls per request and CPU seconds (the
// process's, SQPOLL's poller included); --json prints one JSON object.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "bench_cli.h"
#include "iolab/harness/limits.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

namespace {

using iolab::io::IoRequest;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "queue_depth: %s (see queue_depth --help)\n", why.c_str());
  std::exit(2);
}

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Reads of `bs` bytes at random or sequential block offsets until the
// deadline, into `depth` buffer slots handed back in done().
class TimedReads final : public iolab::io::RequestSource {
 public:
  TimedReads(iolab::io::Buffer& buffer, std::size_t bs, std::uint64_t blocks, bool random, std::uint64_t deadline_ns)
      : buffer_(buffer), bs_(bs), blocks_(blocks), random_(random), deadline_ns_(deadline_ns) {
    for (std::size_t s = 0; s < buffer.size() / bs; ++s) free_.push_back(s);
    latencies.reserve(std::size_t{1} << 22);
  }
  bool next(IoRequest& r) override {
    if (iolab::steady_ns() >= deadline_ns_ || free_.empty()) return false;
    const std::size_t slot = free_.back();
    free_.pop_back();
    r.kind = IoRequest::Kind::Read;
    r.offset = (random_ ? rng() % blocks_ : sequential_++ % blocks_) * bs_;
    r.data = buffer_.span().subspan(slot * bs_, bs_);
    r.tag = slot;
    return true;
  }
  void done(IoRequest& r) override {
    if (r.result != bs_)
      throw iolab::Error("read", "block at " + std::to_string(r.offset), "came back short: " + std::to_string(r.result));
    latencies.push_back(r.completed_ns - r.submitted_ns);
    free_.push_back(r.tag);
  }
  std::vector<std::uint64_t> latencies;

 private:
  std::uint64_t rng() {  // splitmix64: cheap, and every run draws the same offsets
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  iolab::io::Buffer& buffer_;
  std::size_t bs_;
  std::uint64_t blocks_;
  bool random_;
  std::uint64_t deadline_ns_, sequential_ = 0, state_ = 0x10ab;
  std::vector<std::size_t> free_;
};

void set_option(iolab::io::UringOptions& u, std::string_view name) {
  if (name == "registered_files") u.registered_files = true;
  else if (name == "fixed_buffers") u.fixed_buffers = true;
  else if (name == "sqpoll") u.sqpoll = true;
  else if (name == "single_issuer") u.single_issuer = true;
  else if (name == "coop_taskrun") u.coop_taskrun = true;
  else usage("unknown option '" + std::string(name) + "'");
}

}  // namespace

int main(int argc, char** argv) try {
  std::filesystem::path file;
  std::string method = "io_uring", pattern = "rand", options;
  std::size_t bs = 4096;
  double seconds = 5;
  bool json = false;
  iolab::io::FileOptions o;
  o.direct = true;
  CLI::App app{"A queued method through iolab's io layer alone, against fio (bench/fio_queue_compare.sh)"};
  app.add_option("FILE", file, "The file to read (O_DIRECT)")->required();
  app.add_option("--method", method, "io_uring or libaio (default io_uring)");
  app.add_option("--pattern", pattern, "rand or seq (default rand)")->check(CLI::IsMember({"rand", "seq"}));
  iolab_bench::add_size(app, "--bs", bs, "Bytes per request (default 4k)");
  app.add_option("--qd", o.queue_depth, "Requests in flight")
      ->check(CLI::Range(static_cast<unsigned>(iolab::harness::kQueueDepthBounds.min),
                         static_cast<unsigned>(iolab::harness::kQueueDepthBounds.max)));
  app.add_option("--batch", o.submit_batch, "Requests per submission (0: every freed slot in one call)");
  app.add_option("--seconds", seconds, "How long (default 5)")->check(CLI::PositiveNumber);
  app.add_option("--options", options, "io_uring setup options, comma-separated (fixed_buffers, sqpoll, ...)");
  app.add_flag("--json", json, "One JSON line");
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  for (std::size_t start = 0; start < options.size();) {
    std::size_t end = std::min(options.find(',', start), options.size());
    set_option(o.uring, std::string_view(options).substr(start, end - start));
    start = end + 1;
  }

  const iolab::io::Method& m = iolab::io::find_file_method(method);
  if (!m.traits(o).queued) usage(method + " is not a queued method");
  if (auto a = m.supports_options(o, file.parent_path()); !a.available) {
    std::fprintf(stderr, "queue_depth: %s: %s\n", method.c_str(), a.reason.c_str());
    return 1;
  }
  const std::uint64_t blocks = std::filesystem::file_size(file) / bs;
  if (blocks == 0) usage("the file holds no whole block of --bs");
  auto f = m.open(file, iolab::io::Access::Read, o);
  iolab::io::Buffer buffer(bs * o.queue_depth, iolab::io::BufferKind::Aligned);
  f->register_buffers(std::vector{buffer.span()});

  const double cpu0 = cpu_seconds();
  const std::uint64_t t0 = iolab::steady_ns();
  TimedReads source(buffer, bs, blocks, pattern == "rand", t0 + static_cast<std::uint64_t>(seconds * 1e9));
  f->stream(source, /*time_requests=*/true);
  const double elapsed = static_cast<double>(iolab::steady_ns() - t0) / 1e9;
  const double cpu = cpu_seconds() - cpu0;
  const auto poller = f->poller_cpu_ns();
  const std::uint64_t calls = f->counters().calls;
  f->close();

  auto& lat = source.latencies;
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) {
    return lat.empty() ? 0.0 : static_cast<double>(lat[std::min(lat.size() - 1, static_cast<std::size_t>(p / 100 * static_cast<double>(lat.size())))]) / 1e3;
  };
  const double ios = static_cast<double>(lat.size());
  const double iops = ios / elapsed, mib_s = iops * static_cast<double>(bs) / (1 << 20);
  const double calls_per_io = ios > 0 ? static_cast<double>(calls) / ios : 0;
  const double poller_s = poller ? static_cast<double>(*poller) / 1e9 : 0;
  // Little's law: the mean number of requests in flight is the summed
  // latency over the elapsed time; a queue kept full reads close to --qd.
  double total_latency = 0;
  for (auto l : lat) total_latency += static_cast<double>(l);
  const double in_flight = total_latency / (elapsed * 1e9);
  if (json) {
    std::printf("{\"tool\":\"iolab\",\"method\":\"%s\",\"pattern\":\"%s\",\"bs\":%zu,\"qd\":%u,\"batch\":%u,"
                "\"options\":\"%s\",\"seconds\":%.3f,\"ios\":%.0f,\"iops\":%.1f,\"mib_s\":%.2f,"
                "\"lat_us\":{\"p50\":%.2f,\"p99\":%.2f,\"p99.9\":%.2f},\"in_flight\":%.2f,\"calls_per_io\":%.3f,"
                "\"cpu_s\":%.3f,\"poller_cpu_s\":%.3f}\n",
                method.c_str(), pattern.c_str(), bs, o.queue_depth, o.submit_batch, options.c_str(), elapsed, ios, iops,
                mib_s, pct(50), pct(99), pct(99.9), in_flight, calls_per_io, cpu, poller_s);
  } else {
    std::printf("%s %s %zu B qd %u%s%s: %.0f IOPS, %.1f MiB/s, latency p50 %.1f us, p99 %.1f us, p99.9 %.1f us; "
                "%.1f in flight on average; %.0f reads in %.2f s, %.2f calls per read, CPU %.2f s%s\n",
                method.c_str(), pattern.c_str(), bs, o.queue_depth, options.empty() ? "" : " ", options.c_str(), iops,
                mib_s, pct(50), pct(99), pct(99.9), in_flight, ios, elapsed, calls_per_io, cpu,
                poller ? (" (poller " + std::to_string(poller_s) + " s)").c_str() : "");
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "queue_depth: %s\n", iolab::one_line(e.what()).c_str());
  return 1;
}
