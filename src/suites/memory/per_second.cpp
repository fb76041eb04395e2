#include "per_second.h"

#include <sys/resource.h>

#include "iolab/base/clock.h"
#include "iolab/base/proc.h"

namespace iolab::suites::memory {

PerSecondSampler::PerSecondSampler(const std::atomic<std::uint64_t>& bytes,
                                   std::function<std::optional<std::uint64_t>()> page_cache, std::uint64_t full_bytes)
    : bytes_(bytes), page_cache_(std::move(page_cache)), full_bytes_(full_bytes) {}

PerSecondSampler::~PerSecondSampler() { stop(); }

PerSecondSampler::Counters PerSecondSampler::now() const {
  Counters c;
  c.ns = steady_ns();
  c.bytes = bytes_.load(std::memory_order_relaxed);
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);  // the whole process: the measured thread's faults
  c.major_faults = ru.ru_majflt;
  c.tlb = proc::tlb_shootdowns();
  return c;
}

void PerSecondSampler::note(const Counters& before, const Counters& after) {
  SecondSample s;
  s.t = static_cast<double>(after.ns - start_ns_) / 1e9;
  s.seconds = static_cast<double>(after.ns - before.ns) / 1e9;
  s.bytes = after.bytes - before.bytes;
  s.major_faults = after.major_faults - before.major_faults;
  s.page_cache_bytes = page_cache_ ? page_cache_() : std::nullopt;
  if (before.tlb && after.tlb) s.tlb_shootdowns = *after.tlb - *before.tlb;
  samples_.push_back(s);
}

void PerSecondSampler::start() {
  stop();
  samples_.clear();
  full_at_s_.reset();
  stop_ = false;
  Counters first = now();
  start_ns_ = first.ns;
  thread_ = std::thread([this, first] {
    Counters last = first;
    std::unique_lock lock(mutex_);
    const std::uint64_t ticks_per_second = 1'000'000'000ull / kTickNs;
    for (std::uint64_t tick = 1;; ++tick) {
      // Wake at whole ticks from the start, so intervals do not drift.
      auto due = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(start_ns_ + tick * kTickNs));
      if (wake_.wait_until(lock, due, [this] { return stop_; })) break;
      check_full();
      if (tick % ticks_per_second != 0) continue;
      Counters c = now();
      note(last, c);
      last = c;
    }
    check_full();  // at the pass's end too: a pass shorter than a tick is known full or not
    Counters c = now();
    if (c.ns > last.ns) note(last, c);
  });
}

void PerSecondSampler::check_full() {
  if (full_bytes_ == 0 || full_at_s_ || !page_cache_) return;
  const std::uint64_t at = steady_ns();
  if (auto cached = page_cache_(); cached && *cached >= full_bytes_)
    full_at_s_ = static_cast<double>(at - start_ns_) / 1e9;
}

void PerSecondSampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

nlohmann::json to_json(const std::vector<SecondSample>& samples) {
  nlohmann::json out = nlohmann::json::array();
  for (const SecondSample& s : samples) {
    nlohmann::json e;
    e["t"] = s.t;
    e["seconds"] = s.seconds;
    e["mib"] = static_cast<double>(s.bytes) / (1024.0 * 1024.0);
    e["mib_per_s"] = s.seconds > 0 ? static_cast<double>(s.bytes) / (1024.0 * 1024.0) / s.seconds : 0.0;
    e["major_faults"] = s.major_faults;
    e["page_cache_bytes"] = s.page_cache_bytes ? nlohmann::json(*s.page_cache_bytes) : nlohmann::json(nullptr);
    e["tlb_shootdowns"] = s.tlb_shootdowns ? nlohmann::json(*s.tlb_shootdowns) : nlohmann::json(nullptr);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace iolab::suites::memory
