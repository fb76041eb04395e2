// Synthetic results for the report tests: records with the shape `iolab run`
// writes (samples, calls, faults, CPU, latency), with figures chosen by the test.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::testing {

inline constexpr double kMiB = 1024.0 * 1024.0;

struct Spec {
  std::string suite = "packet-sweep";
  std::string experiment = "read";
  std::string method = "pread";
  std::string op = "read";
  std::uint64_t block = 4096;
  std::uint64_t file = 8u << 20;
  double mib_s = 1000;  // median throughput
  double spread = 0.02; // repetitions at median * (1 +- spread), evenly spaced
  unsigned reps = 5;
  std::string cache = "warm";
  std::string sync = "none";
  std::string buffer = "heap";
  unsigned passes = 0;  // passes per repetition; 0: as the engine picks them, so a repetition lasts >= 0.1 s
};

// Samples placed symmetrically around the median, so the median is exact.
inline results::Result make(const Spec& s) {
  results::Result r;
  r.suite = s.suite;
  r.experiment = s.experiment;
  r.method = s.method;
  r.op = results::parse_op_name(s.op);
  r.block_size = s.block;
  r.file_size = s.file;
  r.bytes = s.file;
  r.ops = s.file / s.block;
  r.buffer = s.buffer.empty() ? std::nullopt : std::optional(io::parse_buffer_kind(s.buffer));
  r.cache = s.cache.empty() ? std::nullopt : std::optional(results::parse_cache_name(s.cache));
  r.cache_method = s.cache == "cold" ? "drop_caches" : s.cache == "warm" ? "read once" : "";
  if (s.cache == "cold") r.resident_fraction = 0.0;
  if (s.cache == "warm") r.resident_fraction = 1.0;
  r.sync = io::parse_flush_policy(s.sync);
  r.reps = s.reps;
  double pass_s = static_cast<double>(s.file) / kMiB / s.mib_s;
  r.passes = s.passes ? s.passes : static_cast<unsigned>(std::max(1.0, std::ceil(0.1 / pass_s)));
  // Bytes, calls, faults and CPU are per repetition: `passes` times one pass's.
  r.bytes *= r.passes;
  r.ops *= r.passes;
  double median = pass_s * r.passes;
  for (unsigned i = 0; i < s.reps; ++i) {
    double k = s.reps == 1 ? 0 : -1.0 + 2.0 * i / (s.reps - 1);  // -1 .. +1
    r.samples_s.push_back(median * (1 + s.spread * k));
  }
  bool mapped = s.method.rfind("mmap", 0) == 0;
  r.io_calls = mapped ? 0 : r.ops;
  r.minor_faults = (mapped ? static_cast<std::int64_t>(s.file / 4096) : 3) * r.passes;
  r.user_s = median * (mapped ? 0.7 : 0.2);
  r.sys_s = median * (mapped ? 0.3 : 0.8);
  double per_op_ns = pass_s / static_cast<double>(s.file / s.block) * 1e9;
  r.latency_ns = results::Latency{per_op_ns, per_op_ns * 1.5, per_op_ns * 4, per_op_ns * 12, per_op_ns * 40,
                                  s.file / s.block, results::LatencySource::EveryCall};
  r.verified = true;
  return r;
}

inline results::Environment environment() {
  results::Environment e;
  e.hostname = "testhost";
  e.cpu_model = "Synthetic CPU";
  e.cores = 2;
  e.ram_bytes = 24ull << 30;
  e.kernel = "6.18.0";
  e.scratch_dir = "/tmp/iolab-test";
  e.fs_type = "ext4";
  e.mount_options = "rw,relatime";
  e.device = "vda";
  e.rotational = false;
  e.scheduler = "mq-deadline";
  e.iolab_version = "0.1.0";
  e.compiler = "gcc 12";
  e.build_type = "Release";
  e.root = true;
  e.can_drop_caches = true;
  e.created = "2026-11-29T18:00:00Z";
  e.command = "iolab run (synthetic)";
  return e;
}

// The direct suite's queue-depth curve at depths 1, 4, 16: io_uring and
// libaio (one thread, queue_depth = depth) and `depth` threads of O_DIRECT
// pread, each with extra.total_depth.
inline std::vector<results::Result> queue_depth_curve(const std::string& experiment = "QD curve: random 4k O_DIRECT reads x 256") {
  std::vector<results::Result> out;
  for (unsigned depth : {1u, 4u, 16u}) {
    for (const char* m : {"io_uring", "libaio"}) {
      results::Result r = make({"direct", experiment, m, "read", 4096, 1u << 20, 40.0 * depth, 0.02, 5, "direct"});
      r.pattern = results::AccessPattern::Rand;
      r.queue_depth = depth;
      r.extra["total_depth"] = depth;
      r.latency_ns->p50 = 50e3 * depth;
      r.latency_ns->p99 = 400e3 * depth;
      out.push_back(r);
    }
    results::Result t = make({"direct", experiment, "direct", "read", 4096, 1u << 20, 30.0 * depth, 0.02, 5, "direct"});
    t.pattern = results::AccessPattern::Rand;
    t.threads = depth;
    t.queue_depth = 1;
    t.extra["total_depth"] = depth;
    out.push_back(t);
  }
  return out;
}

// A run shaped like the seed suites: several suites and families, published
// references, a skipped method, a noisy run, a "cold" run that was not cold,
// and a job whose name is markup.
inline results::Results realistic() {
  results::Results rs;
  rs.environment = environment();
  auto add = [&](Spec s) { rs.results.push_back(make(s)); return &rs.results.back(); };
  // seq-read: 1 KiB .. 10 MiB, warm and cold; mmap shines at small buffers.
  for (std::string cache : {"warm", "cold"})
    for (std::uint64_t bs : {1024ull, 1ull << 20, 10ull << 20}) {
      double scale = cache == "warm" ? 1.0 : 0.25;
      double small = bs == 1024 ? 0.12 : 1.0;
      add({"seq-read", "read 1.73g-style file", "iostream", "read", bs, 40u << 20, 900 * scale * small, 0.03, 5, cache});
      add({"seq-read", "read 1.73g-style file", "syscall", "read", bs, 40u << 20, 2000 * scale * (bs == 1024 ? 0.1 : 1), 0.02, 5, cache});
      auto* a = add({"seq-read", "read 1.73g-style file", "syscall", "read", bs, 40u << 20, 2600 * scale * (bs == 1024 ? 0.1 : 1), 0.02, 5,
                     cache, "none", "aligned"});
      auto* m = add({"seq-read", "read 1.73g-style file", "mmap", "read", bs, 40u << 20, 1800 * scale, 0.04, 5, cache});
      if (cache == "warm" && bs == 1024)
        m->reference = results::Reference{"seed 001: Java MappedByteBuffer, i7-8750H, SSD; ~733 ms for 1.73 GB", 2250, "MiB/s"};
      if (cache == "warm" && bs == 1ull << 20)
        a->reference = results::Reference{"seed 001: Java FileChannel direct buffer, i7-8750H, SSD; ~318 ms", 5190, "MiB/s"};
    }
  // A skipped method with its reason.
  results::Result skipped;
  skipped.suite = "seq-read";
  skipped.experiment = "read 1.73g-style file";
  skipped.method = "io_uring";
  skipped.op = results::Op::Read;
  skipped.block_size = 1024;
  skipped.cache = results::CacheState::Warm;
  skipped.skipped = "io_uring is disabled (/proc/sys/kernel/io_uring_disabled = 2)";
  rs.results.push_back(skipped);
  // A cold run that was not cold, and a noisy one.
  auto* notcold = add({"seq-read", "read 1.73g-style file", "stdio", "read", 1u << 20, 40u << 20, 700, 0.03, 5, "cold"});
  notcold->resident_fraction = 0.31;
  add({"seq-read", "read 1.73g-style file", "stdio", "read", 1024, 40u << 20, 150, 0.03, 5, "cold"});
  auto* noisy = add({"seq-read", "read 1.73g-style file", "stdio", "read", 10u << 20, 40u << 20, 600, 0.4, 5, "cold"});
  noisy->warn(results::WarningKind::Outliers, "noisy: cv 32% over 5 repetitions");

  // packet-sweep: reads and writes, 32 B .. 1 MiB.
  for (std::uint64_t bs = 32; bs <= (1u << 20); bs *= 8) {
    double b = static_cast<double>(bs);
    add({"packet-sweep", "read packets", "mmap", "read", bs, 8u << 20, std::min(3000.0, 40 * std::sqrt(b) * 3), 0.03});
    add({"packet-sweep", "read packets", "pread", "read", bs, 8u << 20, std::min(6000.0, b * 1.6), 0.03});
    add({"packet-sweep", "read packets", "stdio", "read", bs, 8u << 20, std::min(2500.0, 400 + b * 0.4), 0.03});
    add({"packet-sweep", "write packets to a fresh file", "mmap", "write", bs, 8u << 20, std::min(1500.0, 30 * std::sqrt(b) * 2), 0.03, 5, ""});
    add({"packet-sweep", "write packets to a fresh file", "pread", "write", bs, 8u << 20, std::min(2200.0, b * 1.1), 0.03, 5, ""});
  }
  for (std::string sync : {"async-16k:msync", "async-16k:fdatasync"}) {
    bool mmap = sync.find("msync") != std::string::npos;
    add({"packet-sweep", "write 8m in 1k packets, flush every 16k", mmap ? "mmap" : "pread", "write", 1024, 8u << 20,
         mmap ? 90.0 : 420.0, 0.05, 5, "", sync});
  }
  for (auto& r : queue_depth_curve()) rs.results.push_back(r);
  // A job file whose name is markup: must show as text.
  add({"<script>alert(1)</script>", "job <b>bold</b> & \"quoted\"", "pread", "read", 4096, 4u << 20, 3000, 0.02, 3});
  add({"<script>alert(1)</script>", "job <b>bold</b> & \"quoted\"", "pread", "read", 65536, 4u << 20, 5000, 0.02, 3});
  return rs;
}

}  // namespace iolab::testing
