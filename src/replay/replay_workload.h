// Internal to the replay layer: the workload that replays a trace through
// one method (replay.h), declared for its two files: replay_setup.cpp (what
// a method can replay, the files before each pass) and replay.cpp (the
// timed pass, verification, the record's fields).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/base/histogram.h"
#include "iolab/harness/requests.h"
#include "iolab/io/buffer.h"
#include "iolab/replay/replay.h"

namespace iolab::replay {

namespace detail {

using trace::Op;
using trace::OpKind;

inline std::string op_words(std::size_t index, const Op& op) {
  return "op " + std::to_string(index + 1) + " (" + std::string(trace::to_string(op.kind)) + " at " +
         std::to_string(op.offset) + ", " + std::to_string(op.length) + " bytes)";
}

// What a file holds after the ops so far: its size, and the ranges holding
// the pattern (initial contents and writes); every other byte below the
// size is zero (a hole, or a file truncated and extended).
class Layout {
 public:
  explicit Layout(std::uint64_t initial) : size_(initial) {
    if (initial > 0) data_[0] = initial;
  }
  std::uint64_t size() const { return size_; }
  void write(std::uint64_t off, std::uint64_t len) {
    if (len == 0) return;
    std::uint64_t start = off, end = off + len;
    auto it = data_.upper_bound(start);
    if (it != data_.begin() && std::prev(it)->second >= start) --it;
    while (it != data_.end() && it->first <= end) {
      start = std::min(start, it->first);
      end = std::max(end, it->second);
      it = data_.erase(it);
    }
    data_[start] = end;
    size_ = std::max(size_, off + len);
  }
  void truncate(std::uint64_t to) {
    auto it = data_.lower_bound(to);
    data_.erase(it, data_.end());
    if (!data_.empty() && data_.rbegin()->second > to) data_.rbegin()->second = to;
    size_ = to;
  }
  // The bytes a read of `len` at `off` returns.
  std::uint64_t readable(std::uint64_t off, std::uint64_t len) const { return off >= size_ ? 0 : std::min(len, size_ - off); }
  // The first byte of `data` (the file's bytes from `off`) that is not what the file holds.
  std::optional<std::uint64_t> mismatch(const harness::WriteSource& source, std::uint64_t off,
                                        std::span<const std::byte> data) const {
    const std::uint64_t end = off + data.size();
    std::uint64_t at = off;
    auto it = data_.upper_bound(off);
    if (it != data_.begin()) --it;
    while (at < end) {
      while (it != data_.end() && it->second <= at) ++it;
      const bool pattern = it != data_.end() && it->first <= at;
      const std::uint64_t run_end = std::min(end, pattern ? it->second : (it == data_.end() ? end : it->first));
      auto part = data.subspan(static_cast<std::size_t>(at - off), static_cast<std::size_t>(run_end - at));
      if (pattern) {
        if (!source.matches(at, part))
          for (std::size_t k = 0; k < part.size(); ++k)
            if (!source.matches(at + k, part.subspan(k, 1))) return at + k;
      } else {
        for (std::size_t k = 0; k < part.size(); ++k)
          if (part[k] != std::byte{0}) return at + k;
      }
      at = run_end;
    }
    return std::nullopt;
  }

 private:
  std::map<std::uint64_t, std::uint64_t> data_;  // start -> end, disjoint, not touching
  std::uint64_t size_;
};

// What the replay does for each op, decided once before any pass.
enum class Action : std::uint8_t { Read, Write, Sync, Truncate, Flush, Nothing };

inline constexpr std::size_t kKinds = static_cast<std::size_t>(OpKind::Unmap) + 1;

class ReplayWorkload final : public harness::Workload {
 public:
  ReplayWorkload(const Trace& t, const io::Method& method, const Settings& s, io::ScratchDir& scratch,
                 results::Result& record)
      : t_(t), method_(method), s_(s), scratch_(scratch), record_(record) {}
  ~ReplayWorkload() override { teardown(); }

  std::optional<std::string> setup() override;
  void before_pass(harness::PassKind) override;
  harness::PassBody pass(harness::PassKind kind) override;
  void after_pass(harness::PassKind kind) override;
  void teardown() override;
  bool verifies_after_timing() const override { return true; }
  bool kernel_counts_calls() const override { return traits_.library_calls; }
  results::LatencySource latency_source() const override { return results::LatencySource::EveryCall; }
  void describe(results::Result& r) const override;

 private:
  struct Slot {
    std::filesystem::path path;
    std::unique_ptr<io::File> file;
  };
  std::optional<std::string> plan();
  void open_all();
  void close_all(std::uint64_t& calls);
  void truncate(Slot& slot, std::uint64_t to, std::uint64_t& calls);
  harness::WorkerTally run(harness::PassKind kind);
  // Queued methods: the reads and writes of one wave (ops first .. first +
  // count - 1) in flight together, each file's part submitted at once.
  void run_wave(std::size_t first, std::size_t count, bool verify, std::vector<Layout>& live,
                harness::WorkerTally& tally);
  void plan_waves(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& hazard);
  void check_read(std::size_t i, std::size_t n, std::span<const std::byte> data, const Layout& l) const;
  void check_files(harness::PassKind kind);
  [[noreturn]] void not_verified(const std::filesystem::path& file, std::uint64_t offset, const std::string& what) const;

  const Trace& t_;
  const io::Method& method_;
  Settings s_;
  io::ScratchDir& scratch_;
  results::Result& record_;
  io::MethodTraits traits_;
  std::size_t align_ = 1;
  std::vector<std::uint32_t> file_of_;  // per op: its file's index in the header
  std::vector<Action> action_;          // per op
  std::array<io::Durability, kKinds> durability_{};
  std::array<std::uint64_t, kKinds> kind_ops_{}, not_replayed_{};
  std::array<std::string, kKinds> why_not_;
  std::vector<Layout> final_;  // each file after a whole pass
  std::optional<Layout> at_last_read_;
  std::size_t last_read_ = SIZE_MAX;
  std::uint64_t expected_read_bytes_ = 0;
  std::unique_ptr<harness::WriteSource> source_;
  io::Buffer read_buffer_;  // depth_ slots of slot_bytes_: a wave's reads each have their own
  std::size_t slot_bytes_ = 0;
  std::size_t last_read_slot_ = 0;  // where the pass's last read put its bytes
  // Queued methods: requests in flight at most (the trace's depth, replay.h), 1 for the others.
  unsigned depth_ = 1;
  // Per op, when depth_ > 1: at a wave's first op, the ops the wave spans
  // (its reads and writes, and ops with nothing to do between them); 0 elsewhere.
  std::vector<std::uint32_t> wave_len_;
  std::size_t depth_reached_ = 1;  // most requests one file's submission of a wave holds
  std::vector<io::IoRequest> wave_requests_;  // scratch of run_wave
  std::vector<Slot> slots_;
  // The current pass.
  std::uint64_t read_bytes_ = 0, last_read_count_ = 0;
  std::array<LatencyHistogram, kKinds> kind_latency_;
  unsigned verify_passes_ = 0;
};

}  // namespace detail
}  // namespace iolab::replay
