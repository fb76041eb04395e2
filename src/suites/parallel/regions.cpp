// W workers, each owning one disjoint region of a shared file (or a file of
// its own), timed from a common start: seed 003's experiment on threads.
#include <fcntl.h>
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

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/parallel.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/base/units.h"

namespace iolab::suites::parallel {

namespace {
constexpr NameTable<Layout, 2> kLayouts{{{Layout::SharedFile, "shared-file"}, {Layout::FilePerWorker, "file-per-worker"}}};
}  // namespace

std::string_view to_string(Layout l) { return name_of(kLayouts, l); }

Layout parse_layout(std::string_view name) {
  if (auto l = value_of(kLayouts, name)) return *l;
  if (name == "shared") return Layout::SharedFile;  // short forms
  if (name == "per-worker") return Layout::FilePerWorker;
  throw UsageError("layout '" + std::string(name) + "'", "expected shared-file or file-per-worker");
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

// ---- files ---------------------------------------------------------------------

void require_free_space(const std::filesystem::path& dir, std::uint64_t bytes) {
  const auto free = io::free_space(dir);
  if (!free) return;  // unknown: the write itself will say
  if (bytes > *free)
    throw Error("files in", dir.string(),
                format_bytes(static_cast<double>(bytes)) + " needed, " + format_bytes(static_cast<double>(*free)) +
                    " free on its filesystem",
                ENOSPC);
}

RegionFiles::RegionFiles(harness::Team& team, io::ScratchDir* scratch, const RegionSpec& spec, std::string stem)
    : team_(team), scratch_(scratch), spec_(spec), stem_(std::move(stem)) {
  regions_ = plan_regions(spec.workers, spec.region_size, spec.layout, 1);
  by_worker_.resize(spec.workers);
}

RegionFiles::~RegionFiles() { remove_owned(); }

std::uint64_t RegionFiles::total_bytes() const noexcept {
  return static_cast<std::uint64_t>(spec_.workers) * spec_.region_size;
}

void RegionFiles::remove_owned() noexcept {
  for (const auto& f : owned_) {
    try {
      if (scratch_) scratch_->remove_file(f);
    } catch (...) {  // the ScratchDir removes what is left when it goes
    }
  }
  owned_.clear();
}

void RegionFiles::recreate() {
  remove_owned();
  const std::vector<unsigned> local = team_.local_workers();
  const bool coordinator = std::find(local.begin(), local.end(), 0u) != local.end();
  auto fresh = [&](const std::string& name, std::uint64_t size) {
    if (!scratch_) throw Error("create", stem_, "this process has no scratch directory to create files in", EINVAL);
    require_free_space(scratch_->path(), size);
    owned_.push_back(scratch_->create_unique_file(name));
    io::preallocate(owned_.back(), size);  // untimed; writers through a shared map never race to grow it
    return owned_.back();
  };
  if (spec_.layout == Layout::SharedFile) {
    std::filesystem::path shared = coordinator ? fresh(stem_ + "-shared", total_bytes()) : std::filesystem::path();
    shared = team_.broadcast(shared.string());
    for (auto& p : by_worker_) p = shared;
  } else {
    for (auto& p : by_worker_) p.clear();
    for (unsigned w : local) by_worker_[w] = fresh(stem_ + "-w" + std::to_string(w), spec_.region_size);
  }
}

const std::filesystem::path& RegionFiles::file_of(unsigned worker) const {
  const auto& p = by_worker_.at(worker);
  if (p.empty()) throw Error("region file", "worker " + std::to_string(worker), "not created in this process", EINVAL);
  return p;
}

void RegionFiles::fill(const harness::WriteSource& source) const {
  const std::vector<unsigned> local = team_.local_workers();
  for (unsigned w : local) {
    const Region& r = regions_[w];
    const auto& path = file_of(w);
    if (std::find(owned_.begin(), owned_.end(), path) == owned_.end()) continue;  // another process fills it
    auto f = io::find_file_method("pread").open(path, io::Access::ReadWrite);
    for (std::uint64_t done = 0; done < r.length;) {
      // Pieces that stay inside one period of the source's ring.
      std::uint64_t at = (r.offset + done) % source.period();
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(source.period() - at, r.length - done));
      f->write_at(r.offset + done, source.at(r.offset + done, n));
      done += n;
    }
    f->sync(io::Durability::Fdatasync);
    f->close();
  }
}

void RegionFiles::flush() const {
  for (const auto& p : owned_) {
    auto f = io::find_file_method("pread").open(p, io::Access::Read);
    f->sync(io::Durability::Fdatasync);
    f->close();
  }
}

// ---- the workload ------------------------------------------------------------------

struct RegionWorkload::Worker {
  harness::RequestPlan plan;
  std::unique_ptr<harness::ReadSlots> slots;
  std::unique_ptr<io::File> file;
  harness::LoopOutcome outcome;
  bool wrote = false;  // this pass's timed part ran to its end: only then is the region's data checked
};

RegionWorkload::RegionWorkload(harness::Team& team, const io::Method& method, const RegionSpec& spec, results::Op op,
                               RegionFiles& files, const harness::WriteSource& source)
    : team_(team), method_(method), spec_(spec), op_(op), files_(files), source_(source) {
  if (spec.block_size == 0) throw UsageError("block size 0", "must be at least one byte");
  traits_ = method_.traits(spec_.options);
}

RegionWorkload::~RegionWorkload() = default;

std::optional<std::string> RegionWorkload::setup() {
  // Every process asks; all must agree that the method can run.
  std::optional<std::string> why;
  if (op_ == results::Op::Write) files_.recreate();
  io::Availability a = method_.probe(files_.file_of(team_.local_workers().front()).parent_path());
  if (!a.available) why = a.reason;
  if (!why) {
    io::Availability o = method_.supports_options(spec_.options, files_.file_of(team_.local_workers().front()).parent_path());
    if (!o.available) why = o.reason;
  }
  if (!why && traits_.needs_alignment) {
    // The alignment is the file's own (statx DIOALIGN, then the device); every region and block must honour it.
    unsigned w = team_.local_workers().front();
    auto probe = method_.open(files_.file_of(w), io::Access::Read, spec_.options);
    alignment_ = probe->alignment();
    probe->close();
    if (spec_.block_size % alignment_ != 0 || spec_.region_size % alignment_ != 0)
      why = "O_DIRECT needs every region and block to be a multiple of " + std::to_string(alignment_) +
            " bytes here; " + size_label(spec_.block_size) + " blocks of " + size_label(spec_.region_size) +
            " regions are not";
  }
  if (!team_.all(!why)) return why ? why : std::optional<std::string>("another process cannot run " + std::string(method_.name()));
  workers_.resize(spec_.workers);
  const unsigned slots = traits_.queued ? std::max(1u, spec_.options.queue_depth) : 1;
  for (unsigned w : team_.local_workers()) {
    auto wk = std::make_unique<Worker>();
    const Region& r = files_.region_of(w);
    wk->plan = harness::make_plan(op_, r.offset, r.length, spec_.block_size, spec_.pattern, spec_.seed + w);
    if (op_ == results::Op::Read)
      wk->slots = std::make_unique<harness::ReadSlots>(slots, std::min(spec_.block_size, r.length), io::BufferKind::Aligned);
    workers_[w] = std::move(wk);
  }
  return std::nullopt;
}

void RegionWorkload::before_pass(harness::PassKind kind) {
  if (op_ == results::Op::Write) {
    files_.recreate();  // a fresh file for every pass: rewriting cached pages would measure something else
    return;
  }
  if (traits_.bypasses_page_cache) return;
  for (const auto& f : files_.owned()) {
    double r = harness::resident_fraction(f);
    if (r < results::thresholds::kWarmResidentMin) {
      harness::make_warm(f);
      r = harness::resident_fraction(f);
    }
    if (kind == harness::PassKind::Timed) least_resident_ = std::min(least_resident_, r);
  }
}

harness::PassBody RegionWorkload::pass(harness::PassKind kind) {
  harness::PassBody body;
  const bool write = op_ == results::Op::Write;
  body.prepare = [this, write](unsigned w) {
    Worker& wk = *workers_[w];
    wk.outcome = {};
    wk.wrote = false;
    wk.file = method_.open(files_.file_of(w), write ? io::Access::ReadWrite : io::Access::Read, spec_.options);
    // The buffers every request will use (io_uring's fixed buffers pin them once; others ignore it).
    std::span<std::byte> buffers[] = {write ? source_.buffer() : wk.slots->buffer()};
    wk.file->register_buffers(buffers);
  };
  body.timed = [this, kind, write](unsigned w) {
    Worker& wk = *workers_[w];
    LatencyHistogram* hist = kind == harness::PassKind::Latency ? &latency(w) : nullptr;
    if (!write) {
      wk.outcome = harness::read_pass(*wk.file, traits_.queued, wk.plan, *wk.slots, kind, hist, source_);
      wk.file->close();  // timed, as for a single worker (a mapping's unmap is the reading's cost)
      return wk.outcome.tally;
    }
    wk.outcome = harness::write_pass(*wk.file, traits_.queued, wk.plan, source_, kind, hist, io::FlushPolicy{}, nullptr);
    const std::uint64_t before = wk.file->counters().calls;
    if (spec_.sync_at_end) wk.file->sync(traits_.data_sync);
    wk.outcome.tally.io_calls += wk.file->counters().calls - before;
    wk.file->close();
    wk.wrote = true;
    return wk.outcome.tally;
  };
  body.finish = [this, kind, write](unsigned w) {
    Worker& wk = *workers_[w];
    if (wk.file) wk.file->close();
    wk.file.reset();
    const Region& r = files_.region_of(w);
    const auto& path = files_.file_of(w);
    if (write) {
      // Each worker checks its own region after every write pass (all of it or
      // its last block, as data_check() says): untimed, in parallel. A worker
      // that did not write (it failed, or another worker failed to open and
      // the pass was not run) has nothing to check: the failure is the report.
      if (!wk.wrote) return;
      if (auto bad = source_.mismatch(path, r.offset, r.length, data_check()))
        throw Error("verify", path.string(),
                    "byte at offset " + std::to_string(*bad) + " written by worker " + std::to_string(w) + " with " +
                        std::string(method_.name()) + " does not match what was written",
                    EIO);
      return;
    }
    if (wk.outcome.short_calls != 0)
      throw Error("read", path.string(),
                  std::to_string(wk.outcome.short_calls) + " calls of worker " + std::to_string(w) +
                      " returned fewer bytes than its region holds (the file is shorter than the regions)",
                  EIO);
    if (wk.outcome.bad_offset)
      throw Error("verify", path.string(),
                  "data read by " + std::string(method_.name()) + " at offset " + std::to_string(*wk.outcome.bad_offset) +
                      " does not match what was written",
                  EIO);
    // The last block read (by a plain loop or a queue) is still in its buffer: check it too.
    if (kind != harness::PassKind::Verify && !source_.matches(wk.outcome.last_offset, wk.outcome.last_block))
      throw Error("verify", path.string(),
                  "the last block read by worker " + std::to_string(w) + " does not match what was written", EIO);
  };
  return body;
}

results::LatencySource RegionWorkload::latency_source() const {
  return traits_.queued ? results::LatencySource::EveryRequest : results::LatencySource::EveryCall;
}

void RegionWorkload::describe(results::Result& r) const {
  r.threads = spec_.workers;
  r.pattern = spec_.pattern;
  if (traits_.queued) r.queue_depth = std::max(1u, spec_.options.queue_depth);
  if (op_ == results::Op::Read && !traits_.bypasses_page_cache && !files_.owned().empty()) {
    r.resident_fraction = least_resident_;
    if (least_resident_ < results::thresholds::kWarmResidentMin)
      r.warn(results::WarningKind::NotWarm,
             "not warm: only " + std::to_string(static_cast<int>(least_resident_ * 100)) +
                 "% of the file was resident before a timed pass",
             {std::to_string(static_cast<int>(least_resident_ * 100)) + "% resident"});
  }
}

}  // namespace iolab::suites::parallel
