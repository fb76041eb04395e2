// A producer of a commit-log run (producer.h).
#include "producer.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <random>

#include "iolab/base/clock.h"
#include "iolab/base/error.h"

namespace iolab::commitlog::detail {

namespace {

// Not an I/O retry: a sleep resumed after a signal handler ran.
void sleep_until_ns(std::uint64_t t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

void Producer::run(std::uint64_t start_ns, std::uint64_t end_ns, const std::atomic<bool>& stop) {
  start_ns_ = start_ns;
  const bool open = config_.loop == Loop::Open;
  // Open loop: sleep until each send time rather than spin (two cores are
  // shared with the log's own threads), with the timer's slack cut from
  // 50 µs to 1 ns so the sleep ends on time; what it overshoots is counted
  // in the latency, measured from the intended time.
  if (open) ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const double interval = open ? static_cast<double>(config_.producers) / config_.rate * 1e9 : 0;
  // One message per append in the closed loop: the next message is made
  // right after the last acknowledgement, so that reading of the clock
  // serves as its send time too (one clock read per message, not two).
  const bool reuse_ack_time = !open && batch_bytes_ <= body_.size();
  std::uint64_t made = 0;
  for (;;) {
    if (stop.load(std::memory_order_relaxed) ||
        (config_.cancel != nullptr && config_.cancel->load(std::memory_order_relaxed)))
      break;
    if (!open && !clocked_) {
      // A throughput pass: a message count, no clock (check_traffic).
      if (made >= quota_) break;
      make(made, 0);
      ++made;
      continue;
    }
    std::uint64_t now = reuse_ack_time && made > 0 ? result_.last_ack_ns : clock();
    bool out_of_time = quota_ == 0 && now >= end_ns;
    if ((quota_ > 0 && made >= quota_) || out_of_time) break;
    if (open) {
      // Every message whose intended time has come joins its topic's batch.
      auto intended = [&](std::uint64_t i) {
        return start_ns + static_cast<std::uint64_t>(std::llround(static_cast<double>(i) * interval));
      };
      if (intended(made) > now) {
        std::uint64_t next = intended(made);
        if (next - now > 5'000) sleep_until_ns(next);
        continue;
      }
      while ((quota_ == 0 || made < quota_) && intended(made) <= now) {
        make(made, intended(made));
        ++made;
      }
      send_all();
    } else {
      make(made, now);
      ++made;
    }
  }
  send_all();
  timespec cpu{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  result_.cpu_seconds = static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) / 1e9;
}

// Every clock read of a message (counted: a throughput pass makes none).
std::uint64_t Producer::clock() {
  ++result_.clock_reads;
  return iolab::steady_ns();
}

// Creates message `index` (sent at `send_ns`) for its topic and sends it,
// or, when batching, adds it to the topic's batch and sends that once it
// holds batch_bytes.
void Producer::make(std::uint64_t index, std::uint64_t send_ns) {
  std::uint32_t topic = static_cast<std::uint32_t>((id_ + index) % config_.log.topics);
  std::uint64_t id = (std::uint64_t{id_} << 40) | index;
  if (batch_bytes_ <= body_.size()) {
    // One message per append: straight from the template, no copy.
    std::memcpy(body_.data(), &send_ns, 8);
    std::memcpy(body_.data() + 8, &id, 8);
    std::span<const std::byte> one(body_);
    acknowledged(log_.append(topic, {&one, 1}), {&send_ns, 1});
    return;
  }
  // Kafka's producer builds its batch in the log's format (the broker
  // writes it as it is): room for the header, which the log fills, then
  // the body. batch_bytes counts the frames, as batch.size counts records.
  Batch& b = batches_[topic];
  std::size_t at = b.bytes.size() + kFrameHeaderSize;
  b.bytes.resize(at);
  b.bytes.insert(b.bytes.end(), body_.begin(), body_.end());
  std::memcpy(b.bytes.data() + at, &send_ns, 8);
  std::memcpy(b.bytes.data() + at + 8, &id, 8);
  b.body_sizes.push_back(static_cast<std::uint32_t>(body_.size()));
  b.send_ns.push_back(send_ns);
  if (b.bytes.size() >= batch_bytes_) send(topic);
}

void Producer::send_all() {
  for (std::uint32_t t = 0; t < batches_.size(); ++t)
    if (!batches_[t].send_ns.empty()) send(t);
}

void Producer::send(std::uint32_t topic) {
  Batch& b = batches_[topic];
  acknowledged(log_.append_framed(topic, b.bytes, b.body_sizes), b.send_ns);
  b.clear();
}

// Records the messages an acknowledgement covers, sent at `send_ns`.
void Producer::acknowledged(const Ack& ack, std::span<const std::uint64_t> send_ns) {
  if (!clocked_) {
    result_.messages += send_ns.size();
    result_.bytes += send_ns.size() * body_.size();
    return;
  }
  std::uint64_t ack_ns = clock();
  for (std::uint64_t sent : send_ns) record(sent, ack_ns, body_.size());
  result_.last_ack_ns = ack_ns;
  if (ack_ns - last_sample_ns_ >= kDurableSampleEvery) {
    result_.samples.push_back({ack.log, ack.first_sequence + ack.count - 1, send_ns.back()});
    last_sample_ns_ = ack_ns;
  }
}

void Producer::record(std::uint64_t send_ns, std::uint64_t ack_ns, std::size_t bytes) {
  std::uint64_t latency = ack_ns > send_ns ? ack_ns - send_ns : 0;
  result_.latency.record(latency);
  result_.over[0] += latency > 1'000'000;
  result_.over[1] += latency > 10'000'000;
  result_.over[2] += latency > 100'000'000;
  result_.over[3] += latency > 1'000'000'000;
  std::size_t second = (ack_ns - start_ns_) / 1'000'000'000;
  if (second >= result_.seconds.size()) result_.seconds.resize(second + 1);
  Second& s = result_.seconds[second];
  ++s.messages;
  s.bytes += bytes;
  s.latency.record(latency);
  ++result_.messages;
  result_.bytes += bytes;
}

}  // namespace iolab::commitlog::detail
