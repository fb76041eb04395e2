// A file experiment as the engine's workload: a file prepared outside the
// timed region, the method's calls (and close) inside it, verification on
// the path that was timed (docs/results-format.md, "The timed region").
#include "file_workload.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
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
#include "full_cache.h"

namespace iolab::harness {

namespace {

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

// FlushSchedule::AsyncBytes: each write tells the background flusher how far the file has been written.
class FlushOnWrite final : public WriteObserver {
 public:
  explicit FlushOnWrite(io::BackgroundFlusher& f) : flusher_(f) {}
  void wrote(std::uint64_t total) override { flusher_.wrote(total); }

 private:
  io::BackgroundFlusher& flusher_;
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
    opts_ = experiment_options(method_, e_);
    traits_ = method_.traits(opts_);
    direct_ = traits_.bypasses_page_cache;
    queued_ = traits_.queued;
    eviction_ = config_.eviction.value_or(e_.eviction);
    record_.buffer = buffer_ = e_.buffer.value_or(traits_.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap);
    if (queued_) record_.queue_depth = std::max(1u, opts_.queue_depth);
    if (direct_) {
      record_.cache = CacheState::Direct;
      record_.cache_method = "O_DIRECT";
      // A full cache is the group's, which O_DIRECT shares without using: it is still proven (the record says so).
      if (e_.cache != CacheState::Direct && e_.cache != CacheState::Full && e_.op == Op::Read)
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
    if (e_.cache == CacheState::Full && (e_.op != Op::Read || !e_.memory_group || e_.cache_room == 0))
      return std::string(e_.op != Op::Read ? "a full cache applies to reads (a write goes to a fresh file)"
                                           : "a full cache is the page cache of a memory cgroup the experiment runs in, "
                                             "and none was given (iolab recommend's \"larger than memory\" column makes one)");

    // Before the plan (a random one holds an offset per call) and any file or buffer.
    if (auto why = resource_problem(e_, scratch_.path())) return why;
    const bool windows = e_.op == Op::Read && e_.pattern == AccessPattern::Rand && e_.pass_blocks > 0;
    plan_ = make_plan(e_.op, 0, file_length(e_), e_.block_size, e_.pattern,
                      windows && e_.order_seed ? e_.order_seed : config_.seed, e_.op == Op::Read && !windows ? e_.rounds : 1);
    if (e_.op == Op::Read && e_.pattern == AccessPattern::Rand) plan_.stop = e_.stop;
    // Windows: the permutation is kept whole, and each pass takes its next window of it (before_pass).
    if (windows) order_ = std::move(plan_.order), plan_.order.clear();
    record_.file_size = plan_.length;
    if (e_.cache == CacheState::Full && plan_.length <= e_.cache_room)
      return "the " + format_bytes(static_cast<double>(plan_.length)) + " file is not larger than the " +
             format_bytes(static_cast<double>(e_.cache_room)) + " page-cache room: a full cache would hold it whole";
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
    if (!order_.empty()) next_window(kind == PassKind::Verify && e_.verify_blocks ? e_.verify_blocks : e_.pass_blocks);
    if (full_) {
      full_->before_pass(kind == PassKind::Timed);
      cache_method_ = full_->method();
      if (kind == PassKind::Timed) most_resident_ = std::max(most_resident_, full_->most_resident());
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
      // How the pages came in (make_warm_from_disk): the state of a file read normally, readahead's folios
      // (bench/warm_file_state: the same folio sizes and speed as a file evicted and read by cat).
      cache_method_ = "written, fdatasync, evicted (fadvise), read once (1 MiB preads)";
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
      if (e_.prepared_file.empty() || file_ != e_.prepared_file) files_.remove(file_);
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
        {
        flusher_ = std::make_unique<io::BackgroundFlusher>(file_, sync_.call, sync_.interval);
        on_write_ = std::make_unique<FlushOnWrite>(*flusher_);
      }
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
      outcome_ = write_pass(*file_open_, queued_, plan_, *source_, kind, hist, inline_flush, on_write_.get());
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

  void after_pass(PassKind kind) override {
    if (e_.op == Op::Read) {
      if (outcome_.short_calls != 0)
        throw Error("read", file_.string(),
                    std::to_string(outcome_.short_calls) + " calls returned fewer bytes than the file holds (" +
                        experiment_label(record_) + ")",
                    EIO);
      if (outcome_.bad_offset) not_verified(record_, file_, *outcome_.bad_offset, "data read by " + e_.method);
      if (kind == PassKind::Verify) verified_bytes_ = outcome_.tally.bytes;
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
    on_write_.reset();
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
    if (!order_.empty()) {
      // The windows, and the sample the verification pass checked (every byte of it).
      r.extra["pass_blocks"] = e_.pass_blocks;
      r.extra["order_seed"] = e_.order_seed ? e_.order_seed : config_.seed;
      r.extra["verified_bytes"] = verified_bytes_;
      r.extra["verified_fraction"] = static_cast<double>(verified_bytes_) / static_cast<double>(plan_.length);
    }
    if (full_) {
      full_->describe(r);
      if (direct_) r.cache_method = "O_DIRECT, beside " + cache_method_;
    }
    if (e_.op == Op::Read && !direct_) {
      r.cache_method = cache_method_ + (e_.prepared_file.empty() ? "" : "; one file read by every candidate here");
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
      // 0: every free slot per call (page-cache reads); 1: each freed slot as its completion is taken (O_DIRECT).
      r.extra["submit_batch"] = opts_.submit_batch;
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
    if (!e_.prepared_file.empty()) {
      // The caller's file, shared with the other candidates at this condition: its length is checked here, its
      // bytes by the verification pass. A warm one is made warm again only if it is not wholly resident.
      std::error_code ec;
      const std::uint64_t size = std::filesystem::file_size(e_.prepared_file, ec);
      if (ec || size < plan_.length)
        throw Error("read", e_.prepared_file.string(),
                    "the prepared file holds " + std::to_string(ec ? 0 : size) + " bytes, fewer than the " +
                        std::to_string(plan_.length) + " the experiment reads",
                    EINVAL);
      file_ = e_.prepared_file;
      if (e_.cache == CacheState::Warm && !direct_ && resident_fraction(file_) < 1.0) make_warm_from_disk(file_);
    } else {
      file_ = files_.create("exp");
      write_pattern_file(file_, plan_.length, config_.seed);
      if (e_.cache == CacheState::Warm && !direct_) make_warm_from_disk(file_);
    }
    if (e_.cache == CacheState::Full) full_.emplace(*e_.memory_group, e_.cache_room, file_, plan_.length);
    return preflight(file_, io::Access::Read, slots_->address(), std::nullopt);
  }

  // A window of the permutation: the next `n` blocks, wrapping around.
  void next_window(std::uint64_t n) {
    n = std::min<std::uint64_t>(std::max<std::uint64_t>(n, 1), order_.size());
    plan_.order.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) plan_.order[i] = order_[(cursor_ + i) % order_.size()];
    cursor_ = (cursor_ + n) % order_.size();
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
  std::unique_ptr<io::BackgroundFlusher> flusher_;
  std::unique_ptr<FlushOnWrite> on_write_;
  LoopOutcome outcome_;
  std::string cache_method_;
  double least_resident_ = 1.0, most_resident_ = 0.0;
  std::vector<std::uint64_t> order_;  // windows: the whole permutation, a pass taking the next window of it
  std::uint64_t cursor_ = 0, verified_bytes_ = 0;
  std::optional<FullCache> full_;  // CacheState::Full: made and proven before every pass
  std::vector<double> flushes_, bytes_per_flush_, poller_ns_;
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

io::FileOptions experiment_options(const io::Method& method, const FileExperiment& e) {
  io::FileOptions o = e.options;
  if (method.traits(o).direct_optional && e.cache == CacheState::Direct) o.direct = true;
  const io::MethodTraits t = method.traits(o);
  if (t.queued && t.bypasses_page_cache && o.submit_batch == 0) o.submit_batch = 1;
  return o;
}

std::uint64_t file_length(const FileExperiment& e) {
  if (e.ops == 0) return e.file_size;
  return e.ops > UINT64_MAX / e.block_size ? UINT64_MAX : e.ops * e.block_size;
}

long double experiment_memory(const FileExperiment& e) {
  const io::Method& method = e.method_object ? *e.method_object : io::find_file_method(e.method);
  const std::uint64_t length = file_length(e), block = std::max<std::uint64_t>(e.block_size, 1);
  const bool queued = method.traits(e.options).queued;
  // Read slots (one per request in flight), or a write source's blocks; a
  // random plan's offsets, one per call (windows: the permutation, and a window of it).
  const long double slots = e.op == Op::Read ? (queued ? std::max(1u, e.options.queue_depth) : 1u) : 2u;
  long double memory = static_cast<long double>(block) * slots;
  if (e.pattern == AccessPattern::Rand)
    memory += (static_cast<long double>(length / block + 1) * (e.pass_blocks ? 1u : std::max(e.rounds, 1u)) +
               static_cast<long double>(std::max(e.pass_blocks, e.verify_blocks))) *
              sizeof(std::uint64_t);
  return memory;
}

std::optional<std::string> resource_problem(const FileExperiment& e, const std::filesystem::path& scratch_dir) {
  const std::uint64_t length = file_length(e);
  const long double memory = experiment_memory(e);
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

std::unique_ptr<Workload> make_file_workload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch,
                                             Result& record) {
  return std::make_unique<FileWorkload>(e, config, scratch, record);
}

}  // namespace iolab::harness
