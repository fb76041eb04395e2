// The floors under the commit-log designs (issue 45): each mechanism as a
// plain C loop would write it, with none of iolab's machinery (no staging,
// no placement, no index, no counters): one producer appends records of a
// 16-byte header (length, CRC32C of the body computed on the append path,
// sequence) and the body to a fresh file in the scratch directory.
//
//   pwrite       records gathered into a 16 KiB buffer, one pwrite(2) per
//                full buffer (Kafka's batch, ActiveMQ's write batch)
//   mmap         a preallocated segment (fallocate, then mmap MAP_SHARED,
//                both outside the timed region), records copied into the
//                mapping; the first touch of each page faults inside it
//   mmap-warm    the same with every page faulted in for writing when the
//                segment is made (RocketMQ's warmMappedFile), outside the
//                timed region
//   ring         records copied into an aligned ring (commitlog_bench passes
//                --transient-buffer, the design's 64 MiB unless given; the JVM
//                reference of issue 45 used 16m); a commit thread pwrites what it holds
//                every --commit-interval-ms or when half full; a record is
//                acknowledged once copied (rocketmq-transient's promise)
//
// With msync_ms > 0 the mapped floors run a flush thread that msyncs what
// is dirty every msync_ms once >= 16 KiB are (RocketMQ's FlushRealTimeService).
// Timed: the first record through the last one acknowledged (the designs'
// messages/s stops there too); the file's creation, close and removal are
// not timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace iolab_bench {

enum class Floor { Pwrite, Mmap, MmapWarm, Ring };
inline constexpr Floor kAllFloors[] = {Floor::Pwrite, Floor::Mmap, Floor::MmapWarm, Floor::Ring};
std::string_view to_string(Floor f) noexcept;
Floor parse_floor(std::string_view name);  // throws iolab::UsageError

struct FloorConfig {
  std::uint64_t messages = 262144;
  std::size_t message_size = 1024;
  std::size_t batch = 16384;             // pwrite's buffer
  std::uint64_t segment = 1ull << 30;    // the mapped floors' file (>= what the run writes)
  std::size_t ring = 16u << 20;          // ring's buffer
  double commit_interval_ms = 200;       // ring's commit thread
  double msync_ms = 0;                   // mapped floors' flush thread; 0: none
};

// Per run, what the designs' rows print: rate, and per message the
// process's user and system time and minor faults (getrusage over the timed
// region) and each thread's CPU.
struct FloorResult {
  std::uint64_t messages = 0;
  double seconds = 0;
  double user_s = 0, system_s = 0;
  long minor_faults = 0;
  std::uint64_t syscalls = 0;  // pwrite and msync calls made
  std::uint64_t msyncs = 0;
  double producer_cpu_s = 0, helper_cpu_s = 0;  // helper: the commit or flush thread
};

FloorResult run_floor(Floor f, const FloorConfig& c, const std::filesystem::path& dir);

}  // namespace iolab_bench
