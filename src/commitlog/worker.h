// Internal: the designs' background thread (flush, commit, roll flushes):
// runs its work every interval or sooner when woken, until stopped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <pthread.h>

#include "log.h"  // FailureState

namespace iolab::commitlog::detail {

// A thread that runs `work` every `interval`, or sooner when woken, until
// stopped; failures are kept in `failure`. The thread is named `name` (at
// most 15 characters): what its CPU time is counted under
// (proc::thread_cpu_seconds_by_name, the traffic driver's per-thread shares).
class Worker {
 public:
  Worker() = default;
  ~Worker() { stop(); }
  void start(const char* name, std::chrono::nanoseconds interval, FailureState& failure,
             std::function<void(bool stopping)> work);
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

// Names `thread` (at most 15 characters; a longer name is cut), from the
// thread that started it: named before anyone can look for it.
void name_thread(std::thread& thread, const char* name) noexcept;

}  // namespace iolab::commitlog::detail
