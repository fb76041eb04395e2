// A trace replayed through one method (replay.h, docs/replay.md): fresh
// files before every pass (untimed), every op in order inside the timed
// region with the Files' close, and the files checked after it against a
// model of what the replay wrote where.
#include "iolab/replay/replay.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/io/buffer.h"
#include "iolab/io/registry.h"

namespace iolab::replay {

namespace {

using trace::Op;
using trace::OpKind;

std::string op_words(std::size_t index, const Op& op) {
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

constexpr std::size_t kKinds = static_cast<std::size_t>(OpKind::Unmap) + 1;

class ReplayWorkload final : public harness::Workload {
 public:
  ReplayWorkload(const Trace& t, const io::Method& method, const Settings& s, io::ScratchDir& scratch,
                 harness::Result& record)
      : t_(t), method_(method), s_(s), scratch_(scratch), record_(record) {}
  ~ReplayWorkload() override { teardown(); }

  std::optional<std::string> setup() override;
  void before_pass(harness::PassKind) override;
  harness::PassBody pass(harness::PassKind kind) override;
  void after_pass(harness::PassKind kind) override;
  void teardown() override;
  bool verifies_after_timing() const override { return true; }
  bool kernel_counts_calls() const override { return traits_.library_calls; }
  harness::LatencySource latency_source() const override { return harness::LatencySource::EveryCall; }
  void describe(harness::Result& r) const override;

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
  void check_files(harness::PassKind kind);
  [[noreturn]] void not_verified(const std::filesystem::path& file, std::uint64_t offset, const std::string& what) const;

  const Trace& t_;
  const io::Method& method_;
  Settings s_;
  io::ScratchDir& scratch_;
  harness::Result& record_;
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
  io::Buffer read_buffer_;
  std::vector<Slot> slots_;
  // The current pass.
  std::uint64_t read_bytes_ = 0, last_read_count_ = 0;
  std::array<LatencyHistogram, kKinds> kind_latency_;
  unsigned verify_passes_ = 0;
};

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::optional<std::string> ReplayWorkload::setup() {
  check(t_);
  traits_ = method_.traits(s_.options);
  if (io::Availability a = method_.probe(scratch_.path()); !a.available) return a.reason;
  if (io::Availability a = method_.supports_options(s_.options, scratch_.path()); !a.available) return a.reason;
  // The room every file reaches (its initial size, or the end of its furthest write).
  std::vector<std::uint64_t> extent;
  for (const auto& f : t_.header.files) extent.push_back(f.initial_size);
  std::unordered_map<std::uint32_t, std::uint32_t> index;
  for (std::uint32_t i = 0; i < t_.header.files.size(); ++i) index[t_.header.files[i].id] = i;
  file_of_.reserve(t_.ops.size());
  for (const Op& op : t_.ops) {
    file_of_.push_back(index.at(op.file));
    if (op.kind == OpKind::Write || op.kind == OpKind::Truncate)
      extent[file_of_.back()] = std::max(extent[file_of_.back()], op.kind == OpKind::Write ? op.offset + op.length : op.offset);
  }
  std::uint64_t room = 0;
  for (auto e : extent) room += e;
  if (const auto free = io::free_space(scratch_.path()); free && room > *free)
    return "its files reach " + std::to_string(room) + " bytes, more than the " + std::to_string(*free) + " free in " +
           scratch_.path().string();
  // The method once, untimed, on a probe file: O_DIRECT refused, its alignment.
  {
    const auto probe = scratch_.create_unique_file("replay-probe");
    std::unique_ptr<io::File> f;
    try {
      f = method_.open(probe, io::Access::ReadWrite, s_.options);
    } catch (const Error& e) {
      scratch_.remove_file(probe);
      if (e.error_number() == EINVAL || e.error_number() == EOPNOTSUPP) return std::string(e.what());
      throw;
    }
    align_ = traits_.needs_alignment && s_.options.unaligned == io::UnalignedPolicy::Reject ? f->alignment() : 1;
    durability_[static_cast<std::size_t>(OpKind::Fsync)] = io::Durability::Fsync;
    durability_[static_cast<std::size_t>(OpKind::Fdatasync)] = traits_.data_sync;
    durability_[static_cast<std::size_t>(OpKind::Msync)] = traits_.data_sync;
    durability_[static_cast<std::size_t>(OpKind::SyncFileRange)] = io::Durability::SyncFileRange;
    const bool range = f->supports(io::Durability::SyncFileRange);
    std::optional<std::string> cannot;
    for (std::size_t i = 0; i < t_.ops.size() && !cannot; ++i) {
      const OpKind k = t_.ops[i].kind;
      if ((k == OpKind::Fsync || k == OpKind::Fdatasync || k == OpKind::Msync) &&
          !f->supports(durability_[static_cast<std::size_t>(k)]))
        cannot = std::string(method_.name()) + " cannot make the " +
                 std::string(io::to_string(durability_[static_cast<std::size_t>(k)])) + " call " + op_words(i, t_.ops[i]) +
                 " asks for";
    }
    f->close();
    f.reset();
    scratch_.remove_file(probe);
    if (cannot) return cannot;
    if (!range) why_not_[static_cast<std::size_t>(OpKind::SyncFileRange)] = std::string(method_.name()) + " cannot make it";
  }
  if (align_ > 1)
    for (std::size_t i = 0; i < t_.ops.size(); ++i) {
      const Op& op = t_.ops[i];
      if ((op.kind == OpKind::Read || op.kind == OpKind::Write) && (op.offset % align_ != 0 || op.length % align_ != 0))
        return op_words(i, op) + " is not " + std::to_string(align_) + "-aligned";
    }
  return plan();
}

// Decides each op's action and simulates a pass on the model: what every
// file ends with, the bytes reads return, the file as the last read saw it.
std::optional<std::string> ReplayWorkload::plan() {
  why_not_[static_cast<std::size_t>(OpKind::Allocate)] = "io::File has no fallocate call, and a trace does not say "
                                                          "whether the program kept the size";
  why_not_[static_cast<std::size_t>(OpKind::Map)] = why_not_[static_cast<std::size_t>(OpKind::Unmap)] =
      "the method maps (or not) as it does for every call";
  why_not_[static_cast<std::size_t>(OpKind::Close)] =
      traits_.user_space_buffer ? "" : "each file stays open through the pass (closed at its end)";
  for (const auto& f : t_.header.files) final_.emplace_back(f.initial_size);
  std::uint64_t max_read = 1, max_write = 1;
  action_.reserve(t_.ops.size());
  for (std::size_t i = 0; i < t_.ops.size(); ++i) {
    const Op& op = t_.ops[i];
    Layout& l = final_[file_of_[i]];
    Action a = Action::Nothing;
    switch (op.kind) {
      case OpKind::Read:
        a = Action::Read;
        max_read = std::max(max_read, op.length);
        expected_read_bytes_ += l.readable(op.offset, op.length);
        last_read_ = i;
        break;
      case OpKind::Write:
        a = Action::Write;
        max_write = std::max(max_write, op.length);
        l.write(op.offset, op.length);
        break;
      case OpKind::Fsync:
      case OpKind::Fdatasync:
      case OpKind::Msync:
        a = Action::Sync;
        break;
      case OpKind::SyncFileRange:
        a = why_not_[static_cast<std::size_t>(op.kind)].empty() ? Action::Sync : Action::Nothing;
        break;
      case OpKind::Truncate:
        a = Action::Truncate;
        l.truncate(op.offset);
        break;
      case OpKind::Open:
        if (op.flags & trace::kTruncate) {
          a = Action::Truncate;
          l.truncate(0);
        }
        break;
      case OpKind::Close:
        a = traits_.user_space_buffer ? Action::Flush : Action::Nothing;
        break;
      case OpKind::Allocate:
      case OpKind::Map:
      case OpKind::Unmap:
        break;
    }
    action_.push_back(a);
    ++kind_ops_[static_cast<std::size_t>(op.kind)];
    if (a == Action::Nothing && op.kind != OpKind::Open) ++not_replayed_[static_cast<std::size_t>(op.kind)];
    if (i == last_read_) at_last_read_ = l;  // as the read saw it (a read changes nothing)
  }
  const io::BufferKind kind = traits_.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap;
  // Writes take the pattern of their offset from a ring of whole pages (aligned offsets stay aligned in it).
  source_ = std::make_unique<harness::WriteSource>(s_.seed, std::uint64_t{64} << 20, round_up(max_write, io::kPageSize), kind);
  read_buffer_ = io::Buffer(static_cast<std::size_t>(round_up(max_read, io::kPageSize)), kind);
  record_.buffer = kind;
  if (traits_.bypasses_page_cache) {
    record_.cache = harness::CacheState::Direct;
    record_.cache_method = "O_DIRECT";
  } else {
    record_.cache.reset();
    record_.cache_method = "fresh files before every pass (written with pwrite, fdatasync)";
  }
  return std::nullopt;
}

void ReplayWorkload::before_pass(harness::PassKind) {
  for (auto& s : slots_) scratch_.remove_file(s.path);
  slots_.clear();
  for (const auto& f : t_.header.files) {
    Slot s;
    s.path = scratch_.create_unique_file("replay-" + std::to_string(f.id));
    slots_.push_back(std::move(s));
    auto w = io::find_file_method("pread").open(slots_.back().path, io::Access::ReadWrite);
    for (std::uint64_t off = 0; off < f.initial_size;) {
      const std::uint64_t n = std::min<std::uint64_t>(source_->period(), f.initial_size - off);
      w->write_at(off, source_->at(off, static_cast<std::size_t>(n)));
      off += n;
    }
    w->sync(io::Durability::Fdatasync);
    w->close();
  }
}

void ReplayWorkload::open_all() {
  for (auto& s : slots_) {
    s.file = method_.open(s.path, io::Access::ReadWrite, s_.options);
    std::span<std::byte> buffers[] = {read_buffer_.span(), source_->buffer()};
    s.file->register_buffers(buffers);
  }
}

void ReplayWorkload::close_all(std::uint64_t& calls) {
  for (auto& s : slots_)
    if (s.file) {
      s.file->close();
      calls += s.file->counters().calls;
      s.file.reset();
    }
}

// io::File has no truncate: the File is closed (its buffers flushed, a
// mapping trimmed), the file truncated by its path, and opened again.
void ReplayWorkload::truncate(Slot& slot, std::uint64_t to, std::uint64_t& calls) {
  slot.file->close();
  calls += slot.file->counters().calls + 1;
  slot.file.reset();
  std::error_code ec;
  std::filesystem::resize_file(slot.path, to, ec);
  if (ec) throw Error("truncate", slot.path.string(), ec.value());
  slot.file = method_.open(slot.path, io::Access::ReadWrite, s_.options);
}

void sleep_until(std::uint64_t target_ns) {
  for (std::uint64_t now = steady_ns(); now < target_ns; now = steady_ns()) {
    const std::uint64_t left = target_ns - now;
    timespec ts{static_cast<time_t>(left / 1000000000u), static_cast<long>(left % 1000000000u)};
    ::nanosleep(&ts, nullptr);
  }
}

harness::WorkerTally ReplayWorkload::run(harness::PassKind kind) {
  harness::WorkerTally tally;
  const bool verify = kind == harness::PassKind::Verify;
  const bool timed_calls = kind == harness::PassKind::Latency;
  const bool paced = s_.timing && !verify;
  std::vector<Layout> live;
  if (verify)
    for (const auto& f : t_.header.files) live.emplace_back(f.initial_size);
  read_bytes_ = 0;
  std::uint64_t calls = 0;
  const std::uint64_t start = steady_ns();
  for (std::size_t i = 0; i < t_.ops.size(); ++i) {
    const Op& op = t_.ops[i];
    Slot& slot = slots_[file_of_[i]];
    if (paced) sleep_until(start + op.time_ns);
    const std::uint64_t t0 = timed_calls ? steady_ns() : 0;
    switch (action_[i]) {
      case Action::Read: {
        auto dst = read_buffer_.span().first(static_cast<std::size_t>(op.length));
        const std::size_t n = slot.file->read_at(op.offset, dst);
        read_bytes_ += n;
        tally.bytes += n;
        last_read_count_ = n;
        if (verify) {
          const Layout& l = live[file_of_[i]];
          if (n != l.readable(op.offset, op.length))
            throw Error("read", slot.path.string(),
                        op_words(i, op) + " returned " + std::to_string(n) + " bytes where the file holds " +
                            std::to_string(l.readable(op.offset, op.length)),
                        EIO);
          if (auto bad = l.mismatch(*source_, op.offset, dst.first(n)))
            not_verified(slot.path, *bad, "data read by " + op_words(i, op));
        }
        break;
      }
      case Action::Write:
        slot.file->write_at(op.offset, source_->at(op.offset, static_cast<std::size_t>(op.length)));
        tally.bytes += op.length;
        if (verify) live[file_of_[i]].write(op.offset, op.length);
        break;
      case Action::Sync:
        slot.file->sync(durability_[static_cast<std::size_t>(op.kind)]);
        break;
      case Action::Truncate: {
        const std::uint64_t to = op.kind == OpKind::Truncate ? op.offset : 0;
        truncate(slot, to, calls);
        if (verify) live[file_of_[i]].truncate(to);
        break;
      }
      case Action::Flush:
        slot.file->sync(io::Durability::Flush);
        break;
      case Action::Nothing:
        break;
    }
    if (timed_calls) {
      const std::uint64_t ns = steady_ns() - t0;
      latency(0).record(ns);
      kind_latency_[static_cast<std::size_t>(op.kind)].record(ns);
    }
    ++tally.ops;
  }
  close_all(calls);
  tally.io_calls = calls;
  return tally;
}

harness::PassBody ReplayWorkload::pass(harness::PassKind kind) {
  harness::PassBody body;
  body.prepare = [this](unsigned) { open_all(); };
  body.timed = [this, kind](unsigned) { return run(kind); };
  body.finish = [this](unsigned) {
    for (auto& s : slots_) s.file.reset();
  };
  return body;
}

void ReplayWorkload::not_verified(const std::filesystem::path& file, std::uint64_t offset, const std::string& what) const {
  throw Error("verify", file.string(),
              what + " at offset " + std::to_string(offset) + " is not what the replay put there (" + record_.method +
                  "); no figure is reported for data that does not verify",
              EIO);
}

// Every file's length, and its bytes (all, or the last 64 KiB, as data_check() says) against the model.
void ReplayWorkload::check_files(harness::PassKind) {
  constexpr std::uint64_t kTail = 64 * 1024;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Layout& l = final_[i];
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(slots_[i].path, ec);
    if (ec || size != l.size())
      throw Error("verify", slots_[i].path.string(),
                  "replayed file holds " + std::to_string(ec ? 0 : size) + " bytes, expected " + std::to_string(l.size()) +
                      " (" + record_.method + ")",
                  EIO);
    auto f = io::find_file_method("pread").open(slots_[i].path, io::Access::Read);
    io::Buffer chunk(1 << 20, io::BufferKind::Aligned);
    for (std::uint64_t at = harness::check_start(data_check(), size, kTail); at < size;) {
      auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - at)));
      if (f->read_at(at, part) != part.size()) not_verified(slots_[i].path, at, "the replayed file, read back,");
      if (auto bad = l.mismatch(*source_, at, part)) not_verified(slots_[i].path, *bad, "the replayed file's data");
      at += part.size();
    }
    f->close();
  }
}

void ReplayWorkload::after_pass(harness::PassKind kind) {
  if (kind == harness::PassKind::Verify) {
    ++verify_passes_;
  } else {
    // Byte counts of every read, and the last read's bytes (still in its buffer).
    if (read_bytes_ != expected_read_bytes_)
      throw Error("read", t_.name,
                  "reads returned " + std::to_string(read_bytes_) + " bytes in all where the files held " +
                      std::to_string(expected_read_bytes_) + " (" + record_.method + ")",
                  EIO);
    if (at_last_read_)
      if (auto bad = at_last_read_->mismatch(*source_, t_.ops[last_read_].offset,
                                             read_buffer_.span().first(static_cast<std::size_t>(last_read_count_))))
        not_verified(slots_[file_of_[last_read_]].path, *bad, "the last read of a timed pass");
  }
  check_files(kind);
}

void ReplayWorkload::teardown() {
  for (auto& s : slots_) {
    s.file.reset();
    try {
      scratch_.remove_file(s.path);
    } catch (...) {  // already gone
    }
  }
  slots_.clear();
}

void ReplayWorkload::describe(harness::Result& r) const {
  nlohmann::json ops = nlohmann::json::object(), skipped = nlohmann::json::object();
  for (std::size_t k = 0; k < kKinds; ++k) {
    const auto name = std::string(trace::to_string(static_cast<OpKind>(k)));
    if (kind_ops_[k]) ops[name] = kind_ops_[k];
    if (not_replayed_[k]) skipped[name] = {{"ops", not_replayed_[k]}, {"why", why_not_[k]}};
  }
  r.extra["trace_ops"] = ops;
  if (!skipped.empty()) r.extra["not_replayed"] = skipped;
  r.extra["paced_by_trace_times"] = s_.timing;
  r.extra["queued_replay"] = traits_.queued ? "one request at a time (read_at, write_at)" : "not queued";
  std::unordered_set<std::uint32_t> threads;
  for (const Op& op : t_.ops) threads.insert(op.thread);
  r.extra["trace_threads"] = threads.size();
  r.extra["replay_threads"] = 1;
  nlohmann::json by_kind = nlohmann::json::object();
  for (std::size_t k = 0; k < kKinds; ++k)
    if (kind_latency_[k].count())
      by_kind[std::string(trace::to_string(static_cast<OpKind>(k)))] = {
          {"p50_ns", kind_latency_[k].percentile(0.5)},
          {"p99_ns", kind_latency_[k].percentile(0.99)},
          {"samples", kind_latency_[k].count()}};
  if (!by_kind.empty()) r.extra["latency_by_kind"] = by_kind;
  if (verify_passes_ > 1) r.extra["verified_after_timing"] = true;
  r.verified = verify_passes_ > 0;
}

}  // namespace

void check(const Trace& t) {
  auto fail = [&](const std::string& what) { throw UsageError("trace " + t.name, what); };
  std::unordered_set<std::uint32_t> ids;
  for (const auto& f : t.header.files)
    if (!ids.insert(f.id).second) fail("file " + std::to_string(f.id) + " is declared twice");
  std::uint64_t time = 0;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    const std::string where = "op " + std::to_string(i + 1) + ": ";
    if (!ids.contains(op.file)) fail(where + "file " + std::to_string(op.file) + " was never declared");
    if (op.offset >= trace::kMaxEnd || op.length >= trace::kMaxEnd - op.offset)
      fail(where + "offset " + std::to_string(op.offset) + " + length " + std::to_string(op.length) +
           " reaches 2^62 or beyond");
    if (op.time_ns < time) fail(where + "its time goes back");
    time = op.time_ns;
    if ((op.kind == OpKind::Read || op.kind == OpKind::Write) && op.length > kMaxCallBytes)
      fail(where + "moves " + std::to_string(op.length) + " bytes in one call; a replay moves at most " +
           std::to_string(kMaxCallBytes));
  }
}

std::unique_ptr<harness::Workload> make_workload(const Trace& t, const io::Method& method, const Settings& settings,
                                                 io::ScratchDir& scratch, harness::Result& record) {
  check(t);
  return std::make_unique<ReplayWorkload>(t, method, settings, scratch, record);
}

std::vector<harness::Result> replay_methods(harness::Runner& runner, const Trace& t,
                                            const std::vector<const io::Method*>& methods, const Settings& settings,
                                            unsigned rounds) {
  check(t);
  std::vector<harness::WorkloadCandidate> candidates;
  for (const io::Method* m : methods) {
    harness::WorkloadCandidate c;
    c.labels = labels(t, m->name());
    c.make = [&t, m, settings, &runner](harness::Result& record) -> std::unique_ptr<harness::Workload> {
      return std::make_unique<ReplayWorkload>(t, *m, settings, runner.scratch(), record);
    };
    candidates.push_back(std::move(c));
  }
  harness::Rounds r(runner, std::move(candidates), settings.seed, rounds);
  r.start();
  for (unsigned i = 0; i < rounds && r.active(); ++i) r.round();
  return r.finish();
}

harness::Result labels(const Trace& t, std::string_view method) {
  harness::Result r;
  r.suite = "replay";
  r.experiment = t.name;
  r.method = std::string(method);
  r.op = harness::Op::Replay;
  r.pattern.reset();
  r.cache.reset();
  r.block_size = 0;
  r.file_size = 0;
  for (const auto& f : t.header.files) r.file_size += f.initial_size;
  return r;
}

}  // namespace iolab::replay
