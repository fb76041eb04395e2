// A pass's time bound: a thread that sets a flag when the bound is reached,
// which a random read plan (harness/requests.h, RequestPlan::stop) reads
// before each call. The flag is the only thing the measured loop sees (one
// relaxed load per call, no clock read).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace iolab::suites::memory {

class TimeBound {
 public:
  ~TimeBound();  // disarm()
  // Clears the flag and sets it `seconds` from now (unless disarmed first).
  void arm(double seconds);
  // Stops the thread; returns whether the bound was reached, and clears the flag.
  bool disarm();
  const std::atomic<bool>& flag() const noexcept { return flag_; }

 private:
  std::atomic<bool> flag_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool cancel_ = false;
};

}  // namespace iolab::suites::memory
