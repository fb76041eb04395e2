#include "time_bound.h"

#include <chrono>

namespace iolab::suites::memory {

TimeBound::~TimeBound() { disarm(); }

void TimeBound::arm(double seconds) {
  disarm();
  cancel_ = false;
  const auto due = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
  thread_ = std::thread([this, due] {
    std::unique_lock lock(mutex_);
    if (!wake_.wait_until(lock, due, [this] { return cancel_; })) flag_.store(true, std::memory_order_relaxed);
  });
}

bool TimeBound::disarm() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      cancel_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  return flag_.exchange(false, std::memory_order_relaxed);
}

}  // namespace iolab::suites::memory
