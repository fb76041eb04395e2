// A message log written the way a message queue writes it: one small
// interface, six designs behind it (docs/commitlog.md).
//
//   kafka               a log per topic; pwrite of producer batches; sparse
//                       offset index through mmap; no flush but one at roll,
//                       off the append path
//   rocketmq            one shared log of preallocated, mapped segments
//                       (created ahead, optionally warmed); a flush thread
//                       msyncs once >= 16 KiB is dirty; per-topic index
//   rocketmq-transient  appends into an aligned buffer; a commit thread
//                       pwrites it; a flush thread fdatasyncs
//   qmq                 one shared log of preallocated, mapped segments
//                       (the next mapped only when one fills); each message
//                       stored through the mapping; a flush thread msyncs
//                       once >= 16 KiB is dirty; mmap reads
//   activemq            lseek + one write per batch of messages; never flushes
//   group-commit        pwrite appends; each append waits until an fdatasync
//                       covers it, one leader syncing for everyone waiting
//
// Thread safety: append() may be called from any number of threads at once;
// the other members too, except close() (REQUIRES: no append in progress).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/commitlog/reader.h"
#include "iolab/base/histogram.h"

namespace iolab::commitlog {

enum class Design { Kafka, RocketMq, RocketMqTransient, Qmq, ActiveMq, GroupCommit };
inline constexpr Design kAllDesigns[] = {Design::Kafka, Design::RocketMq, Design::RocketMqTransient,
                                         Design::Qmq,   Design::ActiveMq, Design::GroupCommit};

std::string_view to_string(Design d) noexcept;
// "kafka", "rocketmq", ...; throws UsageError naming the text otherwise.
Design parse_design(std::string_view name);
// One line: write path, flush, read path.
std::string_view describe(Design d) noexcept;

// How far an acknowledged message got, weakest first.
enum class AckLevel {
  Buffered,  // in the process's memory: lost if the process dies (rocketmq-transient before its commit)
  Written,   // in the kernel (page cache): survives the process, not a power loss
  Durable,   // synced: survives a power loss
};
std::string_view to_string(AckLevel a) noexcept;

// What each design is, so callers decide by facts, never by a design's name.
struct DesignTraits {
  bool log_per_topic = false;   // kafka: a log (directory of segments) per topic; else one shared log
  bool topic_index = false;     // a per-topic index of 20-byte entries beside the shared log
  bool writes_through_map = false;
  bool preallocates = false;    // a segment's blocks allocated (fallocate) when it is created, before any write;
                                // whether the next one is made ahead of need is the design's (rocketmq: yes, qmq: no)
  bool flush_thread = false;    // a background thread makes data durable while appends go on
  bool commit_thread = false;   // a background thread moves appended data into the file
  bool batches = false;         // the producer sends batches of messages (Kafka's batch.size)
  AckLevel ack = AckLevel::Written;
  ReadPath read_path = ReadPath::Pread;  // what its consumers read with
};
DesignTraits traits(Design d) noexcept;

// What to do at open with a log whose valid messages stop before its end.
enum class Recovery {
  Truncate,  // drop everything from the first invalid message on (Kafka's and RocketMQ's recovery)
  Refuse,    // throw Error with the offset when valid messages follow the damage; a torn tail is still cut
};

struct Options {
  Design design = Design::Kafka;
  std::uint64_t segment_size = std::uint64_t{1} << 30;  // bytes per segment file (Kafka's and RocketMQ's 1 GiB)
  std::uint32_t topics = 1;
  // kafka: the producer batch (batch.size) and an index entry every this many log bytes.
  std::size_t batch_bytes = 16 * 1024;
  std::size_t index_interval = 4096;
  // Flush threads: check every flush_interval; sync once flush_min_bytes are
  // unsynced, or anything unsynced after flush_thorough_interval.
  std::chrono::nanoseconds flush_interval = std::chrono::milliseconds(10);
  std::size_t flush_min_bytes = 16 * 1024;
  std::chrono::nanoseconds flush_thorough_interval = std::chrono::seconds(10);
  // rocketmq-transient: the commit thread runs every commit_interval, or as
  // soon as the buffer is half full.
  std::chrono::nanoseconds commit_interval = std::chrono::milliseconds(200);
  std::size_t transient_buffer = std::size_t{64} << 20;
  // activemq: the most its writer thread writes with one call (KahaDB's
  // journal.writeBatchSize, 4 MiB); its buffer holds two such batches, one
  // written while the next fills.
  std::size_t write_batch = std::size_t{4} << 20;
  // rocketmq: touch every page of a new segment, mlock it, MADV_WILLNEED.
  bool warm_up = false;
  // Mapped designs (rocketmq, qmq): a thread of the log faults the mapping in
  // for writing up to this far past the write position (MADV_POPULATE_WRITE),
  // so appends do not pay the first touch of each page, and no more than this
  // is dirtied ahead (warm_up dirties the whole segment); 0: appends fault
  // pages in themselves.
  std::size_t touch_ahead = std::size_t{16} << 20;
  // Per-topic index files: entries per file (RocketMQ: 300,000 of 20 bytes).
  std::uint32_t index_entries_per_file = 300'000;
  // The design's indexes: kafka's sparse offset index, the per-topic index
  // of rocketmq, rocketmq-transient and qmq. Off, a design is its bare
  // write mechanism, so what an index costs is the difference of two runs
  // (issue 45); topic_index() is then empty and reads scan the log.
  bool indexes = true;
  Recovery recovery = Recovery::Truncate;
};

// A message's place in its log.
struct Ack {
  std::uint32_t log = 0;             // which log: the topic for kafka, 0 for a shared log
  std::uint64_t first_sequence = 0;  // of the first message of the append
  std::uint32_t count = 0;
  AckLevel level = AckLevel::Written;
};

// The three positions RocketMQ keeps per log, as sequence numbers: the last
// message appended, moved into the file (survives the process), synced.
struct LogPositions {
  std::uint64_t written = 0, committed = 0, durable = 0;
};

// One sync that made messages durable: through `sequence` of `log`, done at `done_ns` (steady clock).
struct FlushEvent {
  std::uint32_t log = 0;
  std::uint64_t sequence = 0;
  std::uint64_t done_ns = 0;
};

struct Stats {
  std::uint64_t appends = 0, messages = 0, bytes = 0;  // bytes: frames appended
  std::uint64_t flushes = 0, flushed_bytes = 0;        // syncs that made data durable, and the bytes they covered
  std::uint64_t flush_ns = 0;                          // time spent in them, in all
  LatencyHistogram flush_latency;             // per sync round (fdatasync / msync calls)
  std::uint64_t commits = 0, committed_bytes = 0;      // rocketmq-transient's commit pwrites
  std::uint64_t buffer_full_waits = 0;                 // appends that waited for the commit thread
  std::uint64_t rolls = 0;                             // segment rolls on the append path ...
  LatencyHistogram roll_latency;              // ... and what each cost there
  std::uint64_t segments_allocated_ahead = 0;          // created off the append path ...
  std::uint64_t allocate_ahead_ns = 0;                 // ... and the time that took (warm-up included)
  std::uint64_t roll_waits = 0;                        // rolls that waited for the next segment
  std::string warm_up_note;                            // e.g. why mlock was refused
  std::uint64_t touched_ahead_bytes = 0;               // faulted in ahead of the writer (Options::touch_ahead)
  std::vector<FlushEvent> flush_events;                // in time order
};

// What open found and repaired, per log.
struct LogRecovery {
  std::filesystem::path dir;
  std::uint64_t messages = 0, last_sequence = 0;
  std::optional<Damage> damage;          // the first invalid message, if the log did not end cleanly
  std::uint64_t truncated_bytes = 0;     // cut from the segment holding the damage
  std::uint64_t removed_segments = 0;    // later segments deleted (and empty ones created ahead)
};
struct OpenReport {
  std::vector<LogRecovery> logs;
  std::uint64_t index_entries_dropped = 0;  // per-topic / offset index entries past the recovered end
};

class CommitLog {
 public:
  virtual ~CommitLog() = default;
  CommitLog(const CommitLog&) = delete;
  CommitLog& operator=(const CommitLog&) = delete;

  // Appends the bodies as consecutive messages of `topic` (< Options::topics)
  // and returns once they reach the design's acknowledgement level. Throws
  // Error for a body over kMaxBodySize or larger than a segment, and for any
  // write or sync failure; after a failure every later append throws it too.
  virtual Ack append(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) = 0;
  Ack append(std::uint32_t topic, std::span<const std::byte> body) { return append(topic, {&body, 1}); }
  // A producer batch laid out as the log stores it (Kafka's producer builds
  // its record batch in the log's format; the broker writes it as it is):
  // `frames` holds the messages back to back, each body after
  // kFrameHeaderSize bytes left for its header, body_sizes[i] the i-th
  // body's size. The log writes each header into its room in `frames` and
  // writes the frames with one call per run (no gather of headers and
  // bodies). Otherwise as append(); Error (EINVAL) when the sizes do not
  // fill `frames` exactly.
  virtual Ack append_framed(std::uint32_t topic, std::span<std::byte> frames,
                            std::span<const std::uint32_t> body_sizes) = 0;

  // Number of logs and which one holds a topic.
  virtual std::uint32_t log_count() const noexcept = 0;
  virtual std::uint32_t log_of(std::uint32_t topic) const noexcept = 0;
  virtual std::filesystem::path log_dir(std::uint32_t log) const = 0;
  virtual LogPositions positions(std::uint32_t log) const noexcept = 0;

  // Everything a reader of `log` may see now: messages before `position`,
  // through `sequence` (committed data: the page cache, not user buffers).
  struct Visible {
    std::uint64_t position = 0, sequence = 0;
  };
  virtual Visible visible(std::uint32_t log) const noexcept = 0;
  // Blocks until `log` shows more than `sequence`, the log closes, or `timeout` passes.
  virtual void wait_visible(std::uint32_t log, std::uint64_t sequence, std::chrono::nanoseconds timeout) = 0;

  // Per-topic index (traits().topic_index): (log position, frame size) of
  // every message of `topic`, in order, read from its index files.
  virtual std::vector<std::pair<std::uint64_t, std::uint32_t>> topic_index(std::uint32_t topic) = 0;
  // Offset index (kafka): the log position of message `sequence` of `log`,
  // found through the sparse index and a scan from there.
  virtual std::optional<std::uint64_t> find(std::uint32_t log, std::uint64_t sequence) = 0;

  virtual Stats stats() const = 0;
  const Options& options() const noexcept { return options_; }
  const OpenReport& open_report() const noexcept { return open_report_; }

  // Stops the background threads, makes everything appended durable (a clean
  // shutdown), trims preallocated index space and closes the files; errors
  // surface here. Twice is harmless; the destructor closes quietly.
  virtual void close() = 0;

 protected:
  explicit CommitLog(Options options) : options_(std::move(options)) {}
  Options options_;
  OpenReport open_report_;
};

// Opens (recovering) or creates the log kept in `dir`, a directory iolab
// made. Throws UsageError for bad options and Error for a log that cannot be
// opened (files that are not the design's layout, damage under Refuse).
std::unique_ptr<CommitLog> open_commit_log(const std::filesystem::path& dir, const Options& options);

// Removes what commit logs made in `dir` (segment, offset index and topic
// index files, and their directories) and nothing else: a name it does not
// recognise stays where it is, and so does `dir`. Never follows a symbolic
// link. Throws Error when a removal fails.
void remove_log_files(const std::filesystem::path& dir);

}  // namespace iolab::commitlog
