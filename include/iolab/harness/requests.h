// The calls of one worker's pass over a file, and the loops that issue them.
// Every file workload (single runs, parallel regions, MPI ranks) moves its
// bytes through these loops, so a method is timed the same way everywhere:
// a plain loop in throughput passes (no clock read per call), a loop that
// times every call (or every request of a queued method) in the latency
// pass, and a loop that checks every byte in the verification pass.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "iolab/harness/engine.h"
#include "iolab/base/histogram.h"
#include "iolab/results/kinds.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"

namespace iolab::harness {

// `count()` calls of `block` bytes covering [begin, begin + length), in order
// or in a fixed permutation of the blocks (repeated `rounds` times, a fresh
// permutation each round); the last call may be shorter.
struct RequestPlan {
  results::Op op = results::Op::Read;
  std::uint64_t begin = 0, length = 0, block = 0;
  std::vector<std::uint64_t> order;  // block indices (rand); empty = sequential
  // Random reads: when set, a pass ends at the first call after it turns
  // true (a time bound kept by another thread; the tally says what was
  // read). Sequential passes and writes ignore it.
  const std::atomic<bool>* stop = nullptr;

  // The blocks of [begin, begin + length): one round.
  std::uint64_t blocks() const noexcept { return block == 0 ? 0 : (length + block - 1) / block; }
  std::uint64_t count() const noexcept { return order.empty() ? blocks() : order.size(); }
  std::uint64_t offset(std::uint64_t i) const noexcept { return begin + (order.empty() ? i : order[i]) * block; }
  std::size_t size(std::uint64_t i) const noexcept {
    std::uint64_t at = offset(i) - begin;
    return static_cast<std::size_t>(length - at < block ? length - at : block);
  }
  // The calls a sequential pass hands to File::read_sequence: its whole
  // blocks (none for a random order, whose calls go one by one).
  std::uint64_t sequence_blocks() const noexcept { return block == 0 || !order.empty() ? 0 : length / block; }
};
// Throws UsageError for a zero block or length. `rounds` (random plans
// only): how many times the plan covers every block.
RequestPlan make_plan(results::Op op, std::uint64_t begin, std::uint64_t length, std::uint64_t block, results::AccessPattern pattern,
                      std::uint64_t seed, unsigned rounds = 1);

// What a file is expected to hold, so a read can be checked on the path that read it.
class Content {
 public:
  virtual ~Content() = default;
  // True when `data` is what the file holds at `offset`.
  virtual bool matches(std::uint64_t offset, std::span<const std::byte> data) const = 0;
};

// Files written by io::fill_pattern(seed) (the read experiments' files).
class PatternContent final : public Content {
 public:
  explicit PatternContent(std::uint64_t seed) : seed_(seed) {}
  bool matches(std::uint64_t offset, std::span<const std::byte> data) const override;

 private:
  std::uint64_t seed_;
};

// The bytes writes take: pattern bytes repeating with a period, generated
// once (no pattern is generated in a timed region) and kept `block` bytes
// longer than the period, so any block-sized write finds its bytes in one
// piece. A file written from it holds ring[offset % period] at every offset.
class WriteSource final : public Content {
 public:
  WriteSource(std::uint64_t seed, std::uint64_t total, std::uint64_t block, io::BufferKind kind);
  std::span<const std::byte> at(std::uint64_t offset, std::size_t length) const noexcept {
    return {ring_.data() + offset % period_, length};
  }
  std::uint64_t period() const noexcept { return period_; }
  // The ring every write takes its bytes from, for io_uring's fixed buffers
  // to register (registration pins the pages; nothing writes to them).
  std::span<std::byte> buffer() const noexcept { return {const_cast<std::byte*>(ring_.data()), ring_.size()}; }
  bool matches(std::uint64_t offset, std::span<const std::byte> data) const override;
  // Compares [offset, offset + length) of `file` (read back with pread) with
  // what a write from this source put there (DataCheck::Tail: its last block
  // only); the first bad offset, if any.
  std::optional<std::uint64_t> mismatch(const std::filesystem::path& file, std::uint64_t offset,
                                        std::uint64_t length, DataCheck check = DataCheck::Full) const;

 private:
  std::uint64_t period_;
  io::Buffer ring_;
};

// Buffers reads land in: one per request that may be in flight.
class ReadSlots {
 public:
  ReadSlots(unsigned slots, std::uint64_t block, io::BufferKind kind);
  std::span<std::byte> slot(unsigned i) noexcept { return buffer_.span().subspan(i * block_, block_); }
  unsigned count() const noexcept { return slots_; }
  const void* address() const noexcept { return buffer_.data(); }
  // All slots as one buffer (io_uring fixed buffers register it).
  std::span<std::byte> buffer() noexcept { return buffer_.span(); }

 private:
  unsigned slots_;
  std::size_t block_;
  io::Buffer buffer_;
};

// What a loop found besides its tally.
struct LoopOutcome {
  WorkerTally tally;
  std::uint64_t short_calls = 0;                // reads that came back shorter than the plan
  std::optional<std::uint64_t> bad_offset;      // Verify passes: the first offset whose bytes were wrong
  // Reads: the call (or request) that completed last, still in its buffer
  // after the pass, so a timed pass can check one block untimed.
  std::uint64_t last_offset = 0;
  std::span<const std::byte> last_block;
  std::uint64_t flushes = 0;  // writes: the flushes the loop made (the policy's inline schedules)
};

// Called after each write with the bytes written so far (the background
// flusher of AsyncBytes); may be null.
class WriteObserver {
 public:
  virtual ~WriteObserver() = default;
  virtual void wrote(std::uint64_t total) = 0;
};

// Reads the plan into `slots` (stream() with one slot per request in flight
// for queued methods). Latency passes record into `latency`; Verify passes
// check every call's bytes against `expected`.
LoopOutcome read_pass(io::File& file, bool queued, const RequestPlan& plan, ReadSlots& slots, PassKind kind,
                      LatencyHistogram* latency, const Content& expected);

// Writes the plan from `source`, flushing inline as `flush` says: its
// EveryWrite, EveryBytes and EveryOps schedules (an interval of 0 is 1),
// with its call as given (resolve it first). Its other schedules (End,
// AsyncBytes) are the caller's, around the loop: none flushes here.
LoopOutcome write_pass(io::File& file, bool queued, const RequestPlan& plan, const WriteSource& source, PassKind kind,
                       LatencyHistogram* latency, const io::FlushPolicy& flush, WriteObserver* observer);

}  // namespace iolab::harness
