// The per-second series of a memory-suite record: a thread that wakes every
// second while a pass runs and notes the bytes delivered, the process's
// major faults, the cgroup's page-cache bytes and the machine's TLB
// shootdowns. It reads counters only (no clock in the measured loop); its
// own clock reads are in its thread. Between the seconds it reads the
// group's page cache every 100 ms, so the moment the cache filled is known
// to a tenth of a second, not to the second.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace iolab::suites::memory {

struct SecondSample {
  double t = 0;        // seconds since the sampler started (end of this interval)
  double seconds = 0;  // length of the interval (1 but for the last)
  std::uint64_t bytes = 0;
  std::int64_t major_faults = 0;
  std::optional<std::uint64_t> page_cache_bytes;  // the cgroup's, at the end of the interval
  std::optional<std::uint64_t> tlb_shootdowns;    // machine-wide, in the interval
};

class PerSecondSampler {
 public:
  // `page_cache` reads the group's page-cache bytes (may return nullopt);
  // the cache is full once it holds `full_bytes` (0: not watched).
  PerSecondSampler(const std::atomic<std::uint64_t>& bytes, std::function<std::optional<std::uint64_t>()> page_cache,
                   std::uint64_t full_bytes = 0);
  ~PerSecondSampler();  // stop()
  void start();
  void stop();  // adds the last, partial interval
  bool running() const { return thread_.joinable(); }
  const std::vector<SecondSample>& samples() const { return samples_; }
  // Seconds from start() to the first 100 ms tick (or the pass's end, for
  // one shorter than a tick) at which the group's page cache held
  // full_bytes; nullopt when it never did (or is not watched).
  std::optional<double> cache_full_at_s() const { return full_at_s_; }
  static constexpr std::uint64_t kTickNs = 100'000'000;  // 100 ms

 private:
  struct Counters {
    std::uint64_t ns = 0, bytes = 0;
    std::int64_t major_faults = 0;
    std::optional<std::uint64_t> tlb;
  };
  Counters now() const;
  void note(const Counters& before, const Counters& after);
  void check_full();  // notes full_at_s_ the first time the cache holds full_bytes_ (the sampler thread only)

  const std::atomic<std::uint64_t>& bytes_;
  std::function<std::optional<std::uint64_t>()> page_cache_;
  std::vector<SecondSample> samples_;
  std::uint64_t full_bytes_ = 0;
  std::optional<double> full_at_s_;
  std::uint64_t start_ns_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
};

// The series as records carry it (extra.per_second; docs/results-format.md).
nlohmann::json to_json(const std::vector<SecondSample>& samples);

}  // namespace iolab::suites::memory
