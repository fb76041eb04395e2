// Appending to the log (log.h): frames placed, written, published to
// readers and waiters, and synced through a mark.
#include "log.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "iolab/base/le.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "segment_reader.h"

namespace iolab::commitlog::detail {

void Log::place(Staged& staged, Placement& p) {
  p.first_sequence = p.last_sequence = p.end_position = 0;
  p.runs.clear();
  for (std::size_t i = 0; i < staged.items.size(); ++i) {
    Staged::Item& item = staged.items[i];
    std::uint64_t size = item.size();
    if (current_->end + size > current_->capacity) roll();
    Segment& s = *current_;
    std::uint64_t seq = next_sequence_++;
    encode_header(item.header.data(), static_cast<std::uint32_t>(item.body.size()), item.body_crc, seq);
    if (item.room != nullptr) std::memcpy(item.room, item.header.data(), kFrameHeaderSize);
    if (s.first_sequence == 0) s.first_sequence = seq;
    if (s.index) {
      // Kafka's rule: an entry once more than index.interval.bytes were appended since the last.
      if (s.bytes_since_index > config_.index_interval) {
        s.index->append(static_cast<std::uint32_t>(seq - s.first_sequence), static_cast<std::uint32_t>(s.end));
        s.bytes_since_index = 0;
      }
      s.bytes_since_index += size;
    }
    if (!p.runs.empty() && p.runs.back().segment == &s && p.runs.back().offset + p.runs.back().bytes == s.end) {
      ++p.runs.back().count;
      p.runs.back().bytes += size;
    } else {
      p.runs.push_back({&s, s.end, i, 1, size});
    }
    s.end += size;
    if (p.first_sequence == 0) p.first_sequence = seq;
    p.last_sequence = seq;
    p.end_position = s.base + s.end;
  }
}

namespace {

// The frames of `items` as the pieces of one gathered write: each header,
// then its body; frames of the caller's (append_framed) that follow each
// other in memory as one piece, so a producer batch is one plain write.
// Kept per thread: the writer reuses it for every run.
std::span<const std::span<const std::byte>> pieces_of(std::span<const Staged::Item> items) {
  thread_local std::vector<std::span<const std::byte>> pieces;
  pieces.clear();
  for (const auto& item : items) {
    if (item.room != nullptr) {
      const std::span<const std::byte> frame(item.room, item.size());
      if (!pieces.empty() && pieces.back().data() + pieces.back().size() == frame.data())
        pieces.back() = {pieces.back().data(), pieces.back().size() + frame.size()};
      else
        pieces.push_back(frame);
      continue;
    }
    pieces.emplace_back(item.header);
    if (!item.body.empty()) pieces.push_back(item.body);
  }
  return pieces;
}

}  // namespace

void Log::write(const Run& run, const Staged& staged) {
  Segment& s = *run.segment;
  auto items = std::span(staged.items).subspan(run.first, run.count);
  switch (config_.write) {
    case WriteCall::Pwrite:
      s.file->write_at(run.offset, pieces_of(items));
      return;
    case WriteCall::Mapped: {
      std::byte* at = s.map.data() + run.offset;
      for (const auto& item : items) {
        std::memcpy(at, item.header.data(), kFrameHeaderSize);
        if (!item.body.empty()) std::memcpy(at + kFrameHeaderSize, item.body.data(), item.body.size());
        at += item.size();
      }
      return;
    }
    case WriteCall::None: return;
  }
}

void Log::publish(const Placement& p, bool committed) {
  for (const Run& r : p.runs) {
    r.segment->placed.store(r.offset + r.bytes, std::memory_order_release);
    if (committed) r.segment->written.store(r.offset + r.bytes, std::memory_order_release);
  }
  for (auto& [s, mark] : sealed_pending_) {
    s->sealed.store(true, std::memory_order_release);
    if (committed && !config_.keep_sealed_open && s->file) {
      s->file->close();  // no syncer holds it; close() reopens it to sync
      s->file.reset();
    }
    if (on_roll_) on_roll_(mark);
  }
  sealed_pending_.clear();
  if (p.runs.empty()) return;
  // Plain increments: the append lock orders the writers.
  auto add = [](std::atomic<std::uint64_t>& c, std::uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  add(appends_, 1);
  add(messages_, p.last_sequence - p.first_sequence + 1);
  for (const Run& r : p.runs) add(bytes_, r.bytes);
  Mark m{p.end_position, p.last_sequence};
  store(written_pos_, written_seq_, m);
  if (committed) {
    store(committed_pos_, committed_seq_, m);
    wake_waiters();
  }
}

void Log::publish_committed(std::uint64_t position, std::uint64_t sequence) {
  store(committed_pos_, committed_seq_, Mark{position, sequence});
  wake_waiters();
}

void Log::wake_waiters() {
  // Until a reader has waited once, nobody can be asleep here: skip the
  // fence, which would otherwise wait for the store buffer to drain (the
  // frame just copied into the page cache) on every append.
  if (!readers_waited_.load(std::memory_order_relaxed)) return;
  // Pairs with wait_committed: it counts itself before checking the position.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (visible_waiters_.load(std::memory_order_seq_cst) == 0) return;
  // Through the lock, so a waiter is either before its check or asleep;
  // notified after it, so the woken waiter does not block on the lock still held.
  { std::lock_guard lock(visible_mu_); }
  visible_cv_.notify_all();
}

void Log::wait_committed(std::uint64_t sequence, std::chrono::nanoseconds timeout) {
  auto seen = [&] { return committed().sequence > sequence || closed_.load(); };
  // Look again for a while before sleeping, yielding the CPU: an appender
  // going flat out publishes again within microseconds, and every wake of a
  // sleeper costs it a futex call and, on a shared CPU, its time slice.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto spin_end = std::chrono::steady_clock::now() + std::min<std::chrono::nanoseconds>(timeout, kWaitSpin);
  while (std::chrono::steady_clock::now() < spin_end) {
    if (seen()) return;
    std::this_thread::yield();
  }
  // A publisher that has not seen this yet does not notify: the first wait
  // may last until its timeout, no later one.
  readers_waited_.store(true, std::memory_order_relaxed);
  std::unique_lock lock(visible_mu_);
  visible_waiters_.fetch_add(1, std::memory_order_seq_cst);
  visible_cv_.wait_until(lock, deadline, seen);
  visible_waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

std::vector<std::shared_ptr<Segment>> Log::segments_between(std::uint64_t from, std::uint64_t to) {
  std::vector<std::shared_ptr<Segment>> out;
  std::lock_guard lock(segments_mu_);
  for (const auto& s : unsynced_)
    if (s->base < to && s->base + s->capacity > from) out.push_back(s);
  return out;
}

void Log::sync_through(Mark m) {
  std::lock_guard lock(sync_mu_);
  if (sync_error_) std::rethrow_exception(sync_error_);
  try {
    sync_locked(m);
  } catch (...) {
    sync_error_ = std::current_exception();
    throw;
  }
}

void Log::sync_locked(Mark m) {
  if (m.position <= durable_pos_.load(std::memory_order_acquire) &&
      m.sequence <= durable_seq_.load(std::memory_order_acquire))
    return;
  auto t0 = iolab::steady_ns();
  std::vector<std::shared_ptr<Segment>> todo;
  {
    std::lock_guard l(segments_mu_);
    for (const auto& s : unsynced_)
      if (s->base < m.position) todo.push_back(s);
  }
  std::uint64_t bytes = 0;
  for (const auto& s : todo) {
    std::uint64_t to = std::min(m.position - s->base, s->written.load(std::memory_order_acquire));
    if (to <= s->synced) continue;
    if (config_.msync && !s->map.empty()) {
      s->map.sync(s->synced, to - s->synced);
    } else if (s->file) {
      s->file->sync_data();
    } else {
      auto f = fs_.open(s->path, true);
      f->sync_data();
      f->close();
    }
    if (s->index && s->sealed.load(std::memory_order_acquire)) s->index->sync();
    bytes += to - s->synced;
    s->synced = to;
  }
  if (dir_dirty_.exchange(false)) fs_.sync_dir(config_.dir);
  store(durable_pos_, durable_seq_, m);
  auto done = iolab::steady_ns();
  {
    std::lock_guard c(counters_mu_);
    ++counters_.flushes;
    counters_.flushed_bytes += bytes;
    counters_.flush_ns += done - t0;
    counters_.flush_latency.record(done - t0);
    counters_.flush_events.push_back({config_.id, m.sequence, done});
  }
  // Sealed segments now fully durable leave the list (and close their files).
  auto done_with = [](const Segment& s) {
    return s.sealed.load(std::memory_order_acquire) && s.synced >= s.placed.load(std::memory_order_acquire) &&
           s.written.load(std::memory_order_acquire) >= s.placed.load(std::memory_order_acquire);
  };
  {
    std::lock_guard l(segments_mu_);
    if (unsynced_.size() < 2 || !done_with(*unsynced_.front())) return;
  }
  // touch_ahead() may be faulting in the mapping about to be dropped.
  std::lock_guard t(touch_mu_);
  std::lock_guard l(segments_mu_);
  while (unsynced_.size() > 1) {
    auto& s = unsynced_.front();
    if (!done_with(*s)) break;
    s->map = MappedRegion();
    if (s->file) s->file->close();
    unsynced_.pop_front();
  }
}

}  // namespace iolab::commitlog::detail
