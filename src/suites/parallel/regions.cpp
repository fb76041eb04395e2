// W workers, each owning one disjoint region of a shared file (or a file of
// its own), timed from a common start: seed 003's experiment on threads.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "iolab/error.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/parallel.h"
#include "iolab/units.h"

namespace iolab::suites::parallel {

std::string_view to_string(Layout l) { return l == Layout::SharedFile ? "shared-file" : "file-per-worker"; }

Layout parse_layout(std::string_view name) {
  if (name == "shared-file" || name == "shared") return Layout::SharedFile;
  if (name == "file-per-worker" || name == "per-worker") return Layout::FilePerWorker;
  throw UsageError("layout '" + std::string(name) + "'", "expected shared-file or file-per-worker");
}

std::span<const std::string_view> region_methods() {
  static constexpr std::string_view names[] = {"pread", "mmap", "direct", "io_uring"};
  return names;
}

std::vector<Region> plan_regions(unsigned workers, std::uint64_t region_size, Layout layout, std::size_t alignment) {
  if (workers == 0) throw UsageError("0 workers", "a parallel run needs at least one worker");
  if (region_size == 0) throw UsageError("region size 0", "each worker needs a region of at least one byte");
  if (alignment == 0) alignment = 1;
  if (region_size % alignment != 0)
    throw UsageError("region size " + std::to_string(region_size),
                     "not a multiple of the O_DIRECT alignment (" + std::to_string(alignment) +
                         " bytes): every worker's offset and length must be aligned");
  // Offsets are off_t: the end of the last region must fit in a signed 64-bit offset.
  constexpr std::uint64_t kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (region_size > kMaxOffset / workers)
    throw UsageError(std::to_string(workers) + " workers x " + std::to_string(region_size) + " bytes",
                     "the total size overflows a file offset");
  std::vector<Region> regions(workers);
  for (unsigned w = 0; w < workers; ++w) {
    regions[w].worker = w;
    regions[w].length = region_size;
    if (layout == Layout::SharedFile) {
      regions[w].file = 0;
      regions[w].offset = static_cast<std::uint64_t>(w) * region_size;
    } else {
      regions[w].file = w;
      regions[w].offset = 0;
    }
  }
  return regions;
}

PassTiming run_workers(unsigned workers, const std::function<void(unsigned)>& prepare,
                       const std::function<void(unsigned)>& timed, const std::function<void(unsigned)>& finish) {
  if (workers == 0) throw UsageError("0 workers", "a parallel run needs at least one worker");
  using clock = std::chrono::steady_clock;
  harness::UsageMeter meter(harness::UsageMeter::Scope::Process);
  harness::Usage usage;
  clock::time_point start;
  // The completion steps run once, on one thread, while every worker waits:
  // the clock starts when the last worker arrives, and usage stops after the
  // last worker is done, so opening and closing files stay outside both.
  auto on_start = [&]() noexcept {
    meter.start();
    start = clock::now();
  };
  auto on_end = [&]() noexcept { usage = meter.stop(); };
  std::barrier begin(static_cast<std::ptrdiff_t>(workers), on_start);
  std::barrier end(static_cast<std::ptrdiff_t>(workers), on_end);
  std::vector<clock::time_point> done(workers);
  std::vector<std::exception_ptr> errors(workers);
  std::atomic<bool> failed{false};

  auto body = [&](unsigned w) {
    try {
      prepare(w);
    } catch (...) {
      errors[w] = std::current_exception();
      failed = true;
    }
    begin.arrive_and_wait();
    if (!failed.load()) {
      try {
        timed(w);
      } catch (...) {
        errors[w] = std::current_exception();
        failed = true;
      }
    }
    done[w] = clock::now();
    end.arrive_and_wait();
    try {
      finish(w);  // closes files even after a failure
    } catch (...) {
      if (!errors[w]) errors[w] = std::current_exception();
      failed = true;
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(workers);
  std::exception_ptr spawn_error;
  for (unsigned w = 1; w < workers; ++w) {
    try {
      threads.emplace_back(body, w);
    } catch (...) {
      // Workers that could not start leave both barriers, so the ones running are not stranded.
      spawn_error = std::current_exception();
      failed = true;
      for (unsigned missing = w; missing < workers; ++missing) {
        begin.arrive_and_drop();
        end.arrive_and_drop();
      }
      break;
    }
  }
  body(0);  // the calling thread is worker 0
  for (auto& t : threads) t.join();
  if (spawn_error) std::rethrow_exception(spawn_error);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);

  PassTiming t;
  t.usage = usage;
  t.worker_s.resize(workers);
  for (unsigned w = 0; w < workers; ++w) t.worker_s[w] = std::chrono::duration<double>(done[w] - start).count();
  t.first_done_s = *std::min_element(t.worker_s.begin(), t.worker_s.end());
  t.last_done_s = *std::max_element(t.worker_s.begin(), t.worker_s.end());
  return t;
}

namespace {

// A region's blocks as one batch of requests (io_uring submits them together).
std::vector<io::IoRequest> block_requests(io::IoRequest::Kind kind, const Region& r, std::span<std::byte> data,
                                          std::uint64_t block) {
  std::vector<io::IoRequest> out;
  for (std::uint64_t pos = 0; pos < r.length; pos += block) {
    std::size_t n = static_cast<std::size_t>(std::min(block, r.length - pos));
    out.push_back({kind, r.offset + pos, data.subspan(static_cast<std::size_t>(pos), n), 0});
  }
  return out;
}

io::FileOptions options_for(const RegionWorkload& w) {
  io::FileOptions o;
  o.queue_depth = std::max(1u, w.queue_depth);
  o.unaligned = io::UnalignedPolicy::Reject;  // never measure a hidden bounce copy
  return o;
}

void check_method(std::string_view method) {
  auto names = region_methods();
  if (std::find(names.begin(), names.end(), method) == names.end()) {
    std::string known;
    for (auto n : names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw UsageError("method '" + std::string(method) + "'", "not a region method; known: " + known);
  }
}

std::uint64_t physical_memory() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace

RegionRun::RegionRun(io::ScratchDir& scratch, RegionWorkload workload, std::uint64_t seed)
    : scratch_(scratch), w_(std::move(workload)), seed_(seed) {
  check_method(w_.method);
  if (w_.block_size == 0) throw UsageError("block size 0", "must be at least one byte");
  regions_ = plan_regions(w_.workers, w_.region_size, w_.layout, 1);
  const std::uint64_t total = total_bytes();
  // Every worker reads into a buffer of its own region: they must fit in memory, with room to spare.
  if (std::uint64_t ram = physical_memory(); ram > 0 && total > ram / 2)
    throw UsageError(format_bytes(static_cast<double>(total)) + " over all workers",
                     "the workers' buffers would take more than half of RAM (" + format_bytes(static_cast<double>(ram)) + ")");
  struct statvfs fs {};
  if (::statvfs(scratch_.path().c_str(), &fs) == 0) {
    std::uint64_t avail = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (total > avail)
      throw UsageError(format_bytes(static_cast<double>(total)) + " of files",
                       "more than the " + format_bytes(static_cast<double>(avail)) + " free in " + scratch_.path().string());
  }
  create_files();
  try {
    if (w_.method == "direct") {
      // The alignment is the file's own (statx DIOALIGN, then the device); every region and block must honour it.
      auto probe = io::find_file_method("direct").open(files_[0], io::Access::Read, options_for(w_));
      alignment_ = probe->alignment();
      probe->close();
      if (w_.block_size % alignment_ != 0)
        throw UsageError("block size " + std::to_string(w_.block_size),
                         "not a multiple of the O_DIRECT alignment (" + std::to_string(alignment_) + " bytes)");
      regions_ = plan_regions(w_.workers, w_.region_size, w_.layout, alignment_);
    }
    buffers_.reserve(w_.workers);
    for (unsigned w = 0; w < w_.workers; ++w)
      buffers_.emplace_back(static_cast<std::size_t>(w_.region_size), io::BufferKind::Aligned);
  } catch (...) {
    remove_files();  // no destructor runs for a constructor that throws
    throw;
  }
}

RegionRun::~RegionRun() {
  try {
    remove_files();
  } catch (...) {
    // The ScratchDir removes what is left when it goes.
  }
}

std::uint64_t RegionRun::total_bytes() const noexcept { return static_cast<std::uint64_t>(w_.workers) * w_.region_size; }

void RegionRun::create_files() {
  std::string stem = "parallel-" + w_.method;
  if (w_.layout == Layout::SharedFile) {
    files_.push_back(scratch_.create_unique_file(stem + "-shared"));
    io::preallocate(files_.back(), total_bytes());  // untimed; writers through a shared map never race to grow it
  } else {
    for (unsigned w = 0; w < w_.workers; ++w) {
      files_.push_back(scratch_.create_unique_file(stem + "-w" + std::to_string(w)));
      io::preallocate(files_.back(), w_.region_size);
    }
  }
}

void RegionRun::remove_files() {
  for (const auto& f : files_) scratch_.remove_file(f);
  files_.clear();
}

PassTiming RegionRun::write_pass() {
  // A fresh file for every pass: rewriting pages already cached would measure something else.
  remove_files();
  create_files();
  const auto& method = io::find_file_method(w_.method);
  const io::FileOptions options = options_for(w_);
  const bool uring = w_.method == "io_uring";
  std::vector<std::unique_ptr<io::File>> open(w_.workers);
  std::vector<std::vector<io::IoRequest>> batches(w_.workers);
  std::vector<std::uint64_t> calls_before(w_.workers), calls(w_.workers), ops(w_.workers);

  auto prepare = [&](unsigned w) {
    const Region& r = regions_[w];
    auto data = buffers_[w].span();
    if (!patterned_) io::fill_pattern(file_seed(r.file), r.offset, data);  // a read pass zeroed it
    open[w] = method.open(files_[r.file], io::Access::ReadWrite, options);
    if (uring) batches[w] = block_requests(io::IoRequest::Kind::Write, r, data, w_.block_size);
    calls_before[w] = open[w]->counters().calls;
  };
  auto timed = [&](unsigned w) {
    const Region& r = regions_[w];
    io::File& f = *open[w];
    auto data = buffers_[w].span();
    std::uint64_t n_ops = 0;
    if (uring) {
      f.submit(batches[w]);
      n_ops = batches[w].size();
    } else {
      for (std::uint64_t pos = 0; pos < r.length; pos += w_.block_size, ++n_ops) {
        std::size_t n = static_cast<std::size_t>(std::min(w_.block_size, r.length - pos));
        f.write_at(r.offset + pos, data.subspan(static_cast<std::size_t>(pos), n));
      }
    }
    if (w_.sync_at_end) f.sync(w_.method == "mmap" ? io::Durability::MsyncSync : io::Durability::Fdatasync);
    ops[w] = n_ops;
  };
  auto finish = [&](unsigned w) {
    if (!open[w]) return;
    calls[w] = open[w]->counters().calls - calls_before[w];
    open[w]->close();
    open[w].reset();
  };
  PassTiming t = run_workers(w_.workers, prepare, timed, finish);
  patterned_ = true;
  for (unsigned w = 0; w < w_.workers; ++w) {
    t.io_calls += calls[w];
    t.ops += ops[w];
  }
  t.bytes = total_bytes();
  return t;
}

PassTiming RegionRun::read_pass() {
  patterned_ = false;
  const auto& method = io::find_file_method(w_.method);
  const io::FileOptions options = options_for(w_);
  const bool uring = w_.method == "io_uring";
  std::vector<std::unique_ptr<io::File>> open(w_.workers);
  std::vector<std::vector<io::IoRequest>> batches(w_.workers);
  std::vector<std::uint64_t> calls_before(w_.workers), calls(w_.workers), ops(w_.workers);
  std::vector<char> ok(w_.workers, 1);

  auto prepare = [&](unsigned w) {
    const Region& r = regions_[w];
    auto data = buffers_[w].span();
    // Zeroed: a read that moved nothing cannot pass for the pattern left by the write pass.
    std::memset(data.data(), 0, data.size());
    open[w] = method.open(files_[r.file], io::Access::Read, options);
    if (uring) batches[w] = block_requests(io::IoRequest::Kind::Read, r, data, w_.block_size);
    calls_before[w] = open[w]->counters().calls;
  };
  auto short_read = [&](const Region& r, std::uint64_t at, std::size_t got, std::size_t want) {
    return Error("read", files_[r.file].string(),
                 "short read: " + std::to_string(got) + " of " + std::to_string(want) + " bytes at offset " +
                     std::to_string(at) + " (the file is shorter than the regions)",
                 EIO);
  };
  auto timed = [&](unsigned w) {
    const Region& r = regions_[w];
    io::File& f = *open[w];
    auto data = buffers_[w].span();
    std::uint64_t n_ops = 0;
    if (uring) {
      f.submit(batches[w]);
      for (const auto& q : batches[w])
        if (q.result != q.data.size()) throw short_read(r, q.offset, q.result, q.data.size());
      n_ops = batches[w].size();
    } else {
      for (std::uint64_t pos = 0; pos < r.length; pos += w_.block_size, ++n_ops) {
        std::size_t n = static_cast<std::size_t>(std::min(w_.block_size, r.length - pos));
        std::size_t got = f.read_at(r.offset + pos, data.subspan(static_cast<std::size_t>(pos), n));
        if (got != n) throw short_read(r, r.offset + pos, got, n);
      }
    }
    ops[w] = n_ops;
  };
  auto finish = [&](unsigned w) {
    if (!open[w]) return;
    calls[w] = open[w]->counters().calls - calls_before[w];
    open[w]->close();
    open[w].reset();
    // Verified after the second barrier: outside every worker's timing.
    const Region& r = regions_[w];
    ok[w] = io::matches_pattern(file_seed(r.file), r.offset, buffers_[w].span()) ? 1 : 0;
  };
  PassTiming t = run_workers(w_.workers, prepare, timed, finish);
  for (unsigned w = 0; w < w_.workers; ++w) {
    t.io_calls += calls[w];
    t.ops += ops[w];
    if (!ok[w]) reads_ok_ = false;
  }
  t.bytes = total_bytes();
  return t;
}

bool RegionRun::verify_files() const {
  // Each region checked by its own thread: verification is untimed but should not dominate the run.
  std::vector<char> ok(w_.workers, 0);
  const auto& pread = io::find_file_method("pread");
  auto check = [&](unsigned w) {
    const Region& r = regions_[w];
    auto f = pread.open(files_[r.file], io::Access::Read);
    io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(r.length, 1 << 20)), io::BufferKind::Aligned);
    for (std::uint64_t pos = 0; pos < r.length;) {
      auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), r.length - pos)));
      if (f->read_at(r.offset + pos, part) != part.size()) return;
      if (!io::matches_pattern(file_seed(r.file), r.offset + pos, part)) return;
      pos += part.size();
    }
    f->close();
    ok[w] = 1;
  };
  run_workers(w_.workers, [](unsigned) {}, check, [](unsigned) {});
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

void RegionRun::flush_files() const {
  for (const auto& p : files_) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw Error("open", p.string(), errno);
    int r = ::fdatasync(fd);
    int err = errno;
    ::close(fd);
    if (r != 0) throw Error("fdatasync", p.string(), err);
  }
}

}  // namespace iolab::suites::parallel
