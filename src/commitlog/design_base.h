// Internal: what every design shares (the failure state, counters, input
// checks) and how designs.cpp opens each family.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "files.h"
#include "iolab/base/error.h"
#include "iolab/commitlog/commit_log.h"
#include "log.h"

namespace iolab::commitlog::detail {

// The directory of a topic's log (kafka) or index (the shared log).
inline std::string topic_dir_name(std::uint32_t topic) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "topic-%05u", topic);
  return buf;
}

// What every design shares: the failure state, counters, input checks.
class DesignBase : public CommitLog {
 public:
  std::uint32_t log_of(std::uint32_t topic) const noexcept override {
    return traits(options_.design).log_per_topic ? topic : 0;
  }

  using CommitLog::append;
  Ack append(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) final {
    return append_staged(topic, stage(topic, bodies));
  }
  Ack append_framed(std::uint32_t topic, std::span<std::byte> frames,
                    std::span<const std::uint32_t> body_sizes) final {
    return append_staged(topic, stage_framed(topic, frames, body_sizes));
  }

 protected:
  DesignBase(LogFs& fs, std::filesystem::path dir, Options o)
      : CommitLog(std::move(o)), fs_(fs), dir_(std::move(dir)) {}

  // The design's append of staged frames: place, write, publish, acknowledge.
  virtual Ack append_staged(std::uint32_t topic, Staged& staged) = 0;

  // Checks an append's input, and stages its frames (outside any lock).
  Staged& stage(std::uint32_t topic, std::span<const std::span<const std::byte>> bodies) {
    Staged& staged = start_staging(topic, bodies.size());
    for (auto body : bodies) {
      check_body(body.size());
      staged.add(body);
    }
    return staged;
  }
  // The same for a batch laid out as frames (append_framed).
  Staged& stage_framed(std::uint32_t topic, std::span<std::byte> frames, std::span<const std::uint32_t> body_sizes) {
    Staged& staged = start_staging(topic, body_sizes.size());
    std::size_t at = 0;
    for (std::uint32_t size : body_sizes) {
      check_body(size);
      if (frames.size() - at < frame_size(size)) break;
      staged.add_framed(frames.data() + at, frames.subspan(at + kFrameHeaderSize, size));
      at += frame_size(size);
    }
    if (staged.items.size() != body_sizes.size() || at != frames.size())
      throw Error("append", dir_.string(),
                  std::to_string(body_sizes.size()) + " framed messages do not fill the " +
                      std::to_string(frames.size()) + " bytes given",
                  EINVAL);
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

 private:
  Staged& start_staging(std::uint32_t topic, std::size_t messages) {
    failure_.check();
    if (topic >= options_.topics)
      throw Error("append", dir_.string(),
                  "topic " + std::to_string(topic) + " of " + std::to_string(options_.topics), EINVAL);
    if (messages == 0) throw Error("append", dir_.string(), "no message to append", EINVAL);
    thread_local Staged staged;
    staged.clear();
    return staged;
  }
  void check_body(std::uint64_t size) const {
    if (size > kMaxBodySize || frame_size(size) > options_.segment_size)
      throw Error("append", dir_.string(),
                  "a message of " + std::to_string(size) + " bytes is larger than " +
                      (size > kMaxBodySize ? "the largest a frame holds (16 MiB)"
                                           : "a segment of " + std::to_string(options_.segment_size) +
                                                 " bytes with its header"),
                  EMSGSIZE);
  }
};

// Where the frame of `sequence` starts in `log` (its log position), among
// the committed frames; nullopt when it is not there.
std::optional<std::uint64_t> find_in_log(LogFs& fs, Log& log, std::uint64_t sequence);

// Opens (recovering) a log of a family in `dir` (options validated).
std::unique_ptr<CommitLog> open_shared_log(LogFs& fs, const std::filesystem::path& dir, const Options& options);
std::unique_ptr<CommitLog> open_kafka_log(LogFs& fs, const std::filesystem::path& dir, const Options& options);

}  // namespace iolab::commitlog::detail
