#include "iolab/harness/requests.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>

#include "iolab/base/error.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"

namespace iolab::harness {

namespace {

constexpr std::uint64_t kRingBytes = std::uint64_t{8} << 20;

std::uint64_t now_ns() { return iolab::steady_ns(); }

}  // namespace

RequestPlan make_plan(results::Op op, std::uint64_t begin, std::uint64_t length, std::uint64_t block, results::AccessPattern pattern,
                      std::uint64_t seed, unsigned rounds) {
  if (block == 0) throw UsageError("block size 0", "must be at least 1 byte");
  if (length == 0) throw UsageError("file size 0", "give a file size or a number of operations");
  RequestPlan p;
  p.op = op;
  p.begin = begin;
  p.length = length;
  p.block = block;
  if (pattern == results::AccessPattern::Rand) {
    const std::uint64_t n = p.blocks();
    p.order.resize(n * std::max(rounds, 1u));
    std::mt19937_64 rng(seed);
    for (std::uint64_t at = 0; at < p.order.size(); at += n) {
      auto first = p.order.begin() + static_cast<std::ptrdiff_t>(at);
      auto last = first + static_cast<std::ptrdiff_t>(n);
      std::iota(first, last, std::uint64_t{0});
      std::shuffle(first, last, rng);
    }
  }
  return p;
}

bool PatternContent::matches(std::uint64_t offset, std::span<const std::byte> data) const {
  return io::matches_pattern(seed_, offset, data);
}

// ---- write source ----------------------------------------------------------------

WriteSource::WriteSource(std::uint64_t seed, std::uint64_t total, std::uint64_t block, io::BufferKind kind)
    : period_(std::max(block, std::min(total, kRingBytes) / std::max<std::uint64_t>(block, 1) * std::max<std::uint64_t>(block, 1))),
      ring_(static_cast<std::size_t>(period_ + block), kind) {
  io::fill_pattern(seed, 0, ring_.span().first(static_cast<std::size_t>(period_)));
  // The tail repeats the head, so a write that starts near the end of the period reads on.
  std::memcpy(ring_.data() + period_, ring_.data(), static_cast<std::size_t>(block));
}

std::optional<std::uint64_t> WriteSource::mismatch(const std::filesystem::path& file, std::uint64_t offset,
                                                   std::uint64_t length, DataCheck check) const {
  const std::uint64_t skip = check_start(check, length, ring_.size() - period_);  // Tail: the last block
  offset += skip;
  length -= skip;
  auto f = io::find_file_method("pread").open(file, io::Access::Read);
  io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(length, 1), 1 << 20)),
                   io::BufferKind::Aligned);
  for (std::uint64_t done = 0; done < length;) {
    auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), length - done)));
    std::uint64_t at = offset + done;
    if (f->read_at(at, part) != part.size()) return at;
    for (std::size_t i = 0; i < part.size();) {
      std::uint64_t r = (at + i) % period_;
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(part.size() - i, period_ - r));
      if (std::memcmp(part.data() + i, ring_.data() + r, n) != 0) {
        for (std::size_t k = 0; k < n; ++k)
          if (part[i + k] != ring_.data()[r + k]) return at + i + k;
      }
      i += n;
    }
    done += part.size();
  }
  f->close();
  return std::nullopt;
}

bool WriteSource::matches(std::uint64_t offset, std::span<const std::byte> data) const {
  for (std::size_t i = 0; i < data.size();) {
    std::uint64_t r = (offset + i) % period_;
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(data.size() - i, period_ - r));
    if (std::memcmp(data.data() + i, ring_.data() + r, n) != 0) return false;
    i += n;
  }
  return true;
}

ReadSlots::ReadSlots(unsigned slots, std::uint64_t block, io::BufferKind kind)
    : slots_(std::max(1u, slots)), block_(static_cast<std::size_t>(block)), buffer_(slots_ * block_, kind) {}

// ---- reads -----------------------------------------------------------------------

namespace {

// Requests of a queued read pass, each in a free slot until it completes.
class ReadSource final : public io::RequestSource {
 public:
  ReadSource(const RequestPlan& plan, ReadSlots& slots, PassKind kind, LatencyHistogram* latency, const Content& expected,
             LoopOutcome& out)
      : plan_(plan), slots_(slots), kind_(kind), latency_(latency), expected_(expected), out_(out),
        count_(kind == PassKind::Verify ? std::min(plan.count(), plan.blocks()) : plan.count()) {
    for (unsigned s = slots.count(); s-- > 0;) free_.push_back(s);
  }
  bool next(io::IoRequest& r) override {
    if (next_ == count_ || free_.empty()) return false;
    if (plan_.stop && plan_.stop->load(std::memory_order_relaxed)) {
      count_ = next_;  // the time bound: nothing more is submitted
      return false;
    }
    unsigned slot = free_.back();
    free_.pop_back();
    r = io::IoRequest{io::IoRequest::Kind::Read, plan_.offset(next_), slots_.slot(slot).first(plan_.size(next_)), 0, slot, 0, 0};
    ++next_;
    return true;
  }
  void done(io::IoRequest& r) override {
    out_.tally.bytes += r.result;
    ++out_.tally.ops;
    if (r.result != r.data.size()) ++out_.short_calls;
    if (kind_ == PassKind::Latency && latency_) latency_->record(r.completed_ns - r.submitted_ns);
    if (kind_ == PassKind::Verify && !out_.bad_offset && !expected_.matches(r.offset, r.data.first(r.result)))
      out_.bad_offset = r.offset;
    // Nothing is submitted after the last completion, so its slot keeps its bytes.
    out_.last_offset = r.offset;
    out_.last_block = r.data.first(r.result);
    free_.push_back(static_cast<unsigned>(r.tag));
  }

 private:
  const RequestPlan& plan_;
  ReadSlots& slots_;
  PassKind kind_;
  LatencyHistogram* latency_;
  const Content& expected_;
  LoopOutcome& out_;
  std::uint64_t count_;  // calls to make: every block once in a verification pass
  std::uint64_t next_ = 0;
  std::vector<unsigned> free_;
};

// Call i of the plan alone, by the call the throughput loop makes for it
// (read_sequence for a sequential pass's whole blocks, read_at otherwise), so
// the latency and verification passes time and check the timed path.
// `whole` is plan.sequence_blocks(), worked out once per pass.
std::size_t read_call(io::File& f, const RequestPlan& plan, std::uint64_t whole, std::uint64_t i, std::span<std::byte> dst) {
  if (i < whole) return static_cast<std::size_t>(f.read_sequence(plan.offset(i), 1, dst));
  return f.read_at(plan.offset(i), dst);
}

}  // namespace

LoopOutcome read_pass(io::File& f, bool queued, const RequestPlan& plan, ReadSlots& slots, PassKind kind,
                      LatencyHistogram* latency, const Content& expected) {
  LoopOutcome out;
  const std::uint64_t calls_before = f.counters().calls;
  if (queued) {
    ReadSource source(plan, slots, kind, latency, expected, out);
    f.stream(source, kind == PassKind::Latency);
  } else {
    std::span<std::byte> buf = slots.slot(0);
    std::uint64_t short_calls = 0, bytes = 0;
    const std::uint64_t whole = plan.sequence_blocks();
    // A verification pass checks every block once; a time bound ends a pass early.
    std::uint64_t n = kind == PassKind::Verify ? std::min(plan.count(), plan.blocks()) : plan.count();
    const std::atomic<bool>* stop = plan.stop;
    auto stopped = [stop, &n](std::uint64_t i) {
      if (!stop->load(std::memory_order_relaxed)) return false;
      n = i;
      return true;
    };
    if (kind == PassKind::Latency && latency) {
      // Every call timed; consecutive clock reads, so one read per call.
      std::uint64_t t = now_ns();
      for (std::uint64_t i = 0; i < n; ++i) {
        if (stop && stopped(i)) break;
        std::size_t len = plan.size(i);
        std::size_t got = read_call(f, plan, whole, i, buf.first(len));
        std::uint64_t t1 = now_ns();
        latency->record(t1 - t);
        t = t1;
        short_calls += got != len;
        bytes += got;
      }
    } else if (kind == PassKind::Verify) {
      for (std::uint64_t i = 0; i < n; ++i) {
        if (stop && stopped(i)) break;
        std::size_t len = plan.size(i);
        std::uint64_t off = plan.offset(i);
        std::size_t got = read_call(f, plan, whole, i, buf.first(len));
        short_calls += got != len;
        bytes += got;
        if (!out.bad_offset && !expected.matches(off, buf.first(got))) out.bad_offset = off;
      }
    } else if (plan.order.empty()) {
      // The throughput loop, sequential: the whole blocks in one call (a
      // method whose read is a memory copy pays no call per block), the
      // shorter last one apart. After a short block the rest count short.
      bytes = f.read_sequence(plan.begin, whole, buf.first(static_cast<std::size_t>(plan.block)));
      short_calls = whole - std::min(whole, bytes / plan.block);
      if (whole < n) {
        std::size_t len = plan.size(whole);
        std::size_t got = f.read_at(plan.offset(whole), buf.first(len));
        short_calls += got != len;
        bytes += got;
      }
    } else if (!stop) {
      // The throughput loop: the call, its length check, nothing else.
      for (std::uint64_t i = 0; i < n; ++i) {
        std::size_t len = plan.size(i);
        std::size_t got = f.read_at(plan.offset(i), buf.first(len));
        short_calls += got != len;
        bytes += got;
      }
    } else {
      // The same with the time bound's flag read (relaxed) before each call.
      for (std::uint64_t i = 0; i < n; ++i) {
        if (stopped(i)) break;
        std::size_t len = plan.size(i);
        std::size_t got = f.read_at(plan.offset(i), buf.first(len));
        short_calls += got != len;
        bytes += got;
      }
    }
    out.short_calls = short_calls;
    out.tally.bytes = bytes;
    out.tally.ops = n;
    if (n > 0) {
      // Every call reads into slot 0: the last one's bytes are still there.
      out.last_offset = plan.offset(n - 1);
      out.last_block = buf.first(std::min<std::size_t>(plan.size(n - 1), bytes));
    }
  }
  out.tally.io_calls = f.counters().calls - calls_before;
  return out;
}

// ---- writes ----------------------------------------------------------------------

namespace {

class WriteSourceRequests final : public io::RequestSource {
 public:
  WriteSourceRequests(const RequestPlan& plan, const WriteSource& source, PassKind kind, LatencyHistogram* latency,
                      WriteObserver* observer, LoopOutcome& out)
      : plan_(plan), source_(source), kind_(kind), latency_(latency), observer_(observer), out_(out) {}
  bool next(io::IoRequest& r) override {
    if (next_ == plan_.count()) return false;
    std::uint64_t off = plan_.offset(next_);
    auto data = source_.at(off, plan_.size(next_));
    r = io::IoRequest{io::IoRequest::Kind::Write, off, std::span(const_cast<std::byte*>(data.data()), data.size()), 0, 0, 0, 0};
    ++next_;
    return true;
  }
  void done(io::IoRequest& r) override {
    out_.tally.bytes += r.result;
    ++out_.tally.ops;
    if (kind_ == PassKind::Latency && latency_) latency_->record(r.completed_ns - r.submitted_ns);
    if (observer_) observer_->wrote(out_.tally.bytes);
  }

 private:
  const RequestPlan& plan_;
  const WriteSource& source_;
  PassKind kind_;
  LatencyHistogram* latency_;
  WriteObserver* observer_;
  LoopOutcome& out_;
  std::uint64_t next_ = 0;
};

// The write loop with its inline flush schedule fixed at compile time, so
// the plain loop carries no flush bookkeeping.
template <io::FlushSchedule S, bool kTime>
void write_loop(io::File& f, const RequestPlan& plan, const WriteSource& source, LatencyHistogram* latency,
                const io::FlushPolicy& flush, WriteObserver* observer, LoopOutcome& out) {
  const std::uint64_t n = plan.count();
  const std::uint64_t interval = std::max<std::uint64_t>(flush.interval, 1);
  std::uint64_t written = 0, since = 0;
  // EveryBytes: the next multiple of the interval at which a flush is due.
  // A write that crosses one or more boundaries is followed by one flush, so
  // a pass of `length` bytes makes floor(length / interval) flushes when
  // blocks are smaller than the interval, and one per write when they are not.
  std::uint64_t boundary = interval;
  std::uint64_t t = kTime ? now_ns() : 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t off = plan.offset(i);
    std::size_t len = plan.size(i);
    f.write_at(off, source.at(off, len));
    written += len;
    if constexpr (S == io::FlushSchedule::EveryWrite) {
      f.sync(flush.call);
      ++out.flushes;
    } else if constexpr (S == io::FlushSchedule::EveryBytes) {
      if (written >= boundary) {
        f.sync(flush.call);
        ++out.flushes;
        boundary = (written / interval + 1) * interval;
      }
    } else if constexpr (S == io::FlushSchedule::EveryOps) {
      if (++since == interval) {
        f.sync(flush.call);
        ++out.flushes;
        since = 0;
      }
    }
    if (observer) observer->wrote(written);
    if constexpr (kTime) {
      std::uint64_t t1 = now_ns();
      latency->record(t1 - t);
      t = t1;
    }
  }
  out.tally.bytes = written;
  out.tally.ops = n;
}

template <bool kTime>
void write_loop_for(io::FlushSchedule s, io::File& f, const RequestPlan& plan, const WriteSource& source,
                    LatencyHistogram* latency, const io::FlushPolicy& flush, WriteObserver* observer, LoopOutcome& out) {
  switch (s) {
    case io::FlushSchedule::EveryWrite:
      return write_loop<io::FlushSchedule::EveryWrite, kTime>(f, plan, source, latency, flush, observer, out);
    case io::FlushSchedule::EveryBytes:
      return write_loop<io::FlushSchedule::EveryBytes, kTime>(f, plan, source, latency, flush, observer, out);
    case io::FlushSchedule::EveryOps:
      return write_loop<io::FlushSchedule::EveryOps, kTime>(f, plan, source, latency, flush, observer, out);
    default:
      return write_loop<io::FlushSchedule::None, kTime>(f, plan, source, latency, flush, observer, out);
  }
}

}  // namespace

LoopOutcome write_pass(io::File& f, bool queued, const RequestPlan& plan, const WriteSource& source, PassKind kind,
                       LatencyHistogram* latency, const io::FlushPolicy& flush, WriteObserver* observer) {
  LoopOutcome out;
  const std::uint64_t calls_before = f.counters().calls;
  const bool timing = kind == PassKind::Latency && latency;
  const bool inline_flush = flush.schedule == io::FlushSchedule::EveryWrite ||
                            flush.schedule == io::FlushSchedule::EveryBytes || flush.schedule == io::FlushSchedule::EveryOps;
  if (queued) {
    if (inline_flush)
      throw Error("write", f.path().string(),
                  "a queued method keeps several writes in flight, so a flush after every N bytes has no single point "
                  "to run at; use end or async-N",
                  EINVAL);
    WriteSourceRequests requests(plan, source, kind, latency, observer, out);
    f.stream(requests, timing);
  } else if (timing) {
    write_loop_for<true>(inline_flush ? flush.schedule : io::FlushSchedule::None, f, plan, source, latency, flush, observer, out);
  } else {
    write_loop_for<false>(inline_flush ? flush.schedule : io::FlushSchedule::None, f, plan, source, latency, flush, observer, out);
  }
  out.tally.io_calls = f.counters().calls - calls_before;
  return out;
}

}  // namespace iolab::harness
