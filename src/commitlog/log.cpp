#include "log.h"

#include <algorithm>
#include <cstring>

#include "iolab/base/le.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "segment_reader.h"

namespace iolab::commitlog::detail {

void FailureState::set(std::exception_ptr e) noexcept {
  std::lock_guard lock(mu_);
  if (error_) return;
  error_ = std::move(e);
  failed_.store(true, std::memory_order_release);
}

void FailureState::check() const {
  if (!failed()) return;
  std::lock_guard lock(mu_);
  std::rethrow_exception(error_);
}

void Staged::add(std::span<const std::byte> body) {
  Item& item = items.emplace_back();
  item.body = body;
  item.body_crc = body_crc(body);
  bytes += item.size();
}

// ---- OffsetIndex ----

OffsetIndex::OffsetIndex(LogFs& fs, std::filesystem::path path, std::uint64_t capacity_entries, bool create)
    : path_(std::move(path)), capacity_(capacity_entries) {
  file_ = create ? fs.create(path_) : fs.open(path_, true);
  // Rebuilt from the log on open, so an old one is emptied first (Kafka
  // rebuilds the index of every segment it recovers).
  file_->truncate(0);
  file_->allocate(capacity_ * kEntrySize);
  map_ = file_->map(capacity_ * kEntrySize, true);
}

void OffsetIndex::append(std::uint32_t relative_sequence, std::uint32_t position) {
  if (entries_ >= capacity_ || map_.empty()) return;  // full: Kafka would roll; a sparse index may stop early
  std::byte* p = map_.data() + entries_ * kEntrySize;
  le::put32(le::put32(p, relative_sequence), position);
  ++entries_;
}

void OffsetIndex::sync() {
  if (!map_.empty())
    map_.sync(0, entries_ * kEntrySize);
  else if (file_)
    file_->sync_data();
}

void OffsetIndex::trim() {
  if (!file_) return;
  map_ = MappedRegion();
  file_->truncate(entries_ * kEntrySize);
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> OffsetIndex::lookup(LogFs& fs, const std::filesystem::path& path,
                                                                          std::uint32_t relative_sequence) {
  if (!fs.exists(path)) return std::nullopt;
  auto file = fs.open(path, false);
  std::vector<std::byte> bytes(file->size() / kEntrySize * kEntrySize);
  bytes.resize(file->read_at(0, bytes) / kEntrySize * kEntrySize);
  std::optional<std::pair<std::uint32_t, std::uint32_t>> best;
  std::uint32_t last_position = 0;
  for (std::size_t i = 0; i + kEntrySize <= bytes.size(); i += kEntrySize) {
    const std::uint32_t seq = le::get32(bytes.data() + i), pos = le::get32(bytes.data() + i + 4);
    // Entries grow in both fields; the first that does not ends the valid part
    // (zeroed preallocation, or a crash before the index caught up).
    if ((best && (seq <= best->first || pos <= last_position)) || (!best && pos == 0)) break;
    if (seq > relative_sequence) break;
    best = std::make_pair(seq, pos);
    last_position = pos;
  }
  return best;
}

// ---- Log ----

Log::Log(LogFs& fs, LogConfig config) : fs_(fs), config_(std::move(config)) {}

Log::~Log() {
  try {
    close();
  } catch (...) {  // close() reports errors; a destructor cannot
  }
}

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

LogRecovery Log::open(Recovery policy) {
  if (fs_.make_dir(config_.dir)) fs_.sync_dir(config_.dir.parent_path());
  LogRecovery rec;
  rec.dir = config_.dir;
  LogScan scan = scan_log(fs_, config_.dir, {});
  rec.messages = scan.messages;
  rec.last_sequence = scan.last_sequence;
  rec.damage = scan.damage;
  if (scan.damage && policy == Recovery::Refuse && !scan.damage->torn_tail())
    throw Error("recover", config_.dir.string(),
                scan.damage->describe() + "; open with Recovery::Truncate to drop what follows the damage", EIO);

  bool changed = false;
  for (std::size_t i = scan.segments.empty() ? 0 : scan.end_segment + 1; i < scan.segments.size(); ++i) {
    fs_.remove(scan.segments[i].path);
    // A stale index beside it goes too.
    auto index = config_.dir / segment_name(scan.segments[i].base, ".index");
    if (fs_.exists(index)) fs_.remove(index);
    ++rec.removed_segments;
    changed = true;
  }

  if (scan.segments.empty()) {
    current_ = make_segment(0, true);
  } else {
    const SegmentScan& end = scan.segments[scan.end_segment];
    if (end.base % config_.segment_size != 0 || end.file_size > config_.segment_size)
      throw Error("open log", end.path.string(),
                  "does not fit segments of " + std::to_string(config_.segment_size) +
                      " bytes (was the log written with another segment size?)",
                  EINVAL);
    current_ = make_segment(end.base, false);
    Segment& s = *current_;
    bool damaged_here = scan.damage && scan.damage->at.segment == end.path;
    if (end.file_size > scan.end_offset) {
      if (damaged_here || !config_.preallocate) rec.truncated_bytes = end.file_size - scan.end_offset;
      // Cut everything after the last valid frame; preallocated segments get
      // their blocks back as zeros, so no stale byte lingers to be misread.
      s.file->truncate(scan.end_offset);
      if (config_.preallocate) s.file->allocate(s.capacity);
    } else if (config_.preallocate && end.file_size < s.capacity) {
      s.file->allocate(s.capacity);
    }
    if (config_.map_for_write && s.map.empty()) s.map = s.file->map(s.capacity, true);
    s.end = scan.end_offset;
    s.placed = s.written = s.synced = scan.end_offset;
    // Recovered data may still sit unsynced in the page cache (after a
    // process crash): sync every kept segment before calling it durable.
    for (std::size_t i = 0; i <= scan.end_segment; ++i) {
      auto f = i == scan.end_segment ? nullptr : fs_.open(scan.segments[i].path, true);
      (f ? *f : *s.file).sync_data();
    }
    if (s.index) {
      // Rebuild the active segment's offset index from its frames.
      auto source = open_source(fs_, s.path, ReadPath::Pread);
      FrameStream stream(*source, 0, scan.end_offset);
      Frame frame;
      while (stream.next(0, frame) == FrameCheck::Valid) {
        if (s.first_sequence == 0) s.first_sequence = frame.sequence;
        if (s.bytes_since_index > config_.index_interval) {
          s.index->append(static_cast<std::uint32_t>(frame.sequence - s.first_sequence),
                          static_cast<std::uint32_t>(stream.offset() - frame.size()));
          s.bytes_since_index = 0;
        }
        s.bytes_since_index += frame.size();
      }
      s.index->sync();
    }
    next_sequence_ = scan.last_sequence + 1;
    if (scan.messages == 0) next_sequence_ = kFirstSequence;
    Mark m{s.base + s.end, scan.last_sequence};
    store(written_pos_, written_seq_, m);
    store(committed_pos_, committed_seq_, m);
    store(durable_pos_, durable_seq_, m);
  }
  if (changed) dir_dirty_.store(true);
  if (dir_dirty_.exchange(false)) fs_.sync_dir(config_.dir);
  if (std::string note = warm_up(*current_); !note.empty()) counters_.warm_up_note = note;
  {
    std::lock_guard lock(segments_mu_);
    unsynced_.push_back(current_);
  }
  if (config_.create_ahead) {
    std::lock_guard lock(ahead_mu_);
    ahead_requested_ = current_->base + current_->capacity;
    ahead_thread_ = std::thread([this] { allocator_loop(); });
  }
  return rec;
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

std::string Log::warm_up(Segment& s) {
  if (!config_.warm_up || s.map.empty()) return {};
  // From the segment's end on: a recovered segment keeps its frames.
  return s.map.warm((s.end + io::kPageSize - 1) / io::kPageSize * io::kPageSize);
}

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

void Log::write(const Run& run, const Staged& staged) {
  Segment& s = *run.segment;
  auto items = std::span(staged.items).subspan(run.first, run.count);
  switch (config_.write) {
    case WriteCall::Pwrite: {
      thread_local std::vector<std::span<const std::byte>> pieces;
      pieces.clear();
      for (const auto& item : items) {
        pieces.emplace_back(item.header);
        if (!item.body.empty()) pieces.push_back(item.body);
      }
      s.file->write_at(run.offset, pieces);
      return;
    }
    case WriteCall::SeekWrite: {
      // ActiveMQ's KahaDB journal (DataFileAppender.processQueue): the
      // writes of a WriteBatch are copied into one buffer, then one
      // RandomAccessFile seek + write for the whole batch.
      thread_local std::vector<std::span<const std::byte>> pieces;
      pieces.clear();
      for (const auto& item : items) {
        pieces.emplace_back(item.header);
        if (!item.body.empty()) pieces.push_back(item.body);
      }
      s.file->seek_and_write(run.offset, pieces);
      return;
    }
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
  std::lock_guard lock(visible_mu_);
  visible_cv_.notify_all();
}

void Log::wait_committed(std::uint64_t sequence, std::chrono::nanoseconds timeout) {
  // A publisher that has not seen this yet does not notify: the first wait
  // may last until its timeout, no later one.
  readers_waited_.store(true, std::memory_order_relaxed);
  std::unique_lock lock(visible_mu_);
  visible_waiters_.fetch_add(1, std::memory_order_seq_cst);
  visible_cv_.wait_for(lock, timeout, [&] { return committed().sequence > sequence || closed_.load(); });
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
  std::lock_guard l(segments_mu_);
  while (unsynced_.size() > 1) {
    auto& s = unsynced_.front();
    if (!s->sealed.load(std::memory_order_acquire) || s->synced < s->placed.load(std::memory_order_acquire) ||
        s->written.load(std::memory_order_acquire) < s->placed.load(std::memory_order_acquire))
      break;
    s->map = MappedRegion();
    if (s->file) s->file->close();
    unsynced_.pop_front();
  }
}

void Log::add_counters(Stats& out) const {
  out.appends += appends_.load(std::memory_order_relaxed);
  out.messages += messages_.load(std::memory_order_relaxed);
  out.bytes += bytes_.load(std::memory_order_relaxed);
  std::lock_guard c(counters_mu_);
  out.flushes += counters_.flushes;
  out.flushed_bytes += counters_.flushed_bytes;
  out.flush_ns += counters_.flush_ns;
  out.flush_latency.merge(counters_.flush_latency);
  out.rolls += counters_.rolls;
  out.roll_latency.merge(counters_.roll_latency);
  out.roll_waits += counters_.roll_waits;
  out.segments_allocated_ahead += counters_.allocated_ahead;
  out.allocate_ahead_ns += counters_.allocate_ahead_ns;
  if (!counters_.warm_up_note.empty()) out.warm_up_note = counters_.warm_up_note;
  out.flush_events.insert(out.flush_events.end(), counters_.flush_events.begin(), counters_.flush_events.end());
}

void Log::close() {
  if (closed_.exchange(true)) return;
  {
    std::lock_guard lock(visible_mu_);
    visible_cv_.notify_all();
  }
  std::shared_ptr<Segment> unused;
  if (ahead_thread_.joinable()) {
    {
      std::lock_guard lock(ahead_mu_);
      ahead_stop_ = true;
      ahead_cv_.notify_all();
    }
    ahead_thread_.join();
    unused = std::move(ahead_ready_);
  }
  FirstError errors;
  if (unused) {
    // The segment prepared ahead and never written: remove it, as if never made.
    errors.attempt([&] {
      unused->map = MappedRegion();
      unused->file->close();
      fs_.remove(unused->path);
      fs_.sync_dir(config_.dir);
    });
  }
  // A clean shutdown: everything in the files becomes durable.
  errors.attempt([&] { sync_through(committed()); });
  errors.attempt([&] {
    if (current_ && current_->index) {
      current_->index->trim();
      current_->index->sync();
    }
  });
  std::lock_guard l(segments_mu_);
  for (auto& s : unsynced_) {
    s->map = MappedRegion();
    if (s->file) errors.attempt([&] { s->file->close(); });
  }
  unsynced_.clear();
  current_.reset();
  errors.rethrow();
}

}  // namespace iolab::commitlog::detail
