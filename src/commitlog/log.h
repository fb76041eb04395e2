// Internal: one append-only log of segment files, the machinery every design
// shares. A design decides how frames reach the file (pwrite, lseek + write,
// stores through a mapping, or a user buffer committed later) and when they
// are synced; Log keeps the positions, rolls segments, syncs ranges and
// recovers the log at open.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "files.h"
#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog::detail {

// A failure of a background thread or of an append, kept so that every later
// append reports it (RocketMQ marks the store not writeable; Kafka takes the
// log directory offline). The first failure wins.
class FailureState {
 public:
  void set(std::exception_ptr e) noexcept;
  // Rethrows the stored failure, if any.
  void check() const;
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

// Runs several closing steps, each even if an earlier one failed, and
// reports the first failure at the end.
class FirstError {
 public:
  template <typename F>
  void attempt(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
};

// An append's messages, checked and CRC'd outside the append lock: each
// frame's header is filled in by place() once the lock assigns sequence
// numbers; bodies stay where the caller has them (no copy) until written.
struct Staged {
  struct Item {
    std::array<std::byte, kFrameHeaderSize> header{};
    std::span<const std::byte> body;
    std::uint32_t body_crc = 0;
    // The caller's room for this header, right before `body` (append_framed);
    // place() writes the header there too. Null for a plain append.
    std::byte* room = nullptr;
    std::uint64_t size() const noexcept { return kFrameHeaderSize + body.size(); }
  };
  std::vector<Item> items;
  std::uint64_t bytes = 0;  // of all frames
  void clear() noexcept {
    items.clear();
    bytes = 0;
  }
  // REQUIRES: `body` outlives the append.
  void add(std::span<const std::byte> body);
  // A frame of the caller's: `room` (kFrameHeaderSize bytes) then `body`.
  void add_framed(std::byte* room, std::span<const std::byte> body);
};

// Kafka's sparse offset index for one segment: (sequence relative to the
// segment's first, position) pairs of 4 + 4 bytes in a preallocated, mapped
// file "<base>.index", an entry every `interval` bytes of log.
class OffsetIndex {
 public:
  static constexpr std::size_t kEntrySize = 8;
  OffsetIndex(LogFs& fs, std::filesystem::path path, std::uint64_t capacity_entries, bool create);
  // REQUIRES: the append lock.
  void append(std::uint32_t relative_sequence, std::uint32_t position);
  std::uint64_t entries() const noexcept { return entries_; }
  // Syncs the entries written so far.
  void sync();
  // Trims the file to its entries and releases the mapping (at roll and close).
  void trim();
  const std::filesystem::path& path() const noexcept { return path_; }

  // The largest entry whose sequence is <= `relative_sequence`, read from an index file.
  static std::optional<std::pair<std::uint32_t, std::uint32_t>> lookup(LogFs& fs, const std::filesystem::path& path,
                                                                       std::uint32_t relative_sequence);

 private:
  std::filesystem::path path_;
  std::unique_ptr<LogFile> file_;
  MappedRegion map_;
  std::uint64_t capacity_ = 0, entries_ = 0;
};

struct Segment {
  std::filesystem::path path;
  std::uint64_t base = 0, capacity = 0;
  std::unique_ptr<LogFile> file;  // null once sealed and closed (no syncer keeps it)
  MappedRegion map;               // writes through the mapping (WriteCall::Mapped)
  std::uint64_t end = 0;                  // where place() has reached (append lock)
  std::atomic<std::uint64_t> placed{0};   // bytes of published frames (in the file, or in a design's buffer)
  std::atomic<std::uint64_t> written{0};  // bytes of complete frames in the file
  std::atomic<bool> sealed{false};        // rolled, and its last frame published
  std::uint64_t synced = 0;               // bytes made durable (sync lock)
  std::uint64_t first_sequence = 0;  // 0 until a frame is placed (append lock)
  std::unique_ptr<OffsetIndex> index;
  std::uint64_t bytes_since_index = 0;
};

enum class WriteCall { Pwrite, Mapped, None /* a design writes the bytes itself */ };

struct LogConfig {
  std::filesystem::path dir;
  std::uint32_t id = 0;  // the log's number in Ack::log
  std::uint64_t segment_size = 0;
  WriteCall write = WriteCall::Pwrite;
  bool map_for_write = false;   // map each segment read-write (WriteCall::Mapped)
  bool preallocate = false;     // allocate every segment's blocks when it is created
  bool create_ahead = false;    // a thread prepares the next segment before it is needed
  bool warm_up = false;         // touch every page, mlock, MADV_WILLNEED (with create_ahead)
  std::uint64_t touch_ahead = 0;  // what touch_ahead() faults in past the written position (map_for_write)
  bool msync = false;           // sync through the mapping (msync) rather than fdatasync
  bool keep_sealed_open = true; // false: close a segment at roll, reopen it to sync at close
  std::size_t index_interval = 0;  // Kafka's offset index when > 0
};

class Log {
 public:
  Log(LogFs& fs, LogConfig config);
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Recovers the directory's log (creating it when missing) and positions
  // the writer at its end. Call once, before anything else.
  LogRecovery open(Recovery policy);

  const LogConfig& config() const noexcept { return config_; }
  std::mutex& append_mutex() noexcept { return append_mu_; }

  // A stretch of consecutive frames in one segment: items [first, first + count) of the Staged.
  struct Run {
    Segment* segment = nullptr;
    std::uint64_t offset = 0;
    std::size_t first = 0, count = 0;
    std::uint64_t bytes = 0;
  };
  struct Placement {
    std::uint64_t first_sequence = 0, last_sequence = 0;
    std::uint64_t end_position = 0;  // log position just past the last frame
    std::vector<Run> runs;
  };
  // Assigns sequence numbers and positions to the staged frames (patching
  // their headers), rolling segments as needed; `p` is overwritten (reuse
  // one: no allocation per append). REQUIRES: the append lock.
  void place(Staged& staged, Placement& p);
  // Writes a run through the configured call: one pwritev per run, an lseek
  // and a writev per message, or stores through the mapping. REQUIRES: the append lock.
  void write(const Run& run, const Staged& staged);
  // The placed frames are in their segments: they count as written, and as
  // committed too unless `committed` is false (a design committing later).
  void publish(const Placement& p, bool committed = true);
  // A committer moved everything through (position, sequence) into the files.
  void publish_committed(std::uint64_t position, std::uint64_t sequence);

  struct Mark {
    std::uint64_t position = 0, sequence = 0;
  };
  Mark written() const noexcept { return load(written_pos_, written_seq_); }
  Mark committed() const noexcept { return load(committed_pos_, committed_seq_); }
  Mark durable() const noexcept { return load(durable_pos_, durable_seq_); }

  // Blocks until the committed sequence passes `sequence`, close() or
  // `timeout`; looks again, yielding, for up to kWaitSpin before sleeping.
  static constexpr std::chrono::nanoseconds kWaitSpin = std::chrono::microseconds(50);
  void wait_committed(std::uint64_t sequence, std::chrono::nanoseconds timeout);

  // Makes every frame before `m.position` durable (msync or fdatasync of each
  // segment that holds unsynced bytes, then the directory if a segment was
  // created) and records the flush. One caller at a time is served; others
  // wait. After a sync fails, every later call throws that failure.
  void sync_through(Mark m);

  // Faults the mapping in for writing through config().touch_ahead bytes past
  // the written position, in segments that exist (a background thread's job:
  // the appender then takes no first-touch fault). Nothing is stored, so what
  // a crash keeps is unchanged. Call from one thread at a time, before close().
  void touch_ahead();
  // The log position through which touch_ahead() has faulted pages in.
  std::uint64_t touched() const noexcept { return touched_.load(std::memory_order_relaxed); }

  // Segments holding bytes in [from, to), for a committer. They stay valid
  // while the caller holds a reference.
  std::vector<std::shared_ptr<Segment>> segments_between(std::uint64_t from, std::uint64_t to);

  // Log position -> the segment holding it (base and capacity are fixed).
  std::uint64_t segment_base(std::uint64_t position) const noexcept {
    return position / config_.segment_size * config_.segment_size;
  }

  struct Counters {
    std::uint64_t appends = 0, messages = 0, bytes = 0;
    std::uint64_t flushes = 0, flushed_bytes = 0, flush_ns = 0, rolls = 0, roll_waits = 0;
    std::uint64_t allocated_ahead = 0, allocate_ahead_ns = 0;
    LatencyHistogram flush_latency, roll_latency;
    std::vector<FlushEvent> flush_events;
    std::string warm_up_note;
  };
  // Adds this log's counters to `out`.
  void add_counters(Stats& out) const;

  // Called at each roll with the sealed segment (kafka flushes it off the
  // append path). REQUIRES: set before the first append.
  void on_roll(std::function<void(Mark sealed_end)> f) { on_roll_ = std::move(f); }

  // Syncs everything written, trims indexes, closes files, stops the
  // allocator. Twice is harmless.
  void close();

 private:
  static Mark load(const std::atomic<std::uint64_t>& pos, const std::atomic<std::uint64_t>& seq) noexcept {
    // Sequence first: the position read after it covers at least that frame.
    std::uint64_t s = seq.load(std::memory_order_acquire);
    return {pos.load(std::memory_order_acquire), s};
  }
  static void store(std::atomic<std::uint64_t>& pos, std::atomic<std::uint64_t>& seq, Mark m) noexcept {
    pos.store(m.position, std::memory_order_release);
    seq.store(m.sequence, std::memory_order_release);
  }

  void sync_locked(Mark m);
  std::shared_ptr<Segment> make_segment(std::uint64_t base, bool create);
  void prepare(Segment& s, bool fresh);
  // Warms a mapped segment if configured; returns why mlock failed, if it did.
  std::string warm_up(Segment& s);
  void roll();
  void seal(Segment& s);
  void allocator_loop();
  std::shared_ptr<Segment> take_ahead(std::uint64_t base);

  LogFs& fs_;
  LogConfig config_;

  std::mutex append_mu_;
  std::shared_ptr<Segment> current_;
  std::uint64_t next_sequence_ = kFirstSequence;

  // Segments with bytes not yet durable, in order (the current one last).
  std::mutex segments_mu_;
  std::deque<std::shared_ptr<Segment>> unsynced_;

  std::atomic<std::uint64_t> written_pos_{0}, written_seq_{0};
  std::atomic<std::uint64_t> committed_pos_{0}, committed_seq_{0};
  std::atomic<std::uint64_t> durable_pos_{0}, durable_seq_{0};
  std::mutex touch_mu_;  // held while touch_ahead() faults pages in
  std::atomic<std::uint64_t> touched_{0}, touched_bytes_{0};

  std::mutex sync_mu_;
  std::atomic<bool> dir_dirty_{false};
  // A failed sync is final: the kernel may have dropped the data it could not
  // write, so no later sync may claim it durable (PostgreSQL's "fsyncgate").
  std::exception_ptr sync_error_;

  // Segments sealed by place(), handed to publish() once their bytes are out.
  std::vector<std::pair<std::shared_ptr<Segment>, Mark>> sealed_pending_;

  std::mutex visible_mu_;
  std::condition_variable visible_cv_;
  std::atomic<int> visible_waiters_{0};
  std::atomic<bool> readers_waited_{false};
  void wake_waiters();

  mutable std::mutex counters_mu_;
  Counters counters_;
  // Published appends, messages and frame bytes: written under the append
  // lock, read by stats() from any thread.
  std::atomic<std::uint64_t> appends_{0}, messages_{0}, bytes_{0};
  std::function<void(Mark)> on_roll_;

  // The segment allocated ahead (create_ahead).
  std::mutex ahead_mu_;
  std::condition_variable ahead_cv_;
  std::optional<std::uint64_t> ahead_requested_;
  std::shared_ptr<Segment> ahead_ready_;
  std::exception_ptr ahead_error_;
  bool ahead_stop_ = false;
  std::thread ahead_thread_;

  std::atomic<bool> closed_{false};
};

}  // namespace iolab::commitlog::detail
