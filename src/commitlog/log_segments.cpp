// The log's segments (log.h): made, prepared and warmed, allocated ahead
// by the allocator thread, and rolled when full.
#include "log.h"

#include <algorithm>
#include <cstring>

#include "iolab/base/le.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "segment_reader.h"

namespace iolab::commitlog::detail {

std::shared_ptr<Segment> Log::make_segment(std::uint64_t base, bool create) {
  auto s = std::make_shared<Segment>();
  s->base = base;
  s->capacity = config_.segment_size;
  s->path = config_.dir / segment_name(base);
  s->file = create ? fs_.create(s->path) : fs_.open(s->path, true);
  if (config_.index_interval > 0)
    s->index = std::make_unique<OffsetIndex>(fs_, config_.dir / segment_name(base, ".index"),
                                             config_.segment_size / config_.index_interval + 2,
                                             !fs_.exists(config_.dir / segment_name(base, ".index")));
  prepare(*s, create);
  return s;
}

void Log::prepare(Segment& s, bool fresh) {
  if (config_.preallocate && fresh) s.file->allocate(s.capacity);
  if (config_.map_for_write) s.map = s.file->map(s.capacity, true);
  if (fresh) dir_dirty_.store(true, std::memory_order_release);
}

void Log::allocator_loop() {
  std::unique_lock lock(ahead_mu_);
  for (;;) {
    ahead_cv_.wait(lock, [&] { return ahead_stop_ || ahead_requested_.has_value(); });
    if (ahead_stop_) return;
    std::uint64_t base = *ahead_requested_;
    ahead_requested_.reset();
    lock.unlock();
    std::shared_ptr<Segment> s;
    std::exception_ptr error;
    std::string note;
    auto t0 = iolab::steady_ns();
    try {
      s = make_segment(base, true);
      // Allocation and the new name made durable here, off the append path.
      s->file->sync_data();
      fs_.sync_dir(config_.dir);
      note = warm_up(*s);
      // Its first window too: the roll into it would otherwise fault them in.
      if (config_.touch_ahead > 0 && !s->map.empty()) {
        std::uint64_t n = std::min<std::uint64_t>(config_.touch_ahead, s->capacity);
        s->map.prefault(0, n);
        touched_bytes_.fetch_add(n, std::memory_order_relaxed);
      }
    } catch (...) {
      error = std::current_exception();
    }
    auto spent = iolab::steady_ns() - t0;
    {
      std::lock_guard c(counters_mu_);
      if (s) ++counters_.allocated_ahead;
      counters_.allocate_ahead_ns += spent;
      if (!note.empty()) counters_.warm_up_note = note;
    }
    lock.lock();
    if (error)
      ahead_error_ = error;
    else
      ahead_ready_ = std::move(s);
    ahead_cv_.notify_all();
  }
}

std::shared_ptr<Segment> Log::take_ahead(std::uint64_t base) {
  std::unique_lock lock(ahead_mu_);
  if (!ahead_ready_ && !ahead_error_) {
    std::lock_guard c(counters_mu_);
    ++counters_.roll_waits;
  }
  ahead_cv_.wait(lock, [&] { return ahead_ready_ != nullptr || ahead_error_ != nullptr; });
  if (ahead_error_) std::rethrow_exception(ahead_error_);
  auto s = std::move(ahead_ready_);
  if (s->base != base) throw Error("roll", s->path.string(), "segment prepared for another position", EINVAL);
  ahead_requested_ = base + config_.segment_size;
  ahead_cv_.notify_all();
  return s;
}

void Log::roll() {
  auto t0 = iolab::steady_ns();
  std::shared_ptr<Segment> old = current_;
  std::uint64_t base = old->base + old->capacity;
  if (old->index) old->index->trim();
  auto next = config_.create_ahead ? take_ahead(base) : make_segment(base, true);
  sealed_pending_.emplace_back(old, Mark{old->base + old->end, next_sequence_ - 1});
  {
    std::lock_guard lock(segments_mu_);
    unsynced_.push_back(next);
  }
  current_ = std::move(next);
  std::lock_guard c(counters_mu_);
  ++counters_.rolls;
  counters_.roll_latency.record(iolab::steady_ns() - t0);
}

void Log::touch_ahead() {
  if (config_.touch_ahead == 0 || !config_.map_for_write) return;
  std::uint64_t w = written_pos_.load(std::memory_order_acquire);
  std::uint64_t from = std::max(touched_.load(std::memory_order_relaxed), w), to = w + config_.touch_ahead;
  if (from >= to) return;
  // sync_through() drops a sealed segment's mapping only under this lock.
  std::lock_guard lock(touch_mu_);
  std::uint64_t reached = from;
  for (const auto& s : segments_between(from, to)) {
    if (s->map.empty()) continue;
    std::uint64_t lo = std::max(from, s->base) - s->base, hi = std::min(to, s->base + s->capacity) - s->base;
    s->map.prefault(lo, hi - lo);
    touched_bytes_.fetch_add(hi - lo, std::memory_order_relaxed);
    reached = std::max(reached, s->base + hi);
  }
  // Past the last segment made so far: the next round goes on from here.
  touched_.store(reached, std::memory_order_relaxed);
}

std::string Log::warm_up(Segment& s) {
  if (!config_.warm_up || s.map.empty()) return {};
  // From the segment's end on: a recovered segment keeps its frames.
  return s.map.warm((s.end + io::kPageSize - 1) / io::kPageSize * io::kPageSize);
}

}  // namespace iolab::commitlog::detail
