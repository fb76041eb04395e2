// The team of one process: a pass's workers as threads that start at one
// gate and are timed from its opening to the last one's end. The threads
// beyond the caller are made once, at the first pass, and kept: a thread
// made for every pass cost two workers more than the pass's reads (issue 40
// item 7; bench/parallel_pread.cpp is the bare anchor).
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <exception>
#include <functional>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/harness/engine.h"

namespace iolab::harness {

namespace {

using Clock = std::chrono::steady_clock;

// How long a worker at the start gate spins before it sleeps: the gate
// opens when the last worker has prepared (opened its file), usually well
// within this, so the others are on their CPU when it opens rather than
// waiting to be woken, or to get their CPU back from other work, inside the
// timed region. Spinning, not yielding: a yield hands the CPU to the
// machine's other runnable work for its whole slice (milliseconds).
constexpr auto kGateSpin = std::chrono::microseconds(500);

void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

// The threads of workers 1..n-1, each running the pass's job when released.
struct LocalTeam::Crew {
  explicit Crew(unsigned workers) {
    try {
      for (unsigned w = 1; w < workers; ++w) threads.emplace_back([this, w] { loop(w); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~Crew() { stop(); }

  // Runs job(w) on every thread w and returns once all have finished it.
  void run(const std::function<void(unsigned)>& job) {
    job_ = &job;
    running_.store(static_cast<unsigned>(threads.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
  }
  void wait() {
    for (unsigned left; (left = running_.load(std::memory_order_acquire)) != 0;) running_.wait(left, std::memory_order_acquire);
  }

  std::vector<std::thread> threads;

 private:
  void loop(unsigned w) {
    std::uint64_t seen = 0;
    for (;;) {
      generation_.wait(seen, std::memory_order_acquire);
      seen = generation_.load(std::memory_order_acquire);
      if (quit_.load()) return;
      (*job_)(w);  // catches what the workload throws
      if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) running_.notify_all();
    }
  }
  void stop() {
    quit_.store(true);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }

  const std::function<void(unsigned)>* job_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> running_{0};
  std::atomic<bool> quit_{false};
};

LocalTeam::LocalTeam(unsigned workers) : workers_(workers) {
  if (workers == 0) throw UsageError("0 workers", "a pass needs at least one worker");
}

LocalTeam::~LocalTeam() = default;

std::vector<unsigned> LocalTeam::local_workers() const {
  std::vector<unsigned> all(workers_);
  for (unsigned w = 0; w < workers_; ++w) all[w] = w;
  return all;
}

std::string LocalTeam::clock_description() const {
  return workers_ == 1 ? "steady clock around the timed region"
                       : "steady clock from the start gate's opening to the last thread's end";
}

PassTiming LocalTeam::run(const PassBody& body) {
  PassTiming t;
  if (workers_ == 1) {
    // One worker: no thread, no barrier; the same clock reads as a thread pass.
    if (body.prepare) body.prepare(0);
    UsageMeter meter(UsageMeter::Scope::Process);
    std::exception_ptr error;
    meter.start();
    try {
      t.tally = body.timed(0);
    } catch (...) {
      error = std::current_exception();
    }
    t.usage = meter.stop();
    try {
      if (body.finish) body.finish(0);  // closes files, also after a failure
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    if (error) std::rethrow_exception(error);
    t.seconds = t.usage.seconds;
    t.worker_s = {t.seconds};
    t.first_done_s = t.last_done_s = t.seconds;
    return t;
  }

  if (!crew_) {
    crew_ = std::make_unique<Crew>(workers_);  // throws before any pass when a thread cannot be made
    threads_made_ += workers_ - 1;
  }
  UsageMeter meter(UsageMeter::Scope::Process);
  Clock::time_point start;
  // The start gate: the last worker to arrive starts the usage meter and the
  // clock and opens it; the others spin until it opens (kGateSpin), then
  // sleep. The end barrier's completion runs once, on one thread, while
  // every worker waits: usage stops after the last worker is done, so
  // opening and closing files stay outside both.
  std::atomic<unsigned> arrived{0};
  std::atomic<bool> open{false};
  auto start_gate = [&] {
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == workers_) {
      meter.start();
      start = Clock::now();
      open.store(true, std::memory_order_release);
      open.notify_all();
      return;
    }
    const auto until = Clock::now() + kGateSpin;
    for (unsigned spins = 0; !open.load(std::memory_order_acquire); ++spins) {
      relax();
      if (spins % 256 == 255 && Clock::now() >= until) break;
    }
    while (!open.load(std::memory_order_acquire)) open.wait(false, std::memory_order_acquire);
  };
  auto on_end = [&]() noexcept { t.usage = meter.stop(); };
  std::barrier end(static_cast<std::ptrdiff_t>(workers_), on_end);
  std::vector<Clock::time_point> done(workers_);
  std::vector<WorkerTally> tallies(workers_);
  // A worker that could not prepare (say, open its file: EMFILE) or failed
  // in its timed part is the cause; what finish then finds (a region no
  // worker wrote, since a pass with a worker missing is not run) is only a
  // consequence, reported when nothing came before it (issue 29 item 10).
  std::vector<std::exception_ptr> errors(workers_);
  std::vector<std::exception_ptr> finish_errors(workers_);
  std::atomic<bool> failed{false};

  const std::function<void(unsigned)> worker = [&](unsigned w) {
    try {
      if (body.prepare) body.prepare(w);
    } catch (...) {
      errors[w] = std::current_exception();
      failed = true;
    }
    start_gate();
    if (!failed.load()) {
      try {
        tallies[w] = body.timed(w);
      } catch (...) {
        errors[w] = std::current_exception();
        failed = true;
      }
    }
    done[w] = Clock::now();
    end.arrive_and_wait();
    try {
      if (body.finish) body.finish(w);  // closes files even after a failure
    } catch (...) {
      finish_errors[w] = std::current_exception();
      failed = true;
    }
  };

  crew_->run(worker);
  worker(0);  // the calling thread is worker 0
  crew_->wait();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (auto& e : finish_errors)
    if (e) std::rethrow_exception(e);

  t.worker_s.resize(workers_);
  for (unsigned w = 0; w < workers_; ++w) {
    t.worker_s[w] = std::chrono::duration<double>(done[w] - start).count();
    t.tally += tallies[w];
  }
  t.first_done_s = *std::min_element(t.worker_s.begin(), t.worker_s.end());
  t.last_done_s = *std::max_element(t.worker_s.begin(), t.worker_s.end());
  t.seconds = t.last_done_s;
  return t;
}

}  // namespace iolab::harness
