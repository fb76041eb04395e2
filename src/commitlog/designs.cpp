// The six designs: what each writes with, when it syncs, what it acknowledges.
#include "designs.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "log.h"
#include "segment_reader.h"
#include "topic_index.h"

namespace iolab::commitlog {

namespace {
constexpr NameTable<Design, 6> kDesignNames{{{Design::Kafka, "kafka"},
                                            {Design::RocketMq, "rocketmq"},
                                            {Design::RocketMqTransient, "rocketmq-transient"},
                                            {Design::Qmq, "qmq"},
                                            {Design::ActiveMq, "activemq"},
                                            {Design::GroupCommit, "group-commit"}}};
}  // namespace

std::string_view to_string(Design d) noexcept { return name_of(kDesignNames, d); }
Design parse_design(std::string_view name) { return parse_name(kDesignNames, name, "design"); }

std::string_view describe(Design d) noexcept {
  switch (d) {
    case Design::Kafka:
      return "a log per topic; pwrite of producer batches, sparse mmap offset index; no flush but one at segment "
             "roll, off the append path; pread and sendfile reads";
    case Design::RocketMq:
      return "one shared log of preallocated mapped segments; stores through the mapping; a flush thread msyncs "
             ">= 16 KiB; per-topic index; mmap reads";
    case Design::RocketMqTransient:
      return "appends into an aligned buffer; a commit thread pwrites it (200 ms or half full); a flush thread "
             "fdatasyncs >= 16 KiB; mmap reads";
    case Design::Qmq:
      return "pwrite appends to a shared log; a flush thread fdatasyncs >= 16 KiB; per-topic index; mmap reads";
    case Design::ActiveMq: return "lseek + write per message to a shared log; never flushes; read(2) reads";
    case Design::GroupCommit:
      return "pwrite appends; each append waits for an fdatasync covering it, one leader syncing for all waiting; "
             "pread reads";
  }
  return "?";
}

std::string_view to_string(AckLevel a) noexcept {
  switch (a) {
    case AckLevel::Buffered: return "buffered";
    case AckLevel::Written: return "written";
    case AckLevel::Durable: return "durable";
  }
  return "?";
}

DesignTraits traits(Design d) noexcept {
  DesignTraits t;
  switch (d) {
    case Design::Kafka:
      t.log_per_topic = true;
      t.batches = true;
      t.read_path = ReadPath::Sendfile;
      break;
    case Design::RocketMq:
      t.topic_index = t.writes_through_map = t.preallocates = t.flush_thread = true;
      t.read_path = ReadPath::Mmap;
      break;
    case Design::RocketMqTransient:
      t.topic_index = t.preallocates = t.flush_thread = t.commit_thread = true;
      t.ack = AckLevel::Buffered;
      t.read_path = ReadPath::Mmap;
      break;
    case Design::Qmq:
      t.topic_index = t.flush_thread = true;
      t.read_path = ReadPath::Mmap;
      break;
    case Design::ActiveMq: t.read_path = ReadPath::Read; break;
    case Design::GroupCommit:
      t.ack = AckLevel::Durable;
      t.read_path = ReadPath::Pread;
      break;
  }
  return t;
}

namespace detail {
namespace {

std::string topic_dir_name(std::uint32_t topic) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "topic-%05u", topic);
  return buf;
}

void validate(const Options& o) {
  if (o.segment_size < 4096 || o.segment_size % io::kPageSize != 0)
    throw UsageError("segment size " + std::to_string(o.segment_size), "must be a multiple of 4096 bytes");
  if (o.topics == 0 || o.topics > 65536) throw UsageError("topics " + std::to_string(o.topics), "must be 1..65536");
  if (o.batch_bytes == 0 || o.index_interval == 0)
    throw UsageError("batch or index interval of 0 bytes", "must be at least 1");
  if (o.flush_interval.count() <= 0 || o.commit_interval.count() <= 0)
    throw UsageError("flush or commit interval", "must be positive");
  if (o.transient_buffer < 64 * 1024 || o.transient_buffer % io::kPageSize != 0)
    throw UsageError("transient buffer " + std::to_string(o.transient_buffer),
                     "must be a multiple of 4096 bytes, at least 64 KiB");
}

// What every design shares: the failure state, counters, input checks.
class DesignBase : public CommitLog {
 public:
  std::uint32_t log_of(std::uint32_t topic) const noexcept override {
    return traits(options_.design).log_per_topic ? topic : 0;
  }

 protected:
  DesignBase(LogFs& fs, std::filesystem::path dir, Options o)
      : CommitLog(std::move(o)), fs_(fs), dir_(std::move(dir)) {}

  // Checks an append's input, and stages its frames (outside any lock).
  Staged& stage(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) {
    failure_.check();
    if (topic >= options_.topics)
      throw Error("append", dir_.string(),
                  "topic " + std::to_string(topic) + " of " + std::to_string(options_.topics), EINVAL);
    if (bodies.empty()) throw Error("append", dir_.string(), "no message to append", EINVAL);
    thread_local Staged staged;
    staged.clear();
    for (auto body : bodies) {
      if (body.size() > kMaxBodySize || frame_size(body.size()) > options_.segment_size)
        throw Error("append", dir_.string(),
                    "a message of " + std::to_string(body.size()) + " bytes is larger than " +
                        (body.size() > kMaxBodySize ? "the largest a frame holds (16 MiB)"
                                                    : "a segment of " + std::to_string(options_.segment_size) +
                                                          " bytes with its header"),
                    EMSGSIZE);
      staged.add(body);
    }
    return staged;
  }

  // This thread's placement, reused append after append.
  static Log::Placement& placement() {
    thread_local Log::Placement p;
    return p;
  }

  // Runs `f`, and on failure makes the log refuse every later append.
  template <typename F>
  auto guarded(F&& f) {
    try {
      return f();
    } catch (...) {
      failure_.set(std::current_exception());
      throw;
    }
  }

  LogFs& fs_;
  std::filesystem::path dir_;
  FailureState failure_;
};

// A thread that runs `work` every `interval`, or sooner when woken, until
// stopped; failures are kept in `failure`.
class Worker {
 public:
  Worker() = default;
  ~Worker() { stop(); }
  void start(std::chrono::nanoseconds interval, FailureState& failure, std::function<void(bool stopping)> work) {
    interval_ = interval;
    failure_ = &failure;
    work_ = std::move(work);
    thread_ = std::thread([this] { loop(); });
  }
  void wake() {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_one();
  }
  // Runs the work a last time (stopping = true) and joins.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    thread_.join();
  }

 private:
  void loop() {
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

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, woken_ = false;
  std::chrono::nanoseconds interval_{};
  FailureState* failure_ = nullptr;
  std::function<void(bool)> work_;
  std::thread thread_;
};

// ---- the shared-log designs: rocketmq, rocketmq-transient, qmq, activemq, group-commit ----

struct SharedConfig {
  WriteCall write = WriteCall::Pwrite;
  bool preallocate = false, create_ahead = false, map_for_write = false, msync = false;
  bool transient = false, flush_thread = false, group_commit = false, topic_index = false;
  bool keep_sealed_open = true;
  AckLevel ack = AckLevel::Written;
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
    case Design::Qmq: c.write = WriteCall::Pwrite; break;
    case Design::ActiveMq:
      c.write = WriteCall::SeekWrite;
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
      : DesignBase(fs, std::move(dir), std::move(o)), config_(shared_config(options_.design)) {}

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
      ring_ = io::Buffer(options_.transient_buffer, io::BufferKind::Aligned);
      committer_.start(options_.commit_interval, failure_, [this](bool) { commit(); });
    }
    if (config_.flush_thread) {
      flusher_.start(options_.flush_interval, failure_, [this](bool stopping) { flush(stopping); });
    }
  }

  Ack append(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) override {
    Staged& staged = stage(topic, bodies);
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
    if (config_.transient) {
      auto w = log_->written(), c = log_->committed();
      if (w.position - c.position >= ring_.size() / 2) committer_.wake();
    }
    if (config_.group_commit) wait_durable(p.last_sequence);
    return Ack{0, p.first_sequence, static_cast<std::uint32_t>(staged.items.size()), config_.ack};
  }

  std::uint32_t log_count() const noexcept override { return 1; }
  std::filesystem::path log_dir(std::uint32_t) const override { return dir_ / "log"; }
  LogPositions progress(std::uint32_t) const noexcept override {
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
    flusher_.stop();
    errors.attempt([&] { failure_.check(); });
    for (auto& i : indexes_) errors.attempt([&] { i->close(); });
    if (log_) errors.attempt([&] { log_->close(); });
    errors.rethrow();
  }

  static std::optional<std::uint64_t> find_in_log(LogFs& fs, Log& log, std::uint64_t sequence);

 private:
  // Copies placed frames into the ring at their log positions (mod its size),
  // first waiting until the commit thread has made room.
  void to_ring(const Log::Placement& p, const Staged& staged) {
    std::uint64_t capacity = ring_.size();
    if (p.end_position - log_->committed().position > capacity) {
      buffer_full_waits_.fetch_add(1, std::memory_order_relaxed);
      committer_.wake();
      std::unique_lock lock(ring_mu_);
      ring_cv_.wait(lock, [&] {
        return p.end_position - log_->committed().position <= capacity || failure_.failed();
      });
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

  // RocketMQ's CommitRealTimeService: pwrite what the ring holds beyond the
  // committed position into the segment files.
  void commit() {
    Log::Mark w = log_->written(), c = log_->committed();
    if (w.position <= c.position) return;
    std::uint64_t capacity = ring_.size();
    for (const auto& seg : log_->segments_between(c.position, w.position)) {
      std::uint64_t from = std::max(c.position, seg->base);
      std::uint64_t to = std::min(w.position, seg->base + seg->placed.load(std::memory_order_acquire));
      while (from < to) {
        std::uint64_t at = from % capacity;
        std::uint64_t n = std::min(to - from, capacity - at);
        seg->file->write_at(from - seg->base, {ring_.data() + at, static_cast<std::size_t>(n)});
        commits_.fetch_add(1, std::memory_order_relaxed);
        committed_bytes_.fetch_add(n, std::memory_order_relaxed);
        from += n;
      }
      seg->written.store(to - seg->base, std::memory_order_release);
    }
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
  Worker committer_, flusher_;
  std::uint64_t last_flush_ns_ = 0;
  std::mutex group_mu_;
  std::condition_variable group_cv_;
  bool leader_ = false;
  std::atomic<std::uint64_t> commits_{0}, committed_bytes_{0}, buffer_full_waits_{0};
  bool closed_ = false;
};

std::optional<std::uint64_t> SharedLogDesign::find_in_log(LogFs& fs, Log& log, std::uint64_t sequence) {
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

// ---- kafka: a log per topic ----

class KafkaDesign final : public DesignBase {
 public:
  KafkaDesign(LogFs& fs, std::filesystem::path dir, Options o) : DesignBase(fs, std::move(dir), std::move(o)) {}

  ~KafkaDesign() override {
    try {
      close();
    } catch (...) {  // close() reports errors; a destructor cannot
    }
  }

  void open() {
    for (std::uint32_t t = 0; t < options_.topics; ++t) {
      LogConfig lc;
      lc.dir = dir_ / topic_dir_name(t);
      lc.id = t;
      lc.segment_size = options_.segment_size;
      lc.write = WriteCall::Pwrite;
      lc.index_interval = options_.index_interval;
      logs_.push_back(std::make_unique<Log>(fs_, lc));
      open_report_.logs.push_back(logs_.back()->open(options_.recovery));
      // At a roll Kafka schedules a flush of the old segment on another thread.
      logs_.back()->on_roll([this, t](Log::Mark m) {
        std::lock_guard lock(roll_mu_);
        roll_queue_.emplace_back(t, m);
        roll_flusher_.wake();
      });
    }
    roll_flusher_.start(std::chrono::seconds(1), failure_, [this](bool) { flush_rolled(); });
  }

  Ack append(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) override {
    Staged& staged = stage(topic, bodies);
    Log& log = *logs_[topic];
    Log::Placement& p = placement();
    {
      std::lock_guard lock(log.append_mutex());
      guarded([&] {
        failure_.check();
        log.place(staged, p);
        for (const auto& run : p.runs) log.write(run, staged);
        log.publish(p);
      });
    }
    return Ack{topic, p.first_sequence, static_cast<std::uint32_t>(staged.items.size()), AckLevel::Written};
  }

  std::uint32_t log_count() const noexcept override { return static_cast<std::uint32_t>(logs_.size()); }
  std::filesystem::path log_dir(std::uint32_t log) const override { return logs_.at(log)->config().dir; }
  LogPositions progress(std::uint32_t log) const noexcept override {
    const Log& l = *logs_[log];
    return {l.written().sequence, l.committed().sequence, l.durable().sequence};
  }
  Visible visible(std::uint32_t log) const noexcept override {
    auto c = logs_[log]->committed();
    return {c.position, c.sequence};
  }
  void wait_visible(std::uint32_t log, std::uint64_t sequence, std::chrono::nanoseconds timeout) override {
    logs_.at(log)->wait_committed(sequence, timeout);
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> topic_index(std::uint32_t) override { return {}; }
  std::optional<std::uint64_t> find(std::uint32_t log, std::uint64_t sequence) override {
    return SharedLogDesign::find_in_log(fs_, *logs_.at(log), sequence);
  }

  Stats stats() const override {
    Stats s;
    for (const auto& l : logs_) l->add_counters(s);
    std::sort(s.flush_events.begin(), s.flush_events.end(),
              [](const FlushEvent& a, const FlushEvent& b) { return a.done_ns < b.done_ns; });
    return s;
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    FirstError errors;
    roll_flusher_.stop();
    errors.attempt([&] { failure_.check(); });
    for (auto& l : logs_) errors.attempt([&] { l->close(); });
    errors.rethrow();
  }

 private:
  void flush_rolled() {
    for (;;) {
      std::pair<std::uint32_t, Log::Mark> job;
      {
        std::lock_guard lock(roll_mu_);
        if (roll_queue_.empty()) return;
        job = roll_queue_.front();
        roll_queue_.pop_front();
      }
      logs_[job.first]->sync_through(job.second);
    }
  }

  std::vector<std::unique_ptr<Log>> logs_;
  std::mutex roll_mu_;
  std::deque<std::pair<std::uint32_t, Log::Mark>> roll_queue_;
  Worker roll_flusher_;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<CommitLog> open_commit_log(LogFs& fs, const std::filesystem::path& dir, const Options& options) {
  validate(options);
  bool per_topic = traits(options.design).log_per_topic;
  for (const std::string& name : fs.list(dir)) {
    bool topic_dir = name.starts_with("topic-");
    if ((per_topic && (name == "log" || name == "index")) || (!per_topic && topic_dir))
      throw Error("open commit log", dir.string(),
                  "holds a log of another layout (" + std::string(per_topic ? "a shared log" : "a log per topic") +
                      ") than design " + std::string(to_string(options.design)),
                  EINVAL);
  }
  if (per_topic) {
    auto log = std::make_unique<KafkaDesign>(fs, dir, options);
    log->open();
    return log;
  }
  auto log = std::make_unique<SharedLogDesign>(fs, dir, options);
  log->open();
  return log;
}

void remove_log_files(LogFs& fs, const std::filesystem::path& dir) {
  auto ours = [](const std::string& name) {
    std::uint64_t n = 0;
    return parse_segment_name(name, n) || parse_segment_name(name, n, ".index") || parse_segment_name(name, n, ".cq");
  };
  // Removes our files from `d`, then `d` itself if nothing else is left.
  auto clear = [&](const std::filesystem::path& d) {
    bool foreign = false;
    for (const std::string& name : fs.list(d)) {
      if (ours(name) && !fs.is_directory(d / name))
        fs.remove(d / name);
      else
        foreign = true;
    }
    if (!foreign) fs.remove_dir(d);
  };
  for (const std::string& name : fs.list(dir)) {
    auto sub = dir / name;
    if (!fs.is_directory(sub)) continue;
    if (name == "log" || name.starts_with("topic-")) {
      clear(sub);
    } else if (name == "index") {
      bool foreign = false;
      for (const std::string& topic : fs.list(sub)) {
        if (topic.starts_with("topic-") && fs.is_directory(sub / topic))
          clear(sub / topic);
        else
          foreign = true;
      }
      if (!foreign && fs.list(sub).empty()) fs.remove_dir(sub);
    }
  }
}

}  // namespace detail

std::unique_ptr<CommitLog> open_commit_log(const std::filesystem::path& dir, const Options& options) {
  return detail::open_commit_log(detail::posix_fs(), dir, options);
}

void remove_log_files(const std::filesystem::path& dir) { detail::remove_log_files(detail::posix_fs(), dir); }

}  // namespace iolab::commitlog
