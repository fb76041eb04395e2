// A file experiment's passes (file_workload.h): the cache state made before
// each, the method's calls inside the timed region, verification of what
// was timed after it, and what the record learns from them.
#include "file_workload.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/requests.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/background_flusher.h"
#include "iolab/io/buffer.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"


namespace iolab::harness {

namespace {

[[noreturn]] void not_verified(const results::Result& r, const std::filesystem::path& file, std::uint64_t offset, const std::string& what) {
  throw Error("verify", file.string(),
              what + " at offset " + std::to_string(offset) + " does not match the pattern (" + experiment_label(r) +
                  "); no figure is reported for data that does not verify",
              EIO);
}

}  // namespace

void FileWorkload::before_pass(PassKind kind) {
  if (e_.op == results::Op::Write) {
    file_ = files_.create("exp");
    return;
  }
  if (!order_.empty()) next_window(kind == PassKind::Verify && e_.verify_blocks ? e_.verify_blocks : e_.pass_blocks);
  if (full_) {
    full_->before_pass(kind == PassKind::Timed);
    cache_method_ = full_->method();
    if (kind == PassKind::Timed) most_resident_ = std::max(most_resident_, full_->most_resident());
    return;
  }
  if (direct_) return;
  if (e_.cache == results::CacheState::Warm) {
    if (resident_fraction(file_) < 1.0) make_warm(file_);
    if (kind == PassKind::Timed) {
      double r = resident_fraction(file_);
      if (r < results::thresholds::kWarmResidentMin) {  // evicted by memory pressure between passes: warm it once more
        make_warm(file_);
        r = resident_fraction(file_);
      }
      least_resident_ = std::min(least_resident_, r);
    }
    // How the pages came in (make_warm_from_disk): the state of a file read normally, readahead's folios
    // (bench/warm_file_state: the same folio sizes and speed as a file evicted and read by cat).
    cache_method_ = "written, fdatasync, evicted (fadvise), read once (1 MiB preads)";
    return;
  }
  cache_method_ = make_cold(file_, eviction_);
  double r = resident_fraction(file_);
  if (r > results::thresholds::kColdResidentMax) {
    cache_method_ = make_cold(file_, eviction_);  // pages written back since: drop them again
    r = resident_fraction(file_);
  }
  if (r > results::thresholds::kColdResidentMax && eviction_ == results::Eviction::PerFile) {
    // Pages fadvise cannot drop (mapped or locked by someone): a fresh copy has none.
    if (e_.prepared_file.empty() || file_ != e_.prepared_file) files_.remove(file_);
    file_ = files_.create("exp");
    write_pattern_file(file_, plan_.length, config_.seed);
    cache_method_ = make_cold(file_, eviction_) + ", fresh copy";
    r = resident_fraction(file_);
  }
  if (r > results::thresholds::kColdResidentMax)
    throw SkipExperiment("could not make the file cold: " + format_percent(r) + " of it stayed resident after " +
                         cache_method_ + "; a figure from it would be a warm one");
  if (kind == PassKind::Timed) most_resident_ = std::max(most_resident_, r);
}

PassBody FileWorkload::pass(PassKind kind) {
  PassBody body;
  body.prepare = [this](unsigned) {
    file_open_ = method_.open(file_, e_.op == results::Op::Read ? io::Access::Read : io::Access::ReadWrite, opts_);
    // The buffers every request will use (io_uring's fixed buffers pin them once; others ignore it).
    std::span<std::byte> buffers[] = {e_.op == results::Op::Read ? slots_->buffer() : source_->buffer()};
    file_open_->register_buffers(buffers);
    if (e_.op == results::Op::Write && sync_.schedule == io::FlushSchedule::AsyncBytes)
      {
      flusher_ = std::make_unique<io::BackgroundFlusher>(file_, sync_.call, sync_.interval);
      on_write_ = std::make_unique<FlushOnWrite>(*flusher_);
    }
  };
  body.timed = [this, kind](unsigned) {
    LatencyHistogram* hist = kind == PassKind::Latency ? &latency(0) : nullptr;
    if (e_.op == results::Op::Read) {
      // Reads: the calls and close(), as for writes: mmap maps its windows
      // inside the calls, so their unmap (page-table teardown) is the
      // reading's cost too.
      outcome_ = read_pass(*file_open_, queued_, plan_, *slots_, kind, hist, *content_);
      file_open_->close();
      return outcome_.tally;
    }
    // Writes: the calls, the flushes the policy asks for, and close() (which
    // hands user-space buffers to the kernel and trims a mapped file).
    outcome_ = write_pass(*file_open_, queued_, plan_, *source_, kind, hist, sync_, on_write_.get());
    const std::uint64_t before_end = file_open_->counters().calls;
    if (sync_.schedule == io::FlushSchedule::End) {
      file_open_->sync(sync_.call);
      outcome_.flushes = 1;
    }
    std::uint64_t flushes = outcome_.flushes, flushed_bytes = 0;
    if (flusher_) {
      flusher_->finish();
      flushes = flusher_->flushes();
      flushed_bytes = flusher_->flushed_bytes();
      outcome_.tally.io_calls += flushes;
    } else {
      flushed_bytes = flushes > 0 ? outcome_.tally.bytes : 0;
    }
    outcome_.tally.io_calls += file_open_->counters().calls - before_end;  // the final sync
    file_open_->close();
    if (kind == PassKind::Timed) {
      flushes_.push_back(static_cast<double>(flushes));
      bytes_per_flush_.push_back(flushes > 0 ? static_cast<double>(flushed_bytes) / static_cast<double>(flushes) : 0);
    }
    return outcome_.tally;
  };
  body.finish = [this, kind](unsigned) {
    on_write_.reset();
    on_write_.reset();
  flusher_.reset();
    if (file_open_) {
      file_open_->close();
      // SQPOLL's kernel thread works beside ours: its CPU is part of the method's cost.
      if (auto ns = file_open_->poller_cpu_ns(); ns && kind == PassKind::Timed) poller_ns_.push_back(static_cast<double>(*ns));
    }
    file_open_.reset();
  };
  return body;
}

void FileWorkload::after_pass(PassKind kind) {
  if (e_.op == results::Op::Read) {
    if (outcome_.short_calls != 0)
      throw Error("read", file_.string(),
                  std::to_string(outcome_.short_calls) + " calls returned fewer bytes than the file holds (" +
                      experiment_label(record_) + ")",
                  EIO);
    if (outcome_.bad_offset) not_verified(record_, file_, *outcome_.bad_offset, "data read by " + e_.method);
    if (kind == PassKind::Verify) (verify_passes_++ == 0 ? verified_bytes_ : verified_again_bytes_) = outcome_.tally.bytes;
    // The last block read (by a plain loop or a queue) is still in its buffer: check it too (cheap, untimed).
    if (kind != PassKind::Verify && !content_->matches(outcome_.last_offset, outcome_.last_block))
      not_verified(record_, file_, outcome_.last_offset, "the last block read in a timed pass");
    return;
  }
  // Every written file's length is checked and its bytes read back and
  // compared (all of them, or the last block, as data_check() says), then it is removed.
  std::error_code ec;
  std::uint64_t size = std::filesystem::file_size(file_, ec);
  if (ec || size != plan_.length)
    throw Error("verify", file_.string(),
                "written file holds " + std::to_string(ec ? 0 : size) + " bytes, expected " +
                    std::to_string(plan_.length) + " (" + experiment_label(record_) + ")",
                EIO);
  if (auto bad = source_->mismatch(file_, 0, plan_.length, data_check()))
    not_verified(record_, file_, *bad, "data written");
  files_.remove(file_);
}

void FileWorkload::teardown() {
  on_write_.reset();
  flusher_.reset();
  file_open_.reset();
  files_.remove_all();
}

void FileWorkload::describe(results::Result& r) const {
  if (!order_.empty()) {
    // The windows, and the sample the verification pass checked (every byte of it).
    r.extra["pass_blocks"] = e_.pass_blocks;
    r.extra["order_seed"] = e_.order_seed ? e_.order_seed : config_.seed;
    r.extra["verified_bytes"] = verified_bytes_;
    r.extra["verified_fraction"] = static_cast<double>(verified_bytes_) / static_cast<double>(plan_.length);
    if (verify_passes_ > 1) r.extra["verified_again_bytes"] = verified_again_bytes_;
  }
  // Every byte (or a window's sample) read again and checked after the timed passes.
  if (verify_passes_ > 1) r.extra["verified_after_timing"] = true;
  if (full_) {
    full_->describe(r);
    if (direct_) r.cache_method = "O_DIRECT, beside " + cache_method_;
  }
  if (e_.op == results::Op::Read && !direct_) {
    r.cache_method = cache_method_ + (e_.prepared_file.empty() ? "" : "; one file read by every candidate here");
    r.resident_fraction = e_.cache == results::CacheState::Warm ? least_resident_ : most_resident_;
    if (e_.cache == results::CacheState::Warm && least_resident_ < results::thresholds::kWarmResidentMin)
      r.warn(results::WarningKind::NotWarm,
             "not warm: only " + format_percent(least_resident_) + " of the file was resident before a timed pass "
             "(memory pressure?); the figure mixes page-cache and device reads",
             {format_percent(least_resident_) + " resident"});
  }
  if (e_.op == results::Op::Write) {
    r.sync = sync_;
    if (sync_.schedule == io::FlushSchedule::EveryBytes || sync_.schedule == io::FlushSchedule::AsyncBytes) {
      // A write of a whole block is never split by a flush: the interval in effect is at least a block.
      r.extra["flush_interval_bytes"] = std::max(sync_.interval, plan_.block);
      if (sync_.schedule == io::FlushSchedule::EveryBytes) r.extra["flush_every_write"] = plan_.block >= sync_.interval;
    }
  }
  if (!poller_ns_.empty()) r.extra["poller_cpu_s_per_pass"] = results::median(poller_ns_) * 1e-9;
  if (!flushes_.empty() && sync_.flushes()) {
    r.extra["flushes"] = results::median(flushes_);
    r.extra["bytes_per_flush"] = results::median(bytes_per_flush_);
  }
  if (queued_) {
    r.extra["queue_depth"] = std::max(1u, opts_.queue_depth);
    // 0: every free slot per call (page-cache reads); 1: each freed slot as its completion is taken (O_DIRECT).
    r.extra["submit_batch"] = opts_.submit_batch;
    if (std::vector<std::string> uring = io::option_names(opts_.uring); !uring.empty()) r.extra["io_options"] = uring;
  }
}

}  // namespace iolab::harness
