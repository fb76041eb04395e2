// A trace replayed through one method (replay.h, docs/replay.md): every op
// in order inside the timed region with the Files' close, and the files
// checked after it against a model of what the replay wrote where (the
// files before each pass: replay_setup.cpp).
#include "iolab/replay/replay.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/io/buffer.h"
#include "iolab/io/registry.h"
#include "replay_workload.h"

namespace iolab::replay {

namespace detail {

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
    // Queued methods keep a wave's requests in flight together; the latency pass times each op alone.
    if (!wave_len_.empty() && wave_len_[i] > 0 && !timed_calls) {
      run_wave(i, wave_len_[i], verify, live, tally);
      i += wave_len_[i] - 1;
      continue;
    }
    const std::uint64_t t0 = timed_calls ? steady_ns() : 0;
    switch (action_[i]) {
      case Action::Read: {
        auto dst = read_buffer_.span().first(static_cast<std::size_t>(op.length));
        const std::size_t n = slot.file->read_at(op.offset, dst);
        read_bytes_ += n;
        tally.bytes += n;
        last_read_count_ = n;
        last_read_slot_ = 0;
        if (verify) check_read(i, n, dst, live[file_of_[i]]);
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

void ReplayWorkload::check_read(std::size_t i, std::size_t n, std::span<const std::byte> data, const Layout& l) const {
  const Op& op = t_.ops[i];
  const auto& path = slots_[file_of_[i]].path;
  if (n != l.readable(op.offset, op.length))
    throw Error("read", path.string(),
                op_words(i, op) + " returned " + std::to_string(n) + " bytes where the file holds " +
                    std::to_string(l.readable(op.offset, op.length)),
                EIO);
  if (auto bad = l.mismatch(*source_, op.offset, data.first(n))) not_verified(path, *bad, "data read by " + op_words(i, op));
}

void ReplayWorkload::run_wave(std::size_t first, std::size_t count, bool verify, std::vector<Layout>& live,
                              harness::WorkerTally& tally) {
  // The requests grouped by file (a File has one queue), each read in a slot of its own; tag: the op.
  wave_requests_.clear();
  std::size_t reads = 0;
  for (std::size_t j = first; j < first + count; ++j) {
    const Op& op = t_.ops[j];
    io::IoRequest r;
    r.offset = op.offset;
    r.tag = j;
    if (action_[j] == Action::Read) {
      r.kind = io::IoRequest::Kind::Read;
      r.data = read_buffer_.span().subspan(reads++ * slot_bytes_, static_cast<std::size_t>(op.length));
    } else if (action_[j] == Action::Write) {
      r.kind = io::IoRequest::Kind::Write;
      auto src = source_->at(op.offset, static_cast<std::size_t>(op.length));
      r.data = std::span(const_cast<std::byte*>(src.data()), src.size());  // a File only reads a write's bytes
    } else {
      continue;
    }
    wave_requests_.push_back(r);
  }
  std::stable_sort(wave_requests_.begin(), wave_requests_.end(),
                   [&](const io::IoRequest& a, const io::IoRequest& b) { return file_of_[a.tag] < file_of_[b.tag]; });
  for (std::size_t b = 0; b < wave_requests_.size();) {
    std::size_t e = b + 1;
    while (e < wave_requests_.size() && file_of_[wave_requests_[e].tag] == file_of_[wave_requests_[b].tag]) ++e;
    slots_[file_of_[wave_requests_[b].tag]].file->submit(std::span(wave_requests_).subspan(b, e - b));
    b = e;
  }
  // Results in the trace's order (the wave's ops are independent: the same as had they run in it).
  std::stable_sort(wave_requests_.begin(), wave_requests_.end(),
                   [](const io::IoRequest& a, const io::IoRequest& b) { return a.tag < b.tag; });
  for (const io::IoRequest& r : wave_requests_) {
    const std::size_t j = static_cast<std::size_t>(r.tag);
    if (r.kind == io::IoRequest::Kind::Read) {
      read_bytes_ += r.result;
      tally.bytes += r.result;
      last_read_count_ = r.result;
      last_read_slot_ = static_cast<std::size_t>(r.data.data() - read_buffer_.span().data()) / slot_bytes_;
      if (verify) check_read(j, r.result, r.data, live[file_of_[j]]);
    } else {
      tally.bytes += t_.ops[j].length;
      if (verify) live[file_of_[j]].write(t_.ops[j].offset, t_.ops[j].length);
    }
  }
  tally.ops += count;
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
                                             read_buffer_.span().subspan(last_read_slot_ * slot_bytes_,
                                                                         static_cast<std::size_t>(last_read_count_))))
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

void ReplayWorkload::describe(results::Result& r) const {
  nlohmann::json ops = nlohmann::json::object(), skipped = nlohmann::json::object();
  for (std::size_t k = 0; k < kKinds; ++k) {
    const auto name = std::string(trace::to_string(static_cast<OpKind>(k)));
    if (kind_ops_[k]) ops[name] = kind_ops_[k];
    if (not_replayed_[k]) skipped[name] = {{"ops", not_replayed_[k]}, {"why", why_not_[k]}};
  }
  r.extra["trace_ops"] = ops;
  if (!skipped.empty()) r.extra["not_replayed"] = skipped;
  r.extra["paced_by_trace_times"] = s_.timing;
  // The depth the trace's threads reached, and what this method kept in flight of it (docs/replay.md).
  r.queue_depth = depth_;
  r.extra["trace_depth"] = trace_depth(t_);
  if (traits_.queued) {
    r.extra["queued_replay"] = depth_ > 1 ? "waves of independent requests of distinct threads, up to the queue depth "
                                            "in flight; syncs, truncates and flushes wait for all before them"
                                          : "one request at a time: the trace's threads reached depth 1";
    r.extra["depth_reached"] = depth_reached_;
  } else {
    r.extra["queued_replay"] = "not queued: one request at a time";
  }
  std::unordered_set<std::uint32_t> threads;
  for (const Op& op : t_.ops) threads.insert(op.thread);
  r.extra["trace_threads"] = threads.size();
  r.extra["trace_timeline"] = timeline(t_);
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

}  // namespace detail

using detail::ReplayWorkload;
using trace::Op;

std::unique_ptr<harness::Workload> make_workload(const Trace& t, const io::Method& method, const Settings& settings,
                                                 io::ScratchDir& scratch, results::Result& record) {
  check(t);
  return std::make_unique<ReplayWorkload>(t, method, settings, scratch, record);
}

std::vector<harness::WorkloadCandidate> candidates(const Trace& t, const std::vector<const io::Method*>& methods,
                                                   const Settings& settings, io::ScratchDir& scratch) {
  check(t);
  std::vector<harness::WorkloadCandidate> out;
  for (const io::Method* m : methods) {
    harness::WorkloadCandidate c;
    c.labels = labels(t, m->name());
    c.make = [&t, m, settings, &scratch](results::Result& record) -> std::unique_ptr<harness::Workload> {
      return std::make_unique<ReplayWorkload>(t, *m, settings, scratch, record);
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<results::Result> replay_methods(harness::Runner& runner, const Trace& t,
                                            const std::vector<const io::Method*>& methods, const Settings& settings,
                                            unsigned rounds) {
  harness::Rounds r(runner, candidates(t, methods, settings, runner.scratch()), settings.seed, rounds);
  r.start();
  for (unsigned i = 0; i < rounds && r.active(); ++i) r.round();
  return r.finish();
}

results::Result labels(const Trace& t, std::string_view method) {
  results::Result r;
  r.suite = "replay";
  r.experiment = t.name;
  r.method = std::string(method);
  r.op = results::Op::Replay;
  r.pattern.reset();
  r.cache.reset();
  r.block_size = 0;
  r.file_size = 0;
  for (const auto& f : t.header.files) r.file_size += f.initial_size;
  return r;
}

}  // namespace iolab::replay
