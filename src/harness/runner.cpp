// The runner: everything that is not the measured operation happens outside
// the timed region (file preparation, cache state, opening, verification),
// and everything the measured operation costs is inside it.
#include "iolab/harness/runner.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <numeric>
#include <random>
#include <thread>

#include "iolab/error.h"
#include "iolab/harness/histogram.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/units.h"

namespace iolab::harness {

// ---- names -----------------------------------------------------------------

std::string_view to_string(Op o) { return o == Op::Read ? "read" : "write"; }
std::string_view to_string(AccessPattern p) { return p == AccessPattern::Seq ? "seq" : "rand"; }
std::string_view to_string(CacheState c) {
  switch (c) {
    case CacheState::Warm: return "warm";
    case CacheState::Cold: return "cold";
    case CacheState::Direct: return "direct";
  }
  return "?";
}
std::string_view to_string(SyncSchedule s) {
  switch (s) {
    case SyncSchedule::None: return "none";
    case SyncSchedule::End: return "end";
    case SyncSchedule::Periodic: return "periodic";
    case SyncSchedule::EveryWrite: return "every";
  }
  return "?";
}
std::string_view to_string(Eviction e) {
  switch (e) {
    case Eviction::Auto: return "auto";
    case Eviction::DropCaches: return "drop_caches";
    case Eviction::Fadvise: return "fadvise";
  }
  return "?";
}

Op parse_op(std::string_view s) {
  if (s == "read") return Op::Read;
  if (s == "write") return Op::Write;
  throw UsageError("op '" + std::string(s) + "'", "expected read or write");
}
AccessPattern parse_pattern(std::string_view s) {
  if (s == "seq") return AccessPattern::Seq;
  if (s == "rand") return AccessPattern::Rand;
  throw UsageError("pattern '" + std::string(s) + "'", "expected seq or rand");
}
CacheState parse_cache(std::string_view s) {
  for (auto c : {CacheState::Warm, CacheState::Cold, CacheState::Direct})
    if (s == to_string(c)) return c;
  throw UsageError("cache '" + std::string(s) + "'", "expected warm, cold or direct");
}
SyncSchedule parse_schedule(std::string_view s) {
  for (auto c : {SyncSchedule::None, SyncSchedule::End, SyncSchedule::Periodic, SyncSchedule::EveryWrite})
    if (s == to_string(c)) return c;
  throw UsageError("sync schedule '" + std::string(s) + "'", "expected none, end, periodic or every");
}
Eviction parse_eviction(std::string_view s) {
  for (auto c : {Eviction::Auto, Eviction::DropCaches, Eviction::Fadvise})
    if (s == to_string(c)) return c;
  throw UsageError("eviction '" + std::string(s) + "'", "expected auto, drop_caches or fadvise");
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kTooShortSeconds = 0.050;
constexpr double kColdResidentLimit = 0.05;
constexpr std::uint64_t kRingBytes = std::uint64_t{8} << 20;

std::uint64_t nanoseconds(Clock::duration d) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// The offsets of one repetition: blocks in order, or a fixed-seed permutation.
struct Plan {
  std::uint64_t block = 0, file_size = 0, ops = 0;
  std::vector<std::uint64_t> order;  // rand: permuted block indices; empty for seq

  std::uint64_t offset(std::uint64_t i) const { return (order.empty() ? i : order[i]) * block; }
  std::size_t length(std::uint64_t i) const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(block, file_size - offset(i)));
  }
};

Plan make_plan(const FileExperiment& e, std::uint64_t seed) {
  if (e.block_size == 0) throw UsageError("block size 0", "must be at least 1 byte");
  Plan p;
  p.block = e.block_size;
  if (e.ops != 0) {
    p.ops = e.ops;
    p.file_size = e.ops * e.block_size;
  } else {
    if (e.file_size == 0) throw UsageError("file size 0", "give a file size or a number of operations");
    p.file_size = e.file_size;
    p.ops = (e.file_size + e.block_size - 1) / e.block_size;
  }
  if (e.pattern == AccessPattern::Rand) {
    p.order.resize(p.ops);
    std::iota(p.order.begin(), p.order.end(), std::uint64_t{0});
    std::mt19937_64 rng(seed);
    std::shuffle(p.order.begin(), p.order.end(), rng);
  }
  return p;
}

// Files this experiment created; removed on every way out.
class ExperimentFiles {
 public:
  explicit ExperimentFiles(io::ScratchDir& s) : scratch_(s) {}
  ~ExperimentFiles() {
    for (const auto& f : files_) {
      try {
        scratch_.remove_file(f);
      } catch (...) {  // already gone or never ours: nothing left to clean
      }
    }
  }
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

 private:
  io::ScratchDir& scratch_;
  std::vector<std::filesystem::path> files_;
};

// Writes the pattern into `file` with pwrite and makes it durable (untimed preparation).
void write_pattern_file(const std::filesystem::path& file, std::uint64_t size, std::uint64_t seed) {
  auto f = io::find_file_method("pread").open(file, io::Access::ReadWrite);
  io::Buffer chunk(std::size_t{1} << 20, io::BufferKind::Aligned);
  for (std::uint64_t off = 0; off < size; off += chunk.size()) {
    auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off)));
    io::fill_pattern(seed, off, part);
    f->write_at(off, part);
  }
  f->sync(io::Durability::Fdatasync);
  f->close();
}

// Flushes a file from a background thread every `interval` bytes the timed
// loop reports as written. The File under test is not thread-safe, so this
// thread owns a second descriptor (and, for msync, its own mapping).
class PeriodicFlusher {
 public:
  PeriodicFlusher(const std::filesystem::path& file, io::Durability how, std::uint64_t interval)
      : path_(file), how_(how), interval_(interval == 0 ? 1 : interval), next_(interval_) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error("open for periodic flush", file.string(), errno);
    thread_ = std::thread([this] { loop(); });
  }
  ~PeriodicFlusher() {
    if (thread_.joinable()) stop();
    ::close(fd_);
  }
  PeriodicFlusher(const PeriodicFlusher&) = delete;
  PeriodicFlusher& operator=(const PeriodicFlusher&) = delete;

  // Called by the timed loop after each write; `total` bytes written so far.
  void wrote(std::uint64_t total) {
    if (total < next_) return;
    next_ = total + interval_;
    written_.store(total, std::memory_order_relaxed);
    asked_.fetch_add(1, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
  }
  // Waits for the last flush; rethrows a flush error. Inside the timed region.
  void finish() {
    stop();
    if (error_ != 0) throw Error(std::string("periodic ") + std::string(io::to_string(how_)), path_.string(), error_);
  }
  std::uint64_t flushes() const { return flushes_; }

 private:
  void stop() {
    done_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
    thread_.join();
  }
  void loop() {
    int wake_seen = 0, handled = 0;
    for (;;) {
      wake_.wait(wake_seen, std::memory_order_acquire);
      wake_seen = wake_.load(std::memory_order_acquire);
      // Requests that piled up while a flush ran are served by one flush.
      int asked = asked_.load(std::memory_order_acquire);
      if (asked != handled && error_ == 0) flush();
      handled = asked;
      if (done_.load(std::memory_order_acquire)) {
        // A threshold crossed just before the loop ended still gets its flush.
        if (asked_.load(std::memory_order_acquire) != handled && error_ == 0) flush();
        return;
      }
    }
  }
  void flush() {
    ++flushes_;
    int r = 0;
    switch (how_) {
      case io::Durability::Fsync: r = ::fsync(fd_); break;
      case io::Durability::SyncFileRange:
        r = ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        break;
      case io::Durability::MsyncSync: {
        std::uint64_t len = (written_.load(std::memory_order_relaxed) + 4095) / 4096 * 4096;
        void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd_, 0);
        if (map == MAP_FAILED) { r = -1; break; }
        r = ::msync(map, len, MS_SYNC);
        int err = errno;
        ::munmap(map, len);
        errno = err;
        break;
      }
      default: r = ::fdatasync(fd_); break;
    }
    if (r != 0) error_ = errno;
  }

  std::filesystem::path path_;
  io::Durability how_;
  std::uint64_t interval_, next_;
  int fd_ = -1;
  std::atomic<int> asked_{0};  // flush requests from the timed loop
  std::atomic<int> wake_{0};   // int: the futex-native width for atomic wait
  std::atomic<bool> done_{false};
  std::atomic<std::uint64_t> written_{0};
  std::uint64_t flushes_ = 0;  // read after join
  int error_ = 0;              // read after join
  std::thread thread_;
};

template <typename T>
double median_of(const std::vector<T>& v) {
  std::vector<double> d(v.begin(), v.end());
  return median(d);
}

// Median of the per-repetition usage into the result; statistics warnings.
void fill_figures(Result& r, const std::vector<Usage>& usage, const std::vector<std::uint64_t>& io_calls) {
  std::vector<double> secs, user, sys, minf, majf, vcs, ivcs, sr, sw, sys_calls;
  for (const Usage& u : usage) {
    secs.push_back(u.seconds);
    user.push_back(u.user_s);
    sys.push_back(u.sys_s);
    minf.push_back(static_cast<double>(u.minor_faults));
    majf.push_back(static_cast<double>(u.major_faults));
    vcs.push_back(static_cast<double>(u.voluntary_ctx));
    ivcs.push_back(static_cast<double>(u.involuntary_ctx));
    sr.push_back(static_cast<double>(u.storage_read_bytes));
    sw.push_back(static_cast<double>(u.storage_write_bytes));
    sys_calls.push_back(static_cast<double>(u.syscalls_read + u.syscalls_write));
  }
  r.samples_s = secs;
  r.reps = static_cast<unsigned>(secs.size());
  r.user_s = median(user);
  r.sys_s = median(sys);
  r.minor_faults = static_cast<std::int64_t>(median(minf));
  r.major_faults = static_cast<std::int64_t>(median(majf));
  r.voluntary_ctx = static_cast<std::int64_t>(median(vcs));
  r.involuntary_ctx = static_cast<std::int64_t>(median(ivcs));
  r.storage_read_bytes = static_cast<std::uint64_t>(median(sr));
  r.storage_write_bytes = static_cast<std::uint64_t>(median(sw));
  r.io_calls = static_cast<std::uint64_t>(median_of(io_calls));
  if (!usage.empty() && usage.front().have_proc_io)
    r.extra["proc_io_syscalls"] = static_cast<std::uint64_t>(median(sys_calls));
  if (secs.empty()) return;
  Summary s = summarize(secs);
  if (s.min < kTooShortSeconds)
    r.warnings.push_back("timed repetitions too short to trust (shortest " + format_duration(s.min) +
                         " < 50 ms); use a larger --size");
  if (!s.outliers.empty())
    r.warnings.push_back("statistical outliers (" + std::to_string(s.outliers.size()) + " of " + std::to_string(s.n) +
                         " repetitions, median absolute deviation rule) may distort the figures; consider more --reps, "
                         "a quieter machine, or closing other programs");
}

std::string experiment_label(const Result& r) {
  std::string s = r.suite.empty() ? "" : r.suite + "/";
  s += r.experiment.empty() ? r.method : r.experiment + " " + r.method;
  return s;
}

Result labels_of(const FileExperiment& e) {
  Result r;
  r.suite = e.suite;
  r.experiment = e.experiment;
  r.method = e.method_label.empty() ? e.method : e.method_label;
  r.op = std::string(to_string(e.op));
  r.pattern = std::string(to_string(e.pattern));
  r.block_size = e.block_size;
  r.file_size = e.ops != 0 ? e.ops * e.block_size : e.file_size;
  r.buffer = std::string(io::to_string(e.buffer));
  r.cache = std::string(to_string(e.cache));
  r.reference = e.reference;
  r.extra["batch"] = e.batch;
  return r;
}

bool misaligned(std::size_t align, const void* p, std::uint64_t block) {
  return align > 1 && (reinterpret_cast<std::uintptr_t>(p) % align != 0 || block % align != 0);
}

// Opens `file` with the method once, untimed, to learn whether the
// experiment can run here at all: O_DIRECT refused, alignment the buffer
// or block size breaks, a durability call the method cannot make.
std::optional<std::string> preflight(const io::Method& m, const std::filesystem::path& file, io::Access access,
                                     const io::FileOptions& opts, const void* buffer, std::uint64_t block, std::uint64_t file_size,
                                     std::optional<io::Durability> sync) {
  std::unique_ptr<io::File> f;
  try {
    f = m.open(file, access, opts);
  } catch (const Error& err) {
    if (err.error_number() == EINVAL || err.error_number() == EOPNOTSUPP) return std::string(err.what());
    throw;
  }
  std::size_t align = f->alignment();
  if (opts.unaligned == io::UnalignedPolicy::Reject && misaligned(align, buffer, block))
    return "O_DIRECT needs buffer address, offset and length aligned to " + std::to_string(align) + " bytes here; " +
           (block % align != 0 ? "a " + std::to_string(block) + "-byte block is not" : "the heap buffer is not") +
           " (use an aligned buffer and a block size that is a multiple of " + std::to_string(align) + ")";
  if (opts.unaligned == io::UnalignedPolicy::Reject && align > 1 && file_size % align != 0)
    return "O_DIRECT needs lengths aligned to " + std::to_string(align) + " bytes here; a " + std::to_string(file_size) +
           "-byte file ends in a shorter call (use a file size that is a multiple of " + std::to_string(align) + ")";
  if (sync && !f->supports(*sync))
    return std::string(m.name()) + " cannot make the " + std::string(io::to_string(*sync)) + " durability call";
  f->close();
  return std::nullopt;
}

[[noreturn]] void not_verified(const Result& r, const std::filesystem::path& file, std::uint64_t offset, const char* what) {
  throw Error("verify", file.string(),
              std::string(what) + " at offset " + std::to_string(offset) + " does not match the pattern (" +
                  experiment_label(r) + "); no figure is reported for data that does not verify",
              EIO);
}

}  // namespace

Runner::Runner(RunConfig config, io::ScratchDir& scratch) : config_(std::move(config)), scratch_(scratch) {
  if (config_.reps == 0) throw UsageError("--reps 0", "at least one timed repetition is needed");
}
Runner::~Runner() = default;

// ---- file experiments --------------------------------------------------------

Result Runner::run(const FileExperiment& e) {
  Result r = labels_of(e);
  const io::Method& method = io::find_file_method(e.method);
  io::FileOptions opts = e.options;
  if (method.traits(opts).direct_optional && e.cache == CacheState::Direct) opts.direct = true;
  const io::MethodTraits traits = method.traits(opts);
  const bool direct = traits.bypasses_page_cache;
  const unsigned batch = std::max(1u, e.batch);
  const Eviction eviction = e.eviction == Eviction::Auto && config_.eviction ? *config_.eviction : e.eviction;
  auto skip = [&](std::string why) {
    r.skipped = std::move(why);
    r.reps = 0;
    if (config_.on_result) config_.on_result(r);
    return r;
  };

  if (direct) {
    r.cache = "direct";
    r.cache_method = "O_DIRECT";
    if (e.cache != CacheState::Direct && e.op == Op::Read)
      r.warnings.push_back("asked for a " + std::string(to_string(e.cache)) +
                           " cache, but O_DIRECT bypasses the page cache: recorded as direct");
  } else if (e.cache == CacheState::Direct) {
    return skip("cache 'direct' needs O_DIRECT: method direct, or io_uring; " + std::string(e.method) +
                " always goes through the page cache");
  }
  if (e.op == Op::Write && !direct) {
    r.cache = "";  // a fresh file: nothing to be warm or cold
    r.cache_method = "fresh file";
  }
  io::Availability avail = method.probe(scratch_.path());
  if (!avail.available) return skip(avail.reason);
  if (e.op == Op::Read && e.cache == CacheState::Cold && !direct && eviction == Eviction::DropCaches &&
      !can_drop_caches())
    return skip("this experiment evicts with drop_caches, which needs root (/proc/sys/vm/drop_caches is not writable)");
  if (e.op == Op::Read && e.schedule != SyncSchedule::None)
    throw UsageError("sync schedule '" + std::string(to_string(e.schedule)) + "' for a read", "sync applies to writes only");

  Plan plan = make_plan(e, config_.seed);
  r.file_size = plan.file_size;
  r.bytes = plan.file_size;
  r.ops = plan.ops;
  if (batch > 1) r.extra["latency_per"] = "call of up to " + std::to_string(batch) + " requests";
  if (config_.on_experiment) config_.on_experiment(experiment_label(r), config_.warmup + config_.reps);

  ExperimentFiles files(scratch_);
  LatencyHistogram hist;
  std::vector<Usage> usage;
  std::vector<std::uint64_t> calls;
  const std::uint64_t n_calls = (plan.ops + batch - 1) / batch;
  std::vector<io::IoRequest> requests(batch);
  const std::string stem = "exp";

  // One timed loop; the measured call is `body(call index)`.
  auto timed_loop = [&](bool timed, auto&& body) {
    if (timed && e.per_op_latency) {
      auto t = Clock::now();
      for (std::uint64_t c = 0; c < n_calls; ++c) {
        body(c);
        auto t1 = Clock::now();
        hist.record(nanoseconds(t1 - t));
        t = t1;
      }
    } else {
      for (std::uint64_t c = 0; c < n_calls; ++c) body(c);
    }
  };

  if (e.op == Op::Read) {
    io::Buffer buf(static_cast<std::size_t>(plan.block * batch), e.buffer);
    std::filesystem::path file = files.create(stem);
    write_pattern_file(file, plan.file_size, config_.seed);
    if (auto why = preflight(method, file, io::Access::Read, opts, buf.data(), plan.block, plan.file_size, std::nullopt)) return skip(*why);

    double max_resident = 0;
    std::string cache_method;
    for (unsigned rep = 0; rep < config_.warmup + config_.reps; ++rep) {
      const bool timed = rep >= config_.warmup;
      if (e.fresh_file_per_rep && rep > 0) {
        files.remove(file);
        file = files.create(stem);
        write_pattern_file(file, plan.file_size, config_.seed);
      }
      if (!direct) {
        if (e.cache == CacheState::Warm) {
          if (resident_fraction(file) < 1.0) make_warm(file);
          cache_method = "read once";
        } else {
          cache_method = make_cold(file, eviction);
        }
        if (e.fresh_file_per_rep) cache_method += ", fresh file";
      }
      auto f = method.open(file, io::Access::Read, opts);
      double resident = timed ? resident_fraction(file) : 0;
      max_resident = std::max(max_resident, resident);
      const std::uint64_t calls_before = f->counters().calls;
      std::uint64_t short_calls = 0;
      UsageMeter meter;
      meter.start();
      if (batch == 1) {
        timed_loop(timed, [&](std::uint64_t i) {
          std::size_t len = plan.length(i);
          short_calls += f->read_at(plan.offset(i), buf.span().first(len)) != len;
        });
      } else {
        timed_loop(timed, [&](std::uint64_t c) {
          std::uint64_t first = c * batch, count = std::min<std::uint64_t>(batch, plan.ops - first);
          for (std::uint64_t j = 0; j < count; ++j)
            requests[j] = io::IoRequest{io::IoRequest::Kind::Read, plan.offset(first + j),
                                        buf.span().subspan(j * plan.block, plan.length(first + j)), 0};
          f->submit(std::span(requests.data(), count));
          for (std::uint64_t j = 0; j < count; ++j) short_calls += requests[j].result != requests[j].data.size();
        });
      }
      Usage u = meter.stop();
      std::uint64_t rep_calls = f->counters().calls - calls_before;
      if (traits.library_calls) rep_calls += u.syscalls_read + u.syscalls_write;
      f->close();
      if (short_calls != 0)
        throw Error("read", file.string(),
                    std::to_string(short_calls) + " calls returned fewer bytes than the file holds (" + experiment_label(r) + ")",
                    EIO);
      // The last block read is still in the buffer: check it now (cheap, untimed).
      if (batch == 1) {
        std::uint64_t last = plan.ops - 1;
        if (!io::matches_pattern(config_.seed, plan.offset(last), buf.span().first(plan.length(last))))
          not_verified(r, file, plan.offset(last), "the last block read in a timed repetition");
      }
      if (timed) {
        usage.push_back(u);
        calls.push_back(rep_calls);
      }
      if (config_.on_repetition) config_.on_repetition(rep + 1);
    }
    // Verification: one more pass through the same method, every block checked.
    {
      auto f = method.open(file, io::Access::Read, opts);
      for (std::uint64_t i = 0; i < plan.ops; ++i) {
        std::size_t len = plan.length(i);
        auto dst = buf.span().first(len);
        if (f->read_at(plan.offset(i), dst) != len || !io::matches_pattern(config_.seed, plan.offset(i), dst))
          not_verified(r, file, plan.offset(i), ("data read by " + std::string(e.method)).c_str());
      }
      f->close();
    }
    if (!direct) {
      r.cache_method = cache_method;
      r.resident_fraction = max_resident;
      if (e.cache == CacheState::Cold && max_resident > kColdResidentLimit)
        r.warnings.push_back("not cold: " + std::to_string(static_cast<int>(max_resident * 100 + 0.5)) +
                             "% of the file was resident before a timed repetition (" + cache_method + ")");
    } else {
      r.resident_fraction = max_resident;
    }
  } else {
    // Writes: a ring of pattern bytes, generated once, is the source of every write.
    std::uint64_t ring_size = std::max(plan.block, std::min(plan.file_size, kRingBytes) / plan.block * plan.block);
    io::Buffer ring(static_cast<std::size_t>(ring_size), e.buffer);
    io::fill_pattern(config_.seed, 0, ring.span());
    auto source = [&](std::uint64_t off, std::size_t len) { return ring.span().subspan(off % ring_size, len); };

    io::Durability how = e.sync;
    if (e.schedule != SyncSchedule::None && how == io::Durability::None)
      how = traits.data_sync;
    if (e.schedule == SyncSchedule::Periodic && (how == io::Durability::Flush || how == io::Durability::None))
      return skip("a periodic flush of user-space buffers would use the File from two threads; periodic needs "
                  "fdatasync, fsync, sync_file_range or msync");
    switch (e.schedule) {
      case SyncSchedule::None: r.sync = "none"; break;
      case SyncSchedule::End: r.sync = "end:" + std::string(io::to_string(how)); break;
      case SyncSchedule::EveryWrite: r.sync = "every:" + std::string(io::to_string(how)); break;
      case SyncSchedule::Periodic:
        r.sync = "periodic-" + size_label(e.sync_interval) + ":" + std::string(io::to_string(how));
        break;
    }
    {
      std::filesystem::path probe_file = files.create(stem);
      std::optional<io::Durability> needs;
      if (e.schedule == SyncSchedule::End || e.schedule == SyncSchedule::EveryWrite) needs = how;
      auto why = preflight(method, probe_file, io::Access::ReadWrite, opts, ring.data(), plan.block, plan.file_size, needs);
      files.remove(probe_file);
      if (why) return skip(*why);
    }
    io::Buffer check(std::size_t{1} << 20, io::BufferKind::Aligned);
    std::vector<double> flushes;
    for (unsigned rep = 0; rep < config_.warmup + config_.reps; ++rep) {
      const bool timed = rep >= config_.warmup;
      std::filesystem::path file = files.create(stem);
      auto f = method.open(file, io::Access::ReadWrite, opts);
      std::optional<PeriodicFlusher> flusher;
      if (e.schedule == SyncSchedule::Periodic) flusher.emplace(file, how, e.sync_interval);
      const bool every = e.schedule == SyncSchedule::EveryWrite;
      const std::uint64_t calls_before = f->counters().calls;
      std::uint64_t written = 0;
      UsageMeter meter;
      meter.start();
      if (batch == 1) {
        timed_loop(timed, [&](std::uint64_t i) {
          std::uint64_t off = plan.offset(i);
          std::size_t len = plan.length(i);
          f->write_at(off, source(off, len));
          if (every) f->sync(how);
          if (flusher) flusher->wrote(written += len);
        });
      } else {
        timed_loop(timed, [&](std::uint64_t c) {
          std::uint64_t first = c * batch, count = std::min<std::uint64_t>(batch, plan.ops - first);
          std::uint64_t bytes = 0;
          for (std::uint64_t j = 0; j < count; ++j) {
            std::uint64_t off = plan.offset(first + j);
            std::size_t len = plan.length(first + j);
            requests[j] = io::IoRequest{io::IoRequest::Kind::Write, off, source(off, len), 0};
            bytes += len;
          }
          f->submit(std::span(requests.data(), count));
          if (every) f->sync(how);
          if (flusher) flusher->wrote(written += bytes);
        });
      }
      if (e.schedule == SyncSchedule::End) f->sync(how);
      if (flusher) flusher->finish();
      std::uint64_t rep_calls = f->counters().calls - calls_before;  // before close: close may truncate
      f->close();
      Usage u = meter.stop();
      if (flusher) rep_calls += flusher->flushes();
      // Stream methods: their write calls (including close's final flush) from the kernel's count.
      if (traits.library_calls) rep_calls += u.syscalls_read + u.syscalls_write;

      // Verify (untimed): the whole file read back with pread, against the ring.
      {
        auto v = io::find_file_method("pread").open(file, io::Access::Read);
        if (v->size() != plan.file_size)
          throw Error("verify", file.string(),
                      "written file holds " + std::to_string(v->size()) + " bytes, expected " +
                          std::to_string(plan.file_size) + " (" + experiment_label(r) + ")",
                      EIO);
        for (std::uint64_t off = 0; off < plan.file_size; off += check.size()) {
          auto part = check.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(check.size(), plan.file_size - off)));
          if (v->read_at(off, part) != part.size()) not_verified(r, file, off, "data written");
          for (std::size_t done = 0; done < part.size();) {
            std::uint64_t at = (off + done) % ring_size;
            std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(part.size() - done, ring_size - at));
            if (std::memcmp(part.data() + done, ring.data() + at, n) != 0) not_verified(r, file, off + done, "data written");
            done += n;
          }
        }
        v->close();
      }
      files.remove(file);
      if (timed) {
        usage.push_back(u);
        calls.push_back(rep_calls);
        if (flusher) flushes.push_back(static_cast<double>(flusher->flushes()));
      }
      if (config_.on_repetition) config_.on_repetition(rep + 1);
    }
    if (!flushes.empty()) r.extra["periodic_flushes"] = median(flushes);
  }

  fill_figures(r, usage, calls);
  if (e.per_op_latency && hist.count() > 0) r.latency_ns = hist.summary();
  r.verified = true;
  if (config_.on_result) config_.on_result(r);
  return r;
}

// ---- custom experiments ------------------------------------------------------

Result Runner::run(const CustomExperiment& e) {
  Result r = e.labels;
  r.samples_s.clear();
  r.warnings.clear();
  r.verified = false;
  if (r.skipped) {
    r.reps = 0;
    if (config_.on_result) config_.on_result(r);
    return r;
  }
  if (!e.timed) throw Error("run", experiment_label(r), "a custom experiment needs a timed callback", EINVAL);
  if (config_.on_experiment) config_.on_experiment(experiment_label(r), config_.warmup + config_.reps);
  std::vector<Usage> usage;
  std::vector<std::uint64_t> calls;
  Repetition last;
  for (unsigned rep = 0; rep < config_.warmup + config_.reps; ++rep) {
    const bool timed = rep >= config_.warmup;
    if (e.prepare) e.prepare();
    Repetition rr;
    Usage u;
    try {
      UsageMeter meter;
      meter.start();
      rr = e.timed();
      u = meter.stop();
    } catch (...) {
      if (e.cleanup) {
        try {
          e.cleanup();
        } catch (...) {  // the first error is the one worth reporting
        }
      }
      throw;
    }
    if (e.cleanup) e.cleanup();
    if (timed) {
      usage.push_back(u);
      calls.push_back(rr.io_calls != 0 ? rr.io_calls : u.syscalls_read + u.syscalls_write);
      last = rr;
    }
    if (config_.on_repetition) config_.on_repetition(rep + 1);
  }
  if (e.verify) {
    if (!e.verify())
      throw Error("verify", experiment_label(r), "data did not verify; no figure is reported for it", EIO);
    r.verified = true;
  }
  r.bytes = last.bytes;
  r.ops = last.ops;
  fill_figures(r, usage, calls);
  if (config_.on_result) config_.on_result(r);
  return r;
}

}  // namespace iolab::harness
