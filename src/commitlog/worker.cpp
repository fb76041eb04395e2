// The designs' background thread (worker.h).
#include "worker.h"

#include <cstring>
#include <exception>
#include <utility>

namespace iolab::commitlog::detail {

void name_thread(std::thread& thread, const char* name) noexcept {
  char cut[16] = {};
  std::strncpy(cut, name, sizeof cut - 1);
  ::pthread_setname_np(thread.native_handle(), cut);
}

void Worker::start(const char* name, std::chrono::nanoseconds interval, FailureState& failure,
                   std::function<void(bool stopping)> work) {
  interval_ = interval;
  failure_ = &failure;
  work_ = std::move(work);
  thread_ = std::thread([this] { loop(); });
  name_thread(thread_, name);
}

void Worker::wake() {
  std::lock_guard lock(mu_);
  woken_ = true;
  cv_.notify_one();
}

void Worker::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    cv_.notify_one();
  }
  thread_.join();
}

void Worker::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait_for(lock, interval_, [&] { return stop_ || woken_; });
    bool stopping = stop_;
    woken_ = false;
    lock.unlock();
    // The work goes on after a failed append: what was acknowledged still
    // gets committed and synced (a failed sync makes every later one throw).
    try {
      work_(stopping);
    } catch (...) {
      failure_->set(std::current_exception());
    }
    lock.lock();
    if (stopping) return;
  }
}

}  // namespace iolab::commitlog::detail
