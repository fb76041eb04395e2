// Inside the commit log: one producer thread of a run (traffic.cpp): it
// makes messages, batches them per topic, appends them and times each from
// its send time to its acknowledgement.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "iolab/base/histogram.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/traffic.h"

namespace iolab::commitlog::detail {

constexpr std::size_t kBodyHeader = 16;  // send time, producer and index
constexpr std::uint64_t kDurableSampleEvery = 100'000;  // ns

// A message whose time to durable is measured: the last of an append.
struct DurableSample {
  std::uint32_t log = 0;
  std::uint64_t sequence = 0, send_ns = 0;
};

struct Second {
  std::uint64_t messages = 0, bytes = 0;
  LatencyHistogram latency;
};

// What one producer measured.
struct ProducerResult {
  double cpu_seconds = 0;
  LatencyHistogram latency;
  std::vector<Second> seconds;
  std::vector<DurableSample> samples;
  std::uint64_t messages = 0, bytes = 0, last_ack_ns = 0, clock_reads = 0;
  std::uint64_t over[4] = {0, 0, 0, 0};
};

// Messages waiting to be sent to one topic, back to back.
struct Batch {
  std::vector<std::byte> bytes;  // the frames: room for each header, then its body
  std::vector<std::uint32_t> body_sizes;
  std::vector<std::uint64_t> send_ns;
  void clear() {
    bytes.clear();
    body_sizes.clear();
    send_ns.clear();
  }
};

class Producer {
 public:
  Producer(CommitLog& log, const TrafficConfig& config, Clocking clocking, unsigned id, std::uint64_t quota,
           std::size_t batch_bytes)
      : log_(log), config_(config), clocked_(clocking == Clocking::PerMessage), id_(id), quota_(quota),
        batch_bytes_(batch_bytes), batches_(config.log.topics) {
    body_.resize(config.message_size);
    std::mt19937_64 rng(config.seed * 1'000'003 + id);
    for (auto& b : body_) b = static_cast<std::byte>(rng());
  }

  void run(std::uint64_t start_ns, std::uint64_t end_ns, const std::atomic<bool>& stop);

  ProducerResult& result() noexcept { return result_; }

 private:
  std::uint64_t clock();
  void make(std::uint64_t index, std::uint64_t send_ns);
  void send_all();
  void send(std::uint32_t topic);
  void acknowledged(const Ack& ack, std::span<const std::uint64_t> send_ns);
  void record(std::uint64_t send_ns, std::uint64_t ack_ns, std::size_t bytes);

  CommitLog& log_;
  const TrafficConfig& config_;
  bool clocked_;
  unsigned id_;
  std::uint64_t quota_;
  std::size_t batch_bytes_;
  std::vector<std::byte> body_;
  std::vector<Batch> batches_;
  std::uint64_t start_ns_ = 0, last_sample_ns_ = 0;
  ProducerResult result_;
};

}  // namespace iolab::commitlog::detail
