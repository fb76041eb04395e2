// The log (log.h) as a whole: its lifetime, its recovery at open, its
// counters; appends are in log_append.cpp, segments in log_segments.cpp.
#include "log.h"

#include <algorithm>
#include <cstring>

#include "iolab/base/le.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "segment_reader.h"
#include "worker.h"

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

void Staged::add_framed(std::byte* room, std::span<const std::byte> body) {
  add(body);
  items.back().room = room;
}

Log::Log(LogFs& fs, LogConfig config) : fs_(fs), config_(std::move(config)) {}

Log::~Log() {
  try {
    close();
  } catch (...) {  // close() reports errors; a destructor cannot
  }
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
    name_thread(ahead_thread_, "log-allocate");
  }
  return rec;
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
  out.touched_ahead_bytes += touched_bytes_.load(std::memory_order_relaxed);
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
