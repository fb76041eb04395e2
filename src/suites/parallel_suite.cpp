// Suite `parallel` (seed 003): W threads write and read disjoint regions of
// one shared file (or a file each), with pread, mmap, O_DIRECT and io_uring;
// then the paper's ways of moving int32 arrays, for every worker count.
// Aggregate bandwidth is bytes over "last done"; "first done" is kept too.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/runner.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/parallel.h"
#include "iolab/suites/suite.h"
#include "iolab/base/units.h"

namespace iolab::suites {
namespace parallel {

ParallelPlan plan_for(Scale scale) {
  constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  switch (scale) {
    // region total, block, array total, element-stream cap, buffered cap (ints), worker counts
    // Worker counts: 2 (this kind of machine's cores) in the quick run, 1 and 2
    // by default, up to 8 (oversubscribed here) at the full scale; a file per
    // worker beside the shared file at the tiny and full scales.
    case Scale::Tiny: return {1 * MiB, 64 * KiB, 256 * KiB, 4 * 1024, 64 * 1024, {1, 2, 4, 8}};
    // The quick scale compares the regions of the plain call and the queued one only.
    case Scale::Quick:
      return {16 * MiB, 1 * MiB, 16 * MiB, 64 * 1024, 4 * 1024 * 1024, {2}, {Layout::SharedFile}, {"pread", "io_uring"}};
    case Scale::Default: return {64 * MiB, 1 * MiB, 64 * MiB, 64 * 1024, 4 * 1024 * 1024, {1, 2}, {Layout::SharedFile}};
    case Scale::Full: return {1 * GiB, 1 * MiB, 1 * GiB, 1024 * 1024, 64 * 1024 * 1024, {1, 2, 4, 8}};
  }
  return plan_for(Scale::Default);
}

}  // namespace parallel

namespace {

using namespace parallel;
constexpr std::uint64_t kRegionGranule = 4096;  // regions are whole pages: O_DIRECT and mmap both want it
constexpr const char* kSeedSource = "seed 003: Java on an IBM SP, best over 1..64 processors";


// The paper's figures (MB/s as published, their machine): beside ours, never compared as numbers.
std::optional<results::Reference> paper_figure(ArrayWay way, bool write) {
  auto ref = [](std::string what, double v) { return results::Reference{kSeedSource + (", " + what), v, "MB/s"}; };
  switch (way) {
    case ArrayWay::Raw: return write ? ref("raw byte array write, 32 processors", 106) : ref("raw byte array read, 16 processors", 96);
    case ArrayWay::Encode: return write ? ref("encode write, 64 processors", 20) : ref("decode read, 64 processors", 30);
    case ArrayWay::ElementStream: return ref("unbuffered data stream (op not stated)", 0.00074);
    case ArrayWay::BufferedElementStream: return ref("buffered data stream (op not stated)", 0.19);
    case ArrayWay::ArrayStream: return ref("byte-array stream, 64 processors (best of the stream ways)", 7.5);
    case ArrayWay::Bulk: return std::nullopt;  // their proposal (JNI bulk I/O); no figure in the seed
  }
  return std::nullopt;
}

results::Result labels(const std::string& experiment, const std::string& method, bool write, unsigned workers) {
  results::Result r;
  r.suite = "parallel";
  r.experiment = experiment;
  r.method = method;
  r.op = write ? results::Op::Write : results::Op::Read;
  r.pattern = results::AccessPattern::Seq;
  r.threads = workers;
  return r;
}

// Typed arrays: every worker moves its int array to or from its slice of one
// file with one way. Timed: the worker's conversion and calls, and for writes
// closing its file (the stdio buffer's last bytes reach the kernel there).
class ArrayWorkload final : public harness::Workload {
 public:
  ArrayWorkload(io::ScratchDir& scratch, ArrayWay way, bool write, std::size_t ints,
                const std::vector<std::vector<std::int32_t>>& values, std::filesystem::path& file)
      : scratch_(scratch), way_(way), write_(write), n_(ints), values_(values), file_(file),
        open_(values.size()), got_(values.size()), calls_(values.size()) {}

  std::optional<std::string> setup() override {
    if (!write_) {
      for (auto& g : got_) g.assign(n_, 0);
      // Every call a worker's read moved is compared below; the write passes left this file.
      if (file_.empty()) throw Error("typed-array read", std::string(to_string(way_)), "no file was written first", EINVAL);
    }
    return std::nullopt;
  }
  void before_pass(harness::PassKind) override {
    if (!write_) return;
    if (!file_.empty()) scratch_.remove_file(file_);
    file_ = scratch_.create_unique_file("parallel-array-" + std::string(to_string(way_)));
    io::preallocate(file_, region() * values_.size());
  }
  harness::PassBody pass(harness::PassKind) override {
    harness::PassBody body;
    body.prepare = [this](unsigned k) {
      // A read must fill the array: zeroed for a full check; for a tail check
      // its first and last ints are set to what the file does not hold.
      if (!write_ && data_check() == harness::DataCheck::Full) {
        std::fill(got_[k].begin(), got_[k].end(), 0);
      } else if (!write_ && n_ > 0) {
        got_[k].front() = ~values_[k].front();
        got_[k].back() = ~values_[k].back();
      }
      open_[k] = std::make_unique<IntArrayFile>(way_, file_, write_ ? io::Access::ReadWrite : io::Access::Read, n_);
    };
    body.timed = [this](unsigned k) {
      if (write_) {
        open_[k]->write(k * region(), values_[k]);
        calls_[k] = open_[k]->counters().calls;
        open_[k]->close();
      } else {
        open_[k]->read(k * region(), got_[k]);
        calls_[k] = open_[k]->counters().calls;
      }
      return harness::WorkerTally{region(), ops_per_worker(), 0};
    };
    body.finish = [this](unsigned k) {
      open_[k]->close();
      open_[k].reset();
      if (write_) return;
      const bool same = data_check() == harness::DataCheck::Full
                            ? got_[k] == values_[k]
                            : n_ == 0 || (got_[k].front() == values_[k].front() && got_[k].back() == values_[k].back());
      if (!same)
        throw Error("verify", file_.string(), "ints read by " + std::string(to_string(way_)) + " differ from those written", EIO);
    };
    return body;
  }
  void after_pass(harness::PassKind) override {
    if (!write_) return;
    // Every write pass's file is read back and compared with the way's own
    // encoding (each region whole, or its last 4 KiB, as data_check() says),
    // a chunk at a time through one buffer (a region-sized copy and its
    // encoding, made afresh for each pass, cost more than the passes).
    auto f = io::find_file_method("pread").open(file_, io::Access::Read);
    if (readback_.empty()) readback_.resize(kReadbackBytes);
    const std::uint64_t from = harness::check_start(data_check(), region(), 4096);
    for (std::size_t k = 0; k < values_.size(); ++k)
      for (std::uint64_t at = from; at < region(); at += kReadbackBytes) {
        std::span<std::byte> chunk(readback_.data(), static_cast<std::size_t>(std::min(kReadbackBytes, region() - at)));
        std::span<const std::int32_t> ints(values_[k].data() + at / 4, chunk.size() / 4);
        if (f->read_at(k * region() + at, chunk) != chunk.size() || !matches_encoding(way_, ints, chunk))
          throw Error("verify", file_.string(),
                      "ints written by " + std::string(to_string(way_)) + " are not the expected bytes", EIO);
      }
  }
  bool records_latency() const override { return false; }  // whole arrays, not calls, are the unit: the pass is the latency
  // Arrays read and files written are compared after every pass: no verification pass.
  bool has_verification_pass() const override { return false; }
  // stdio's own read/write calls happen inside fwrite/fread: the kernel counts them.
  bool kernel_counts_calls() const override { return true; }

 private:
  std::uint64_t region() const { return n_ * 4; }
  std::uint64_t ops_per_worker() const {
    return per_element(way_) ? n_ : chunked(way_) ? (n_ + kArrayChunkInts - 1) / kArrayChunkInts : 1;
  }
  io::ScratchDir& scratch_;
  ArrayWay way_;
  bool write_;
  std::size_t n_;
  const std::vector<std::vector<std::int32_t>>& values_;
  std::filesystem::path& file_;
  std::vector<std::unique_ptr<IntArrayFile>> open_;
  std::vector<std::vector<std::int32_t>> got_;
  std::vector<std::uint64_t> calls_;
  static constexpr std::uint64_t kReadbackBytes = std::uint64_t{1} << 20;  // a multiple of 4: whole ints
  std::vector<std::byte> readback_;
};

class ParallelSuite final : public Suite {
 public:
  using Suite::Suite;

  // Before any work (the header, the scratch directory): what run_regions would refuse midway.
  void check(const SuiteOptions& options) const override {
    const ParallelPlan plan = plan_for(options.scale);
    for (unsigned t : options.threads.empty() ? plan.threads : options.threads) {
      if (t == 0) throw UsageError("--threads 0", "a parallel run needs at least one worker");
      if (plan.region_total / t / kRegionGranule == 0)
        throw UsageError("--threads " + std::to_string(t),
                         "more workers than 4 KiB pages in the " + format_bytes(static_cast<double>(plan.region_total)) +
                             " file of this scale (--scale " + std::string(to_string(options.scale)) + ")");
    }
  }

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const ParallelPlan plan = plan_for(options.scale);
    std::vector<unsigned> threads = options.threads.empty() ? plan.threads : options.threads;
    check(options);
    std::vector<results::Result> out;
    for (const std::string& method : plan.region_methods)
      for (Layout layout : plan.layouts)
        for (unsigned w : threads) run_regions(runner, plan, method, layout, w, out);
    for (unsigned w : threads)
      for (ArrayWay way : all_array_ways()) run_arrays(runner, plan, way, w, out);
    add_ratios(out);
    return out;
  }

 private:
  static void run_regions(harness::Runner& runner, const ParallelPlan& plan, const std::string& method_name,
                          Layout layout, unsigned workers, std::vector<results::Result>& out) {
    const std::uint64_t region = plan.region_total / workers / kRegionGranule * kRegionGranule;
    if (region == 0)
      throw UsageError("--threads " + std::to_string(workers),
                       "more workers than 4 KiB pages in the " + format_bytes(static_cast<double>(plan.region_total)) +
                           " file of this scale");
    const io::Method& method = io::find_file_method(method_name);
    const std::string experiment = std::string(to_string(layout));
    results::Result w = labels(experiment, method_name, true, workers), r = labels(experiment, method_name, false, workers);
    const bool direct = method.traits().bypasses_page_cache;
    for (results::Result* x : {&w, &r}) {
      x->block_size = std::min(plan.block_size, region);
      x->file_size = region * workers;
      x->buffer = io::BufferKind::Aligned;
      x->extra["layout"] = std::string(to_string(layout));
      x->extra["workers"] = workers;
      x->extra["region_size"] = region;
    }
    w.cache.reset();
    w.cache_method = "fresh file, preallocated";
    r.cache = results::CacheState::Warm;
    r.cache_method = "written, flushed, read once";
    if (direct) {
      w.cache = r.cache = results::CacheState::Direct;
      w.cache_method = r.cache_method = "O_DIRECT";
    }
    RegionSpec spec;
    spec.workers = workers;
    spec.region_size = region;
    spec.block_size = plan.block_size;
    spec.layout = layout;
    spec.options.queue_depth = 8;               // queued methods: requests in flight per worker
    spec.options.unaligned = io::UnalignedPolicy::Reject;  // never measure a hidden bounce copy
    harness::LocalTeam team(workers);
    RegionFiles files(team, &runner.scratch(), spec, "parallel-" + method_name);
    harness::WriteSource source(runner.config().seed, region, spec.block_size, io::BufferKind::Aligned);
    RegionWorkload writes(team, method, spec, results::Op::Write, files, source);
    results::Result wr = runner.run(writes, w, team);
    out.push_back(wr);
    if (wr.skipped) {
      out.push_back(runner.skip(r, *wr.skipped));
      return;
    }
    files.flush();  // reads then neither race writeback nor miss data under O_DIRECT
    RegionWorkload reads(team, method, spec, results::Op::Read, files, source);
    out.push_back(runner.run(reads, r, team));
  }

  static void run_arrays(harness::Runner& runner, const ParallelPlan& plan, ArrayWay way, unsigned workers,
                         std::vector<results::Result>& out) {
    const auto& cfg = runner.config();
    const std::uint64_t all_ints = plan.array_total / 4;
    const std::uint64_t cap = way == ArrayWay::ElementStream           ? plan.element_cap_ints
                              : way == ArrayWay::BufferedElementStream ? plan.buffered_cap_ints
                                                                       : all_ints;
    const bool capped = cap < all_ints;
    const std::size_t n = static_cast<std::size_t>(std::min(all_ints, cap) / workers);
    if (n == 0)
      throw UsageError("--threads " + std::to_string(workers), "more workers than ints in the arrays of this scale");
    const std::uint64_t region = n * 4;
    const std::string method(to_string(way));
    results::Result w = labels("typed-arrays", method, true, workers), r = labels("typed-arrays", method, false, workers);
    for (results::Result* x : {&w, &r}) {
      x->block_size = per_element(way) ? 4 : chunked(way) ? std::min<std::uint64_t>(region, kArrayChunkInts * 4) : region;
      x->file_size = region * workers;
      x->buffer = io::BufferKind::Heap;
      x->extra["ints_per_worker"] = n;
      x->extra["workers"] = workers;
      x->extra["file_order"] = way == ArrayWay::Raw ? "native" : "big-endian";
      if (capped)
        x->extra["capped"] = method + " moves " + std::to_string(n * workers) + " of the " + std::to_string(all_ints) +
                             " ints (one call each)";
      if (way == ArrayWay::BufferedElementStream) x->extra["stream_buffer"] = 8192;
      x->extra["io_calls_source"] = "read/write system calls of the process during the pass (/proc/self/io)";
      x->reference = paper_figure(way, x == &w);
    }
    w.cache.reset();
    w.cache_method = "fresh file, preallocated";
    r.cache = results::CacheState::Warm;
    r.cache_method = "written just before";

    // Each worker's array: pattern bytes read as ints, so about half are negative.
    std::vector<std::vector<std::int32_t>> values(workers, std::vector<std::int32_t>(n));
    for (unsigned k = 0; k < workers; ++k)
      io::fill_pattern(cfg.seed, k * region, std::as_writable_bytes(std::span(values[k])));
    std::filesystem::path file;
    harness::LocalTeam team(workers);
    ArrayWorkload writes(runner.scratch(), way, true, n, values, file);
    out.push_back(runner.run(writes, w, team));
    ArrayWorkload reads(runner.scratch(), way, false, n, values, file);
    out.push_back(runner.run(reads, r, team));
    if (!file.empty()) runner.scratch().remove_file(file);
  }

  // How far each result is from its baseline: typed arrays against raw
  // (same op, workers), everything against one worker (same experiment,
  // method, op).
  static void add_ratios(std::vector<results::Result>& out) {
    std::map<std::tuple<std::string, std::string, results::Op, unsigned>, double> rate;
    for (const auto& r : out)
      if (!r.skipped && !r.samples_s.empty()) rate[{r.experiment, r.method, r.op, r.threads}] = r.median_mib_per_s();
    for (auto& r : out) {
      if (r.skipped || r.samples_s.empty()) continue;
      double mine = r.median_mib_per_s();
      if (auto it = rate.find({r.experiment, r.method, r.op, 1}); it != rate.end() && it->second > 0)
        r.extra["vs_1_worker"] = mine / it->second;
      if (r.experiment == "typed-arrays")
        if (auto it = rate.find({r.experiment, std::string(to_string(ArrayWay::Raw)), r.op, r.threads}); it != rate.end() && mine > 0) {
          r.extra["vs_raw"] = mine / it->second;
          r.extra["raw_is_x_faster"] = it->second / mine;
        }
    }
  }
};

const SuiteRegistration parallel_registration{std::make_unique<ParallelSuite>(catalogued("parallel"))};

}  // namespace
}  // namespace iolab::suites
