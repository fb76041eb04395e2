// Internal: the designs' background thread (flush, commit, roll flushes):
// runs its work every interval or sooner when woken, until stopped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "log.h"  // FailureState

namespace iolab::commitlog::detail {

// A thread that runs `work` every `interval`, or sooner when woken, until
// stopped; failures are kept in `failure`.
class Worker {
 public:
  Worker() = default;
  ~Worker() { stop(); }
  void start(std::chrono::nanoseconds interval, FailureState& failure, std::function<void(bool stopping)> work);
  void wake();
  // Runs the work a last time (stopping = true) and joins.
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, woken_ = false;
  std::chrono::nanoseconds interval_{};
  FailureState* failure_ = nullptr;
  std::function<void(bool)> work_;
  std::thread thread_;
};

}  // namespace iolab::commitlog::detail
