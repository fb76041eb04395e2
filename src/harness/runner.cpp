// The runner: turns experiments into workloads for the engine. Everything
// that is not the measured operation happens outside the timed region (file
// preparation, cache state, opening, verification); everything the measured
// operation costs is inside it (docs/results-format.md, "The timed region").
#include "iolab/harness/runner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/statistics.h"
#include "iolab/harness/thresholds.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

namespace iolab::harness {

namespace {

std::string experiment_label(const Result& r) {
  std::string s = r.suite.empty() ? "" : r.suite + "/";
  s += r.experiment.empty() ? r.method : r.experiment + " " + r.method;
  return s;
}


// Files this experiment created; removed on every way out.
class ExperimentFiles {
 public:
  explicit ExperimentFiles(io::ScratchDir& s) : scratch_(s) {}
  ~ExperimentFiles() { remove_all(); }
  ExperimentFiles(const ExperimentFiles&) = delete;
  ExperimentFiles& operator=(const ExperimentFiles&) = delete;
  std::filesystem::path create(const std::string& stem) {
    files_.push_back(scratch_.create_unique_file(stem));
    return files_.back();
  }
  void remove(const std::filesystem::path& f) {
    files_.erase(std::remove(files_.begin(), files_.end(), f), files_.end());
    scratch_.remove_file(f);
  }
  void remove_all() noexcept {
    for (const auto& f : files_) {
      try {
        scratch_.remove_file(f);
      } catch (...) {  // already gone: nothing left to clean
      }
    }
    files_.clear();
  }

 private:
  io::ScratchDir& scratch_;
  std::vector<std::filesystem::path> files_;
};

}  // namespace

// Writes the pattern into `file` with pwrite and makes it durable (untimed preparation).
void write_pattern_file(const std::filesystem::path& file, std::uint64_t size, std::uint64_t seed) {
  auto f = io::find_file_method("pread").open(file, io::Access::ReadWrite);
  io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(size, 1), 1 << 20)),
                   io::BufferKind::Aligned);
  for (std::uint64_t off = 0; off < size; off += chunk.size()) {
    auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off)));
    io::fill_pattern(seed, off, part);
    f->write_at(off, part);
  }
  f->sync(io::Durability::Fdatasync);
  f->close();
}

namespace {

// The background flusher of FlushSchedule::AsyncBytes: whenever at least
// `interval` bytes have been written since its last flush, it flushes what
// is dirty; requests that arrive while a flush runs are served by the next
// one (coalescing, like RocketMQ's flush thread or Java's asynchronous
// force). A File is not thread-safe, so this thread owns a second descriptor
// (and, for msync, its own mapping of the written range).
class AsyncFlusher final : public WriteObserver {
 public:
  AsyncFlusher(const std::filesystem::path& file, io::Durability how, std::uint64_t interval)
      : path_(file), how_(how), interval_(std::max<std::uint64_t>(interval, 1)) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) throw Error("open for the background flush", file.string(), errno);
    thread_ = std::thread([this] { loop(); });
  }
  ~AsyncFlusher() override {
    if (thread_.joinable()) stop();
    ::close(fd_);
  }
  AsyncFlusher(const AsyncFlusher&) = delete;
  AsyncFlusher& operator=(const AsyncFlusher&) = delete;

  // The writer, after each write: `total` bytes written so far.
  void wrote(std::uint64_t total) override {
    written_.store(total, std::memory_order_relaxed);
    if (total < next_) return;
    next_ = total + interval_;
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
  }
  // Waits for the flush of everything written, then stops; rethrows a flush error.
  void finish() {
    stop();
    if (error_ != 0) throw Error(std::string("background ") + std::string(io::to_string(how_)), path_.string(), error_);
  }
  std::uint64_t flushes() const { return flushes_; }
  std::uint64_t flushed_bytes() const { return flushed_; }

 private:
  void stop() {
    done_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
    thread_.join();
  }
  void loop() {
    int seen = 0;
    for (;;) {
      wake_.wait(seen, std::memory_order_acquire);
      seen = wake_.load(std::memory_order_acquire);
      bool last = done_.load(std::memory_order_acquire);
      std::uint64_t upto = written_.load(std::memory_order_relaxed);
      // A flush when enough is dirty; at the end, whatever is left.
      if (error_ == 0 && upto > flushed_ && (upto - flushed_ >= interval_ || last)) flush(upto);
      if (last) return;
    }
  }
  void flush(std::uint64_t upto) {
    int r = 0;
    switch (how_) {
      case io::Durability::Fsync: r = ::fsync(fd_); break;
      case io::Durability::SyncFileRange:
        r = ::sync_file_range(fd_, static_cast<off_t>(flushed_), static_cast<off_t>(upto - flushed_),
                              SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        break;
      case io::Durability::MsyncSync: {
        // The dirty range, page-aligned: msync writes back the file's dirty pages in it.
        std::uint64_t lo = flushed_ / io::kPageSize * io::kPageSize;
        std::uint64_t len = upto - lo;
        void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd_, static_cast<off_t>(lo));
        if (map == MAP_FAILED) {
          r = -1;
          break;
        }
        r = ::msync(map, len, MS_SYNC);
        int err = errno;
        ::munmap(map, len);
        errno = err;
        break;
      }
      default: r = ::fdatasync(fd_); break;
    }
    if (r != 0) {
      error_ = errno;
      return;
    }
    ++flushes_;
    flushed_ = upto;
  }

  std::filesystem::path path_;
  io::Durability how_;
  std::uint64_t interval_;
  std::uint64_t next_ = 0;  // the writer's: the total at which to wake the flusher next
  int fd_ = -1;
  std::atomic<int> wake_{0};  // int: the futex-native width for atomic wait
  std::atomic<bool> done_{false};
  std::atomic<std::uint64_t> written_{0};
  std::uint64_t flushes_ = 0, flushed_ = 0;  // the flusher's; read after join
  int error_ = 0;                            // read after join
  std::thread thread_;
};

[[noreturn]] void not_verified(const Result& r, const std::filesystem::path& file, std::uint64_t offset, const std::string& what) {
  throw Error("verify", file.string(),
              what + " at offset " + std::to_string(offset) + " does not match the pattern (" + experiment_label(r) +
                  "); no figure is reported for data that does not verify",
              EIO);
}

bool misaligned(std::size_t align, const void* p, std::uint64_t block) {
  return align > 1 && (reinterpret_cast<std::uintptr_t>(p) % align != 0 || block % align != 0);
}

// A file experiment as a one-worker workload.
class FileWorkload final : public Workload {
 public:
  FileWorkload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch, Result& record)
      : e_(e),
        config_(config),
        record_(record),
        scratch_(scratch),
        files_(scratch),
        method_(e.method_object ? *e.method_object : io::find_file_method(e.method)) {}

  std::optional<std::string> setup() override {
    opts_ = e_.options;
    if (method_.traits(opts_).direct_optional && e_.cache == CacheState::Direct) opts_.direct = true;
    traits_ = method_.traits(opts_);
    direct_ = traits_.bypasses_page_cache;
    queued_ = traits_.queued;
    eviction_ = config_.eviction.value_or(e_.eviction);
    record_.buffer = buffer_ = e_.buffer.value_or(traits_.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap);
    if (queued_) record_.queue_depth = std::max(1u, opts_.queue_depth);
    if (direct_) {
      record_.cache = CacheState::Direct;
      record_.cache_method = "O_DIRECT";
      if (e_.cache != CacheState::Direct && e_.op == Op::Read)
        record_.warn(WarningKind::CacheIgnored, "asked for a " + std::string(to_string(e_.cache)) +
                                                    " cache, but O_DIRECT bypasses the page cache: recorded as direct");
    } else if (e_.cache == CacheState::Direct) {
      return "cache 'direct' needs O_DIRECT; " + e_.method + " always goes through the page cache";
    }
    if (e_.op == Op::Write && !direct_) {
      record_.cache.reset();  // a fresh file: nothing to be warm or cold
      record_.cache_method = "fresh file";
    }
    io::Availability avail = method_.probe(scratch_.path());
    if (!avail.available) return avail.reason;
    io::Availability options = method_.supports_options(opts_, scratch_.path());
    if (!options.available) return options.reason;
    if (e_.op == Op::Read && e_.cache == CacheState::Cold && !direct_ && eviction_ == Eviction::DropCaches &&
        !can_drop_caches())
      return "this experiment evicts with drop_caches, which needs root (/proc/sys/vm/drop_caches is not writable)";
    if (e_.op == Op::Read && e_.sync.flushes())
      throw UsageError("sync '" + to_string(e_.sync) + "' for a read", "sync applies to writes only");

    // Before the plan (a random one holds an offset per call) and any file or buffer.
    if (auto why = resource_problem(e_, scratch_.path())) return why;
    plan_ = make_plan(e_.op, 0, file_length(e_), e_.block_size, e_.pattern, config_.seed);
    record_.file_size = plan_.length;
    if (plan_.length % plan_.block != 0)
      record_.warn(WarningKind::ShortLastCall,
                   "the " + size_label(plan_.length) + " file is not a multiple of " + size_label(plan_.block) +
                       ": the last call moves " + size_label(plan_.length % plan_.block),
                   {size_label(plan_.length % plan_.block)});
    if (plan_.block > plan_.length)
      record_.warn(WarningKind::ShortLastCall,
                   "the block (" + size_label(plan_.block) + ") is larger than the file (" + size_label(plan_.length) +
                       "): one call of " + size_label(plan_.length) + " per pass");

    if (e_.op == Op::Read) return setup_reads();
    return setup_writes();
  }

  void before_pass(PassKind kind) override {
    if (e_.op == Op::Write) {
      file_ = files_.create("exp");
      return;
    }
    if (direct_) return;
    if (e_.cache == CacheState::Warm) {
      if (resident_fraction(file_) < 1.0) make_warm(file_);
      if (kind == PassKind::Timed) {
        double r = resident_fraction(file_);
        if (r < thresholds::kWarmResidentMin) {  // evicted by memory pressure between passes: warm it once more
          make_warm(file_);
          r = resident_fraction(file_);
        }
        least_resident_ = std::min(least_resident_, r);
      }
      cache_method_ = "read once";
      return;
    }
    cache_method_ = make_cold(file_, eviction_);
    double r = resident_fraction(file_);
    if (r > thresholds::kColdResidentMax) {
      cache_method_ = make_cold(file_, eviction_);  // pages written back since: drop them again
      r = resident_fraction(file_);
    }
    if (r > thresholds::kColdResidentMax && eviction_ == Eviction::PerFile) {
      // Pages fadvise cannot drop (mapped or locked by someone): a fresh copy has none.
      files_.remove(file_);
      file_ = files_.create("exp");
      write_pattern_file(file_, plan_.length, config_.seed);
      cache_method_ = make_cold(file_, eviction_) + ", fresh copy";
      r = resident_fraction(file_);
    }
    if (r > thresholds::kColdResidentMax)
      throw SkipExperiment("could not make the file cold: " + format_percent(r) + " of it stayed resident after " +
                           cache_method_ + "; a figure from it would be a warm one");
    if (kind == PassKind::Timed) most_resident_ = std::max(most_resident_, r);
  }

  PassBody pass(PassKind kind) override {
    PassBody body;
    body.prepare = [this](unsigned) {
      file_open_ = method_.open(file_, e_.op == Op::Read ? io::Access::Read : io::Access::ReadWrite, opts_);
      // The buffers every request will use (io_uring's fixed buffers pin them once; others ignore it).
      std::span<std::byte> buffers[] = {e_.op == Op::Read ? slots_->buffer() : source_->buffer()};
      file_open_->register_buffers(buffers);
      if (e_.op == Op::Write && sync_.schedule == FlushSchedule::AsyncBytes)
        flusher_ = std::make_unique<AsyncFlusher>(file_, sync_.call, sync_.interval);
    };
    body.timed = [this, kind](unsigned) {
      LatencyHistogram* hist = kind == PassKind::Latency ? &latency(0) : nullptr;
      if (e_.op == Op::Read) {
        // Reads: the calls and close(), as for writes: mmap maps its windows
        // inside the calls, so their unmap (page-table teardown) is the
        // reading's cost too.
        outcome_ = read_pass(*file_open_, queued_, plan_, *slots_, kind, hist, *content_);
        file_open_->close();
        return outcome_.tally;
      }
      // Writes: the calls, the flushes the policy asks for, and close() (which
      // hands user-space buffers to the kernel and trims a mapped file).
      InlineFlush inline_flush;
      if (sync_.schedule == FlushSchedule::EveryWrite || sync_.schedule == FlushSchedule::EveryBytes ||
          sync_.schedule == FlushSchedule::EveryOps)
        inline_flush = InlineFlush{sync_.schedule, sync_.call, std::max<std::uint64_t>(sync_.interval, 1), 0};
      outcome_ = write_pass(*file_open_, queued_, plan_, *source_, kind, hist, inline_flush, flusher_.get());
      const std::uint64_t before_end = file_open_->counters().calls;
      if (sync_.schedule == FlushSchedule::End) {
        file_open_->sync(sync_.call);
        inline_flush.flushes = 1;
      }
      std::uint64_t flushes = inline_flush.flushes, flushed_bytes = 0;
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

  void after_pass(PassKind kind) override {
    if (e_.op == Op::Read) {
      if (outcome_.short_calls != 0)
        throw Error("read", file_.string(),
                    std::to_string(outcome_.short_calls) + " calls returned fewer bytes than the file holds (" +
                        experiment_label(record_) + ")",
                    EIO);
      if (outcome_.bad_offset) not_verified(record_, file_, *outcome_.bad_offset, "data read by " + e_.method);
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

  void teardown() override {
    flusher_.reset();
    file_open_.reset();
    files_.remove_all();
  }

  bool kernel_counts_calls() const override { return traits_.library_calls; }
  // Written files are read back after every pass: no verification pass.
  bool has_verification_pass() const override { return e_.op == Op::Read; }
  LatencySource latency_source() const override {
    return queued_ ? LatencySource::EveryRequest : LatencySource::EveryCall;
  }

  void describe(Result& r) const override {
    if (e_.op == Op::Read && !direct_) {
      r.cache_method = cache_method_;
      r.resident_fraction = e_.cache == CacheState::Warm ? least_resident_ : most_resident_;
      if (e_.cache == CacheState::Warm && least_resident_ < thresholds::kWarmResidentMin)
        r.warn(WarningKind::NotWarm,
               "not warm: only " + format_percent(least_resident_) + " of the file was resident before a timed pass "
               "(memory pressure?); the figure mixes page-cache and device reads",
               {format_percent(least_resident_) + " resident"});
    }
    if (e_.op == Op::Write) {
      r.sync = sync_;
      if (sync_.schedule == FlushSchedule::EveryBytes || sync_.schedule == FlushSchedule::AsyncBytes) {
        // A write of a whole block is never split by a flush: the interval in effect is at least a block.
        r.extra["flush_interval_bytes"] = std::max(sync_.interval, plan_.block);
        if (sync_.schedule == FlushSchedule::EveryBytes) r.extra["flush_every_write"] = plan_.block >= sync_.interval;
      }
    }
    if (!poller_ns_.empty()) r.extra["poller_cpu_s_per_pass"] = median(poller_ns_) * 1e-9;
    if (!flushes_.empty() && sync_.flushes()) {
      r.extra["flushes"] = median(flushes_);
      r.extra["bytes_per_flush"] = median(bytes_per_flush_);
    }
    if (queued_) {
      r.extra["queue_depth"] = std::max(1u, opts_.queue_depth);
      if (opts_.submit_batch) r.extra["submit_batch"] = opts_.submit_batch;
      std::vector<std::string> uring;
      if (opts_.uring.registered_files) uring.push_back("registered files");
      if (opts_.uring.fixed_buffers) uring.push_back("fixed buffers");
      if (opts_.uring.sqpoll) uring.push_back("SQPOLL");
      if (opts_.uring.single_issuer) uring.push_back("SINGLE_ISSUER+DEFER_TASKRUN");
      if (opts_.uring.coop_taskrun) uring.push_back("COOP_TASKRUN");
      if (!uring.empty()) r.extra["io_options"] = uring;
    }
  }

 private:
  std::optional<std::string> setup_reads() {
    const unsigned slots = queued_ ? std::max(1u, opts_.queue_depth) : 1;
    slots_ = std::make_unique<ReadSlots>(slots, plan_.block, buffer_);
    record_.buffer_offset = io::page_offset(slots_->address());
    content_ = std::make_unique<PatternContent>(config_.seed);
    file_ = files_.create("exp");
    write_pattern_file(file_, plan_.length, config_.seed);
    if (e_.cache == CacheState::Warm && !direct_) make_warm_from_disk(file_);
    return preflight(file_, io::Access::Read, slots_->address(), std::nullopt);
  }

  std::optional<std::string> setup_writes() {
    sync_ = resolved(e_.sync, traits_);
    if (sync_.schedule == FlushSchedule::AsyncBytes &&
        (sync_.call == io::Durability::Flush || sync_.call == io::Durability::None))
      return "a background flush of user-space buffers would use the File from two threads; async-N needs "
             "fdatasync, fsync, sync_file_range or msync";
    if (queued_ && (sync_.schedule == FlushSchedule::EveryWrite || sync_.schedule == FlushSchedule::EveryBytes ||
                    sync_.schedule == FlushSchedule::EveryOps))
      return "a queued method keeps several writes in flight, so a flush after every write or every N bytes has no "
             "single point to run at; use end or async-N";
    source_ = std::make_unique<WriteSource>(config_.seed, plan_.length, plan_.block, buffer_);
    record_.buffer_offset = io::page_offset(source_->at(0, 0).data());
    std::filesystem::path probe = files_.create("exp");
    std::optional<io::Durability> needs;
    if (sync_.flushes() && sync_.schedule != FlushSchedule::AsyncBytes) needs = sync_.call;
    auto why = preflight(probe, io::Access::ReadWrite, source_->at(0, 0).data(), needs);
    files_.remove(probe);
    return why;
  }

  // Opens the file with the method once, untimed, to learn whether the
  // experiment can run here at all: O_DIRECT refused, an alignment the
  // buffer or block size breaks, a durability call the method cannot make.
  std::optional<std::string> preflight(const std::filesystem::path& file, io::Access access, const void* buffer,
                                       std::optional<io::Durability> sync) {
    std::unique_ptr<io::File> f;
    try {
      f = method_.open(file, access, opts_);
    } catch (const Error& err) {
      if (err.error_number() == EINVAL || err.error_number() == EOPNOTSUPP) return std::string(err.what());
      throw;
    }
    std::size_t align = f->alignment();
    if (opts_.unaligned == io::UnalignedPolicy::Reject && misaligned(align, buffer, plan_.block))
      return "O_DIRECT needs buffer address, offset and length aligned to " + std::to_string(align) + " bytes here; " +
             (plan_.block % align != 0 ? "a " + std::to_string(plan_.block) + "-byte block is not"
                                       : "the heap buffer is not") +
             " (use an aligned buffer and a block size that is a multiple of " + std::to_string(align) + ")";
    if (opts_.unaligned == io::UnalignedPolicy::Reject && align > 1 && plan_.length % align != 0)
      return "O_DIRECT needs lengths aligned to " + std::to_string(align) + " bytes here; a " +
             std::to_string(plan_.length) + "-byte file ends in a shorter call (use a file size that is a multiple of " +
             std::to_string(align) + ")";
    if (sync && !f->supports(*sync))
      return std::string(method_.name()) + " cannot make the " + std::string(io::to_string(*sync)) + " durability call";
    f->close();
    return std::nullopt;
  }

  const FileExperiment& e_;
  const RunConfig& config_;
  Result& record_;
  io::ScratchDir& scratch_;
  ExperimentFiles files_;
  const io::Method& method_;
  io::FileOptions opts_;
  io::MethodTraits traits_;
  bool direct_ = false, queued_ = false;
  io::BufferKind buffer_ = io::BufferKind::Heap;
  Eviction eviction_ = Eviction::PerFile;
  SyncPolicy sync_;
  RequestPlan plan_;
  std::unique_ptr<ReadSlots> slots_;
  std::unique_ptr<PatternContent> content_;
  std::unique_ptr<WriteSource> source_;
  std::filesystem::path file_;
  std::unique_ptr<io::File> file_open_;
  std::unique_ptr<AsyncFlusher> flusher_;
  LoopOutcome outcome_;
  std::string cache_method_;
  double least_resident_ = 1.0, most_resident_ = 0.0;
  std::vector<double> flushes_, bytes_per_flush_, poller_ns_;
};

Error not_verified(const Result& r) {
  return Error("verify", experiment_label(r), "data did not verify; no figure is reported for it", EIO);
}

// A CustomExperiment's callbacks as a one-worker workload.
class CallbackWorkload final : public Workload {
 public:
  explicit CallbackWorkload(const CustomExperiment& e) : e_(e) {}
  std::optional<std::string> setup() override {
    if (e_.labels.skipped) return *e_.labels.skipped;
    if (!e_.timed) throw Error("run", experiment_label(e_.labels), "a custom experiment needs a timed callback", EINVAL);
    return std::nullopt;
  }
  void before_pass(PassKind) override {
    if (e_.prepare) e_.prepare();
  }
  PassBody pass(PassKind kind) override {
    PassBody body;
    if (kind == PassKind::Verify) {
      body.timed = [this](unsigned) {
        if (!e_.verification()) throw not_verified(e_.labels);
        return WorkerTally{};
      };
      return body;
    }
    body.timed = [this](unsigned) {
      Repetition r = e_.timed();
      if (r.io_calls == 0) kernel_counts_ = true;
      return WorkerTally{r.bytes, r.ops, r.io_calls};
    };
    return body;
  }
  void after_pass(PassKind) override {
    if (e_.cleanup) e_.cleanup(data_check());
  }
  bool records_latency() const override { return false; }
  bool has_verification_pass() const override { return static_cast<bool>(e_.verification); }
  bool kernel_counts_calls() const override { return kernel_counts_; }

 private:
  const CustomExperiment& e_;
  bool kernel_counts_ = false;
};

}  // namespace

std::uint64_t file_length(const FileExperiment& e) {
  if (e.ops == 0) return e.file_size;
  return e.ops > UINT64_MAX / e.block_size ? UINT64_MAX : e.ops * e.block_size;
}

std::optional<std::string> resource_problem(const FileExperiment& e, const std::filesystem::path& scratch_dir) {
  const io::Method& method = e.method_object ? *e.method_object : io::find_file_method(e.method);
  const std::uint64_t length = file_length(e), block = std::max<std::uint64_t>(e.block_size, 1);
  const bool queued = method.traits(e.options).queued;
  // Read slots (one per request in flight), or a write source's blocks; a
  // random plan's offsets, one per call.
  const long double slots = e.op == Op::Read ? (queued ? std::max(1u, e.options.queue_depth) : 1u) : 2u;
  long double memory = static_cast<long double>(block) * slots;
  if (e.pattern == AccessPattern::Rand) memory += static_cast<long double>(length / block + 1) * sizeof(std::uint64_t);
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    const auto ram = static_cast<long double>(pages) * static_cast<long double>(page);
    if (memory > ram / 2)
      return "it needs " + format_bytes(static_cast<double>(memory)) + " of memory (buffers" +
             (e.pattern == AccessPattern::Rand ? std::string(" and an offset per call") : "") + "), more than half of the " +
             format_bytes(static_cast<double>(ram)) + " here";
  }
  struct statvfs fs {};
  if (::statvfs(scratch_dir.c_str(), &fs) == 0) {
    const std::uint64_t free = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (length > free)
      return "its " + format_bytes(static_cast<double>(length)) + " file is larger than the " +
             format_bytes(static_cast<double>(free)) + " free in " + scratch_dir.string();
  }
  return std::nullopt;
}

Result labels_of(const FileExperiment& e) {
  Result r;
  r.suite = e.suite;
  r.experiment = e.experiment;
  r.method = e.method_label.empty() ? e.method : e.method_label;
  r.op = e.op;
  r.pattern = e.pattern;
  r.block_size = e.block_size;
  r.file_size = e.ops != 0 ? e.ops * e.block_size : e.file_size;
  r.buffer = e.buffer;
  r.cache = e.cache;
  r.sync = e.sync;
  r.reference = e.reference;
  return r;
}

Runner::Runner(RunConfig config, io::ScratchDir& scratch) : config_(std::move(config)), scratch_(scratch) {
  if (config_.reps == 0) throw UsageError("--reps 0", "at least one timed repetition is needed");
  watch_device(scratch_.path());  // records say what the device really read and wrote
}
Runner::~Runner() = default;

EngineSettings Runner::settings() const {
  EngineSettings s;
  s.reps = config_.reps;
  s.warmup = config_.warmup;
  s.min_time = config_.min_time;
  s.max_time = config_.max_time;
  s.latency = config_.latency;
  s.on_pass = config_.on_pass;
  return s;
}

Result Runner::skip(Result labels, std::string reason) {
  labels.skipped = std::move(reason);
  labels.reps = 0;
  labels.samples_s.clear();
  if (config_.on_result) config_.on_result(labels);
  return labels;
}

Result Runner::run(Workload& workload, Result labels, Team& team) {
  if (config_.on_experiment) config_.on_experiment(experiment_label(labels));
  measure(workload, team, settings(), labels);
  if (labels.skipped) labels.reps = 0;
  if (config_.on_result) config_.on_result(labels);
  return labels;
}

Result Runner::run(Workload& workload, Result labels) {
  LocalTeam one(1);
  return run(workload, std::move(labels), one);
}

Result Runner::run(const FileExperiment& e) {
  Result r = labels_of(e);
  FileWorkload workload(e, config_, scratch_, r);
  if (config_.on_experiment) config_.on_experiment(experiment_label(r));
  LocalTeam one(1);
  EngineSettings s = settings();
  s.latency = s.latency && e.latency;
  measure(workload, one, s, r);
  if (r.skipped) r.reps = 0;
  if (config_.on_result) config_.on_result(r);
  return r;
}

Result Runner::run(const CustomExperiment& e) {
  CallbackWorkload workload(e);
  Result r = e.labels;
  r.samples_s.clear();
  r.warnings.clear();
  r.verified = false;
  if (config_.on_experiment) config_.on_experiment(experiment_label(r));
  LocalTeam one(1);
  if (measure(workload, one, settings(), r)) {
    r.verified = static_cast<bool>(e.verification);  // it ran: a failure throws
    if (e.verify) {
      if (!e.verify()) throw not_verified(r);
      r.verified = true;
    }
  } else {
    r.reps = 0;
  }
  if (config_.on_result) config_.on_result(r);
  return r;
}

}  // namespace iolab::harness
