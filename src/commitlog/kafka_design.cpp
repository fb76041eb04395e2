// The kafka design: a log per topic, written with pwrite, batches of
// messages, no flush thread (the page cache and replication stand for it).
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include "design_base.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"
#include "log.h"
#include "segment_reader.h"
#include "topic_index.h"
#include "worker.h"

namespace iolab::commitlog::detail {
namespace {

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
      lc.index_interval = options_.indexes ? options_.index_interval : 0;
      logs_.push_back(std::make_unique<Log>(fs_, lc));
      open_report_.logs.push_back(logs_.back()->open(options_.recovery));
      // At a roll Kafka schedules a flush of the old segment on another thread.
      logs_.back()->on_roll([this, t](Log::Mark m) {
        std::lock_guard lock(roll_mu_);
        roll_queue_.emplace_back(t, m);
        roll_flusher_.wake();
      });
    }
    roll_flusher_.start("log-roll-flush", std::chrono::seconds(1), failure_, [this](bool) { flush_rolled(); });
  }

  Ack append_staged(std::uint32_t topic, Staged& staged) override {
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
  LogPositions positions(std::uint32_t log) const noexcept override {
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
    return find_in_log(fs_, *logs_.at(log), sequence);
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

std::unique_ptr<CommitLog> open_kafka_log(LogFs& fs, const std::filesystem::path& dir, const Options& options) {
  auto log = std::make_unique<KafkaDesign>(fs, dir, options);
  log->open();
  return log;
}

}  // namespace iolab::commitlog::detail
