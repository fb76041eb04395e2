// The shared-log designs: rocketmq, rocketmq-transient, qmq, activemq,
// group-commit (one log for every topic, written the way each system writes).
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include "design_base.h"
#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "log.h"
#include "segment_reader.h"
#include "topic_index.h"
#include "worker.h"

namespace iolab::commitlog::detail {
namespace {

struct SharedConfig {
  WriteCall write = WriteCall::Pwrite;
  bool preallocate = false, create_ahead = false, map_for_write = false, msync = false;
  bool transient = false, flush_thread = false, group_commit = false, topic_index = false;
  bool keep_sealed_open = true;
  AckLevel ack = AckLevel::Written;
  // A transient design's commit thread: how it writes (pwrite, or lseek +
  // write), when it runs (RocketMQ: every commit_interval or once the ring is
  // half full; KahaDB: as soon as it is idle and something is queued), and
  // the most one call writes (0: all there is).
  bool commit_seeks = false, commit_when_idle = false;
  std::size_t commit_most = 0;
};

SharedConfig shared_config(Design d) {
  SharedConfig c;
  DesignTraits t = traits(d);
  c.topic_index = t.topic_index;
  c.flush_thread = t.flush_thread;
  c.ack = t.ack;
  switch (d) {
    case Design::RocketMq:
      c.write = WriteCall::Mapped;
      c.preallocate = c.create_ahead = c.map_for_write = c.msync = true;
      break;
    case Design::RocketMqTransient:
      c.write = WriteCall::None;
      c.preallocate = c.create_ahead = c.transient = true;
      break;
    case Design::Qmq:
      // QMQ's MessageLog.putMessage -> LogSegment.append: the record is put
      // into the segment's MappedByteBuffer (no system call per message);
      // LogManager.allocNextSegment maps the next segment when one fills (on
      // the append path: no allocation thread); the flush is
      // MappedByteBuffer.force() (msync).
      c.write = WriteCall::Mapped;
      c.preallocate = c.map_for_write = c.msync = true;
      break;
    case Design::ActiveMq:
      // KahaDB's DataFileAppender: storeItem queues the record into the
      // next WriteBatch (waiting while it is full and the writer busy); the
      // writer thread (processQueue) takes it whenever it is idle and
      // writes it with RandomAccessFile seek + write.
      // Its data files' blocks are allocated when a file is made
      // (journalPreallocationStrategy=zeros): a full disk stops an append
      // there, never a batch already acknowledged to the writer.
      c.write = WriteCall::None;
      c.transient = c.commit_seeks = c.commit_when_idle = c.preallocate = true;
      c.keep_sealed_open = false;
      break;
    case Design::GroupCommit:
      c.write = WriteCall::Pwrite;
      c.group_commit = true;
      break;
    case Design::Kafka: break;
  }
  return c;
}

class SharedLogDesign final : public DesignBase {
 public:
  SharedLogDesign(LogFs& fs, std::filesystem::path dir, Options o)
      : DesignBase(fs, std::move(dir), std::move(o)), config_(shared_config(options_.design)) {
    config_.topic_index = config_.topic_index && options_.indexes;
    if (config_.commit_when_idle) config_.commit_most = options_.write_batch;
  }

  ~SharedLogDesign() override {
    try {
      close();
    } catch (...) {  // close() reports errors; a destructor cannot
    }
  }

  void open() {
    LogConfig lc;
    lc.dir = dir_ / "log";
    lc.segment_size = options_.segment_size;
    lc.write = config_.write;
    lc.map_for_write = config_.map_for_write;
    lc.preallocate = config_.preallocate;
    lc.create_ahead = config_.create_ahead;
    lc.warm_up = options_.warm_up && config_.map_for_write;
    if (config_.map_for_write && config_.flush_thread) lc.touch_ahead = options_.touch_ahead;
    lc.msync = config_.msync;
    lc.keep_sealed_open = config_.keep_sealed_open;
    log_ = std::make_unique<Log>(fs_, lc);
    open_report_.logs.push_back(log_->open(options_.recovery));
    if (config_.topic_index) {
      if (fs_.make_dir(dir_ / "index")) fs_.sync_dir(dir_);
      for (std::uint32_t t = 0; t < options_.topics; ++t) {
        indexes_.push_back(
            std::make_unique<TopicIndex>(fs_, dir_ / "index" / topic_dir_name(t), options_.index_entries_per_file));
        open_report_.index_entries_dropped += indexes_.back()->open(log_->committed().position);
      }
    }
    if (config_.transient) {
      // KahaDB: the batch being written and the next one filling.
      ring_ = io::Buffer(config_.commit_most > 0 ? 2 * config_.commit_most : options_.transient_buffer,
                         io::BufferKind::Aligned);
      ring_moved_.store(log_->committed().position, std::memory_order_relaxed);
      // KahaDB's writer also looks every millisecond: an appender's look at
      // writer_idle_ may pass its own publish (no fence on the append path,
      // which would wait for the frame's stores to drain), and then the wake
      // it did not make is made up within 1 ms.
      const auto every = config_.commit_when_idle
                             ? std::min<std::chrono::nanoseconds>(options_.commit_interval, std::chrono::milliseconds(1))
                             : options_.commit_interval;
      committer_.start("log-commit", every, failure_, [this](bool) { commit(); });
    }
    if (lc.touch_ahead > 0) {
      // Its own thread: a flush thread's msync (tens of ms here) would let
      // the appender run past the window.
      log_->touch_ahead();  // the first window, before the first append
      toucher_.start("log-touch", options_.flush_interval, failure_, [this](bool) { log_->touch_ahead(); });
    }
    if (config_.flush_thread) {
      flusher_.start("log-flush", options_.flush_interval, failure_, [this](bool stopping) { flush(stopping); });
    }
  }

  Ack append_staged(std::uint32_t topic, Staged& staged) override {
    // The ring must hold the append plus the padding a roll may leave (less than one frame).
    if (config_.transient && 2 * staged.bytes > ring_.size())
      throw Error("append", dir_.string(), "an append larger than half the transient buffer", EMSGSIZE);
    Log::Placement& p = placement();
    {
      std::lock_guard lock(log_->append_mutex());
      guarded([&] {
        failure_.check();
        log_->place(staged, p);
        if (config_.transient) {
          to_ring(p, staged);
        } else {
          for (const auto& run : p.runs) log_->write(run, staged);
        }
        if (config_.topic_index) index(topic, p, staged);
        log_->publish(p, !config_.transient);
      });
    }
    if (config_.commit_when_idle) {
      // KahaDB: the writer takes what is queued as soon as it is idle; one
      // wake per batch (it is busy for the rest), not per message.
      if (writer_idle_.load(std::memory_order_relaxed) && writer_idle_.exchange(false, std::memory_order_acq_rel))
        committer_.wake();
    } else if (config_.transient) {
      // Half full: wake the commit thread once per committed position, not
      // on every append until its commit ends (a lock and a notify each).
      auto w = log_->written(), c = log_->committed();
      if (w.position - c.position >= ring_.size() / 2 &&
          woken_for_.exchange(c.position, std::memory_order_relaxed) != c.position)
        committer_.wake();
    }
    if (std::uint64_t half = log_->config().touch_ahead / 2; half > 0) {
      // Within half a window of the touched end: wake the toucher, once per
      // half window written.
      std::uint64_t step = p.end_position / half;
      if (p.end_position + half > log_->touched() &&
          touch_woken_step_.exchange(step, std::memory_order_relaxed) != step)
        toucher_.wake();
    }
    if (config_.group_commit) wait_durable(p.last_sequence);
    return Ack{0, p.first_sequence, static_cast<std::uint32_t>(staged.items.size()), config_.ack};
  }

  std::uint32_t log_count() const noexcept override { return 1; }
  std::filesystem::path log_dir(std::uint32_t) const override { return dir_ / "log"; }
  LogPositions positions(std::uint32_t) const noexcept override {
    return {log_->written().sequence, log_->committed().sequence, log_->durable().sequence};
  }
  Visible visible(std::uint32_t) const noexcept override {
    auto c = log_->committed();
    return {c.position, c.sequence};
  }
  void wait_visible(std::uint32_t, std::uint64_t sequence, std::chrono::nanoseconds timeout) override {
    log_->wait_committed(sequence, timeout);
  }

  std::vector<std::pair<std::uint64_t, std::uint32_t>> topic_index(std::uint32_t topic) override {
    if (!config_.topic_index || topic >= indexes_.size()) return {};
    return indexes_[topic]->read_all();
  }
  std::optional<std::uint64_t> find(std::uint32_t, std::uint64_t sequence) override {
    return find_in_log(fs_, *log_, sequence);
  }

  Stats stats() const override {
    Stats s;
    log_->add_counters(s);
    s.commits = commits_.load();
    s.committed_bytes = committed_bytes_.load();
    s.buffer_full_waits = buffer_full_waits_.load();
    return s;
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    FirstError errors;
    // The commit thread commits what is buffered before the flusher's last round.
    committer_.stop();
    toucher_.stop();
    flusher_.stop();
    errors.attempt([&] { failure_.check(); });
    for (auto& i : indexes_) errors.attempt([&] { i->close(); });
    if (log_) errors.attempt([&] { log_->close(); });
    errors.rethrow();
  }

 private:
  // Copies placed frames into the ring at their log positions (mod its size),
  // first waiting until the commit thread has made room.
  void to_ring(const Log::Placement& p, const Staged& staged) {
    std::uint64_t capacity = ring_.size();
    auto moved = [this] { return ring_moved_.load(std::memory_order_acquire); };
    if (p.end_position - moved() > capacity) {
      buffer_full_waits_.fetch_add(1, std::memory_order_relaxed);
      committer_.wake();
      std::unique_lock lock(ring_mu_);
      ring_cv_.wait(lock, [&] { return p.end_position - moved() <= capacity || failure_.failed(); });
      failure_.check();
    }
    auto copy = [&](std::uint64_t position, std::span<const std::byte> bytes) {
      std::uint64_t at = position % capacity;
      std::size_t first = std::min<std::uint64_t>(bytes.size(), capacity - at);
      std::memcpy(ring_.data() + at, bytes.data(), first);
      std::memcpy(ring_.data(), bytes.data() + first, bytes.size() - first);
    };
    for (const auto& run : p.runs) {
      std::uint64_t position = run.segment->base + run.offset;
      for (const auto& item : std::span(staged.items).subspan(run.first, run.count)) {
        copy(position, item.header);
        copy(position + kFrameHeaderSize, item.body);
        position += item.size();
      }
    }
  }

  // The commit thread's round. RocketMQ's CommitRealTimeService: pwrite
  // what the ring holds beyond the committed position into the segment
  // files. KahaDB's writer (commit_when_idle): the same with lseek + write,
  // then idle, taking anything queued meanwhile first: an append that found
  // the writer busy did not wake it.
  void commit() {
    if (!config_.commit_when_idle) {
      commit_what_is_written();
      return;
    }
    do {
      writer_idle_.store(false, std::memory_order_relaxed);
      commit_what_is_written();
      writer_idle_.store(true, std::memory_order_seq_cst);
    } while (log_->written().position > log_->committed().position &&
             writer_idle_.exchange(false, std::memory_order_acq_rel));
  }

  void commit_what_is_written() {
    Log::Mark w = log_->written(), c = log_->committed();
    if (w.position <= c.position) return;
    std::uint64_t capacity = ring_.size();
    for (const auto& seg : log_->segments_between(c.position, w.position)) {
      std::uint64_t from = std::max(c.position, seg->base);
      std::uint64_t to = std::min(w.position, seg->base + seg->placed.load(std::memory_order_acquire));
      while (from < to) {
        std::uint64_t at = from % capacity;
        std::uint64_t n = std::min(to - from, capacity - at);
        n = std::min<std::uint64_t>(n, config_.commit_most > 0 ? config_.commit_most : kCommitPiece);
        const std::span<const std::byte> bytes{ring_.data() + at, static_cast<std::size_t>(n)};
        if (config_.commit_seeks)
          seg->file->seek_and_write(from - seg->base, bytes);
        else
          seg->file->write_at(from - seg->base, bytes);
        commits_.fetch_add(1, std::memory_order_relaxed);
        committed_bytes_.fetch_add(n, std::memory_order_relaxed);
        from += n;
        // Room for a waiting producer after each piece, not after the
        // whole commit: with a tailing consumer as a third thread on two
        // cores, a producer waiting out a half-ring pwrite sat idle for it
        // (rocketmq-transient, 16 MiB ring, 8 runs each, interleaved: 0.69x
        // -> 0.84x of the producer-only rate, that rate unchanged).
        ring_moved_.store(from, std::memory_order_release);
        if (buffer_full_waits_.load(std::memory_order_relaxed) != 0) {
          std::lock_guard lock(ring_mu_);
          ring_cv_.notify_all();
        }
      }
      seg->written.store(to - seg->base, std::memory_order_release);
    }
    ring_moved_.store(w.position, std::memory_order_release);  // past any padding a roll left
    log_->publish_committed(w.position, w.sequence);
    std::lock_guard lock(ring_mu_);
    ring_cv_.notify_all();
  }

  // RocketMQ's FlushRealTimeService: sync once enough is unsynced.
  void flush(bool stopping) {
    Log::Mark c = log_->committed(), d = log_->durable();
    if (c.position <= d.position) return;
    auto now = iolab::steady_ns();
    bool due = c.position - d.position >= options_.flush_min_bytes ||
               now - last_flush_ns_ >= static_cast<std::uint64_t>(options_.flush_thorough_interval.count());
    if (!due && !stopping) return;
    log_->sync_through(c);
    last_flush_ns_ = iolab::steady_ns();
  }

  // Leader/follower group commit: the first waiter syncs everything written
  // so far for all waiting; the others wait for it and check again.
  void wait_durable(std::uint64_t sequence) {
    std::unique_lock lock(group_mu_);
    while (log_->durable().sequence < sequence) {
      failure_.check();
      if (!leader_) {
        leader_ = true;
        lock.unlock();
        try {
          log_->sync_through(log_->committed());
        } catch (...) {
          failure_.set(std::current_exception());
        }
        lock.lock();
        leader_ = false;
        group_cv_.notify_all();
      } else {
        group_cv_.wait(lock);
      }
    }
  }

  // The topic's index entry for every frame just placed.
  void index(std::uint32_t topic, const Log::Placement& p, const Staged& staged) {
    TopicIndex& idx = *indexes_[topic];
    for (const auto& run : p.runs) {
      std::uint64_t position = run.segment->base + run.offset;
      for (const auto& item : std::span(staged.items).subspan(run.first, run.count)) {
        idx.append(position, static_cast<std::uint32_t>(item.size()), topic);
        position += item.size();
      }
    }
  }

  SharedConfig config_;
  std::unique_ptr<Log> log_;
  std::vector<std::unique_ptr<TopicIndex>> indexes_;
  io::Buffer ring_;
  std::mutex ring_mu_;
  std::condition_variable ring_cv_;
  Worker committer_, toucher_, flusher_;
  std::uint64_t last_flush_ns_ = 0;
  std::mutex group_mu_;
  std::condition_variable group_cv_;
  bool leader_ = false;
  std::atomic<std::uint64_t> commits_{0}, committed_bytes_{0}, buffer_full_waits_{0};
  std::atomic<std::uint64_t> woken_for_{UINT64_MAX};  // the committed position the last half-full wake was for
  // Transient designs: the log position below which the ring's bytes are in
  // the file (advanced by every commit piece); the room appends wait for.
  // Readers still see committed() only, at the end of a commit.
  std::atomic<std::uint64_t> ring_moved_{0};
  static constexpr std::uint64_t kCommitPiece = std::uint64_t{1} << 20;  // rocketmq-transient's most per pwrite
  std::atomic<bool> writer_idle_{true};  // activemq: the writer thread has nothing in hand
  std::atomic<std::uint64_t> touch_woken_step_{UINT64_MAX};  // the half window the last touch-ahead wake was in
  bool closed_ = false;
};


}  // namespace

std::optional<std::uint64_t> find_in_log(LogFs& fs, Log& log, std::uint64_t sequence) {
  auto visible = log.committed();
  if (sequence == 0 || sequence > visible.sequence) return std::nullopt;
  // The segment whose first frame is the last one at or below `sequence`.
  auto segments = list_segments(fs, log.config().dir);
  std::optional<SegmentName> chosen;
  std::uint64_t chosen_first = 0;
  for (const auto& s : segments) {
    auto source = open_source(fs, s.path, ReadPath::Pread);
    FrameStream stream(*source, 0, source->file().size());
    Frame f;
    if (stream.next(0, f) != FrameCheck::Valid || f.sequence > sequence) break;
    chosen = s;
    chosen_first = f.sequence;
  }
  if (!chosen) return std::nullopt;
  std::uint64_t start = 0;
  auto index_path = log.config().dir / segment_name(chosen->base, ".index");
  if (auto hit = OffsetIndex::lookup(fs, index_path, static_cast<std::uint32_t>(sequence - chosen_first)))
    start = hit->second;
  auto source = open_source(fs, chosen->path, ReadPath::Pread);
  std::uint64_t limit = std::min<std::uint64_t>(source->file().size(), visible.position - chosen->base);
  FrameStream stream(*source, start, limit);
  Frame f;
  while (stream.next(0, f) == FrameCheck::Valid) {
    if (f.sequence == sequence) return chosen->base + stream.offset() - f.size();
    if (f.sequence > sequence) break;
  }
  return std::nullopt;
}

std::unique_ptr<CommitLog> open_shared_log(LogFs& fs, const std::filesystem::path& dir, const Options& options) {
  auto log = std::make_unique<SharedLogDesign>(fs, dir, options);
  log->open();
  return log;
}

}  // namespace iolab::commitlog::detail
