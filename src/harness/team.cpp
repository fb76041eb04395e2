// The team of one process: a pass's workers as threads that start at one
// barrier and are timed from its release to the last one's end.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/harness/engine.h"

namespace iolab::harness {

LocalTeam::LocalTeam(unsigned workers) : workers_(workers) {
  if (workers == 0) throw UsageError("0 workers", "a pass needs at least one worker");
}

std::vector<unsigned> LocalTeam::local_workers() const {
  std::vector<unsigned> all(workers_);
  for (unsigned w = 0; w < workers_; ++w) all[w] = w;
  return all;
}

std::string LocalTeam::clock_description() const {
  return workers_ == 1 ? "steady clock around the timed region"
                       : "steady clock from the start barrier's release to the last thread's end";
}

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

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

  UsageMeter meter(UsageMeter::Scope::Process);
  Clock::time_point start;
  // The completion steps run once, on one thread, while every worker waits:
  // the clock starts when the last worker arrives, and usage stops after the
  // last worker is done, so opening and closing files stay outside both.
  auto on_start = [&]() noexcept {
    meter.start();
    start = Clock::now();
  };
  auto on_end = [&]() noexcept { t.usage = meter.stop(); };
  std::barrier begin(static_cast<std::ptrdiff_t>(workers_), on_start);
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

  auto worker = [&](unsigned w) {
    try {
      if (body.prepare) body.prepare(w);
    } catch (...) {
      errors[w] = std::current_exception();
      failed = true;
    }
    begin.arrive_and_wait();
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

  std::vector<std::thread> threads;
  threads.reserve(workers_);
  std::exception_ptr spawn_error;
  for (unsigned w = 1; w < workers_; ++w) {
    try {
      threads.emplace_back(worker, w);
    } catch (...) {
      // Workers that could not start leave both barriers, so the ones running are not stranded.
      spawn_error = std::current_exception();
      failed = true;
      for (unsigned missing = w; missing < workers_; ++missing) {
        begin.arrive_and_drop();
        end.arrive_and_drop();
      }
      break;
    }
  }
  worker(0);  // the calling thread is worker 0
  for (auto& th : threads) th.join();
  if (spawn_error) std::rethrow_exception(spawn_error);
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
