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

#include "iolab/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/parallel.h"
#include "iolab/suites/suite.h"
#include "iolab/units.h"

namespace iolab::suites {
namespace parallel {

ParallelPlan plan_for(Scale scale) {
  constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  switch (scale) {
    // region total, block, array total, element-stream cap, buffered cap (ints), worker counts
    case Scale::Tiny: return {1 * MiB, 64 * KiB, 256 * KiB, 4 * 1024, 64 * 1024, {1, 2, 4, 8}};
    case Scale::Quick: return {64 * MiB, 1 * MiB, 64 * MiB, 64 * 1024, 4 * 1024 * 1024, {1, 2, 4, 8}};
    case Scale::Default: return {256 * MiB, 1 * MiB, 256 * MiB, 256 * 1024, 16 * 1024 * 1024, {1, 2, 4, 8}};
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
std::optional<harness::Reference> paper_figure(ArrayWay way, bool write) {
  auto ref = [](std::string what, double v) { return harness::Reference{kSeedSource + (", " + what), v, "MB/s"}; };
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

harness::Result labels(const std::string& experiment, const std::string& method, bool write, unsigned workers) {
  harness::Result r;
  r.suite = "parallel";
  r.experiment = experiment;
  r.method = method;
  r.op = write ? "write" : "read";
  r.pattern = "seq";
  r.threads = workers;
  return r;
}

class ParallelSuite final : public Suite {
 public:
  std::string_view name() const override { return "parallel"; }
  std::string_view seed() const override { return "003"; }
  std::string_view description() const override {
    return "W threads write and read disjoint regions of one shared file (or a file each) with pread, mmap, "
           "O_DIRECT, io_uring; int32 arrays moved raw, encoded, per element, bulk; bandwidth vs workers";
  }

  std::vector<harness::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const ParallelPlan plan = plan_for(options.scale);
    std::vector<unsigned> threads = options.threads.empty() ? plan.threads : options.threads;
    for (unsigned t : threads)
      if (t == 0) throw UsageError("--threads 0", "a parallel run needs at least one worker");
    std::vector<harness::Result> out;
    auto emit = [&](harness::Result r) {
      if (runner.config().on_result) runner.config().on_result(r);
      out.push_back(std::move(r));
    };
    for (std::string_view method : region_methods())
      for (Layout layout : {Layout::SharedFile, Layout::FilePerWorker})
        for (unsigned w : threads) run_regions(runner, plan, std::string(method), layout, w, emit);
    for (unsigned w : threads)
      for (ArrayWay way : all_array_ways()) run_arrays(runner, plan, way, w, emit);
    add_ratios(out);
    return out;
  }

 private:
  template <typename Emit>
  static void run_regions(harness::Runner& runner, const ParallelPlan& plan, const std::string& method, Layout layout,
                          unsigned workers, Emit& emit) {
    const auto& cfg = runner.config();
    const std::uint64_t region = plan.region_total / workers / kRegionGranule * kRegionGranule;
    if (region == 0)
      throw UsageError("--threads " + std::to_string(workers),
                       "more workers than 4 KiB pages in the " + format_bytes(static_cast<double>(plan.region_total)) +
                           " file of this scale");
    const std::string experiment = std::string(to_string(layout));
    harness::Result w = labels(experiment, method, true, workers), r = labels(experiment, method, false, workers);
    for (harness::Result* x : {&w, &r}) {
      x->block_size = std::min(plan.block_size, region);
      x->file_size = region * workers;
      x->buffer = "aligned";
      x->extra["layout"] = std::string(to_string(layout));
      x->extra["workers"] = workers;
      x->extra["region_size"] = region;
    }
    w.cache = "";
    w.cache_method = "fresh file, preallocated";
    r.cache = "warm";
    r.cache_method = "written, flushed, read once";
    if (method == "direct") {
      w.cache = r.cache = "direct";
      w.cache_method = r.cache_method = "O_DIRECT";
    }
    io::Availability a = io::find_file_method(method).probe(runner.scratch().path());
    if (!a.available) {
      w.skipped = a.reason;
      r.skipped = a.reason;
      emit(std::move(w));
      emit(std::move(r));
      return;
    }
    RegionWorkload wl;
    wl.method = method;
    wl.workers = workers;
    wl.region_size = region;
    wl.block_size = plan.block_size;
    wl.layout = layout;
    RegionRun run(runner.scratch(), wl, cfg.seed);

    std::vector<PassTiming> passes;
    for (unsigned i = 0; i < cfg.warmup; ++i) run.write_pass();
    for (unsigned i = 0; i < cfg.reps; ++i) passes.push_back(run.write_pass());
    // Each pass writes the same bytes to a fresh file; the last one's files are checked region by region.
    if (!run.verify_files())
      throw Error("verify", run.files().front().string(), "a region written by " + method + " does not match the pattern");
    fill_result(w, passes);
    w.verified = true;
    emit(std::move(w));

    run.flush_files();  // reads then neither race writeback nor miss data under O_DIRECT
    passes.clear();
    for (unsigned i = 0; i < cfg.warmup; ++i) run.read_pass();
    double least_resident = 1;
    for (unsigned i = 0; i < cfg.reps; ++i) {
      if (method != "direct") {
        for (const auto& f : run.files()) least_resident = std::min(least_resident, harness::resident_fraction(f));
      }
      passes.push_back(run.read_pass());
    }
    if (!run.reads_verified())
      throw Error("verify", run.files().front().string(), "data read by " + method + " does not match the pattern");
    fill_result(r, passes);
    if (method != "direct") {
      r.resident_fraction = least_resident;
      if (least_resident < 0.95)
        r.warnings.push_back("not warm: only " + std::to_string(static_cast<int>(least_resident * 100)) +
                             "% of the file was resident before a timed repetition");
    }
    r.verified = true;
    emit(std::move(r));
  }

  template <typename Emit>
  static void run_arrays(harness::Runner& runner, const ParallelPlan& plan, ArrayWay way, unsigned workers, Emit& emit) {
    const auto& cfg = runner.config();
    io::ScratchDir& scratch = runner.scratch();
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
    harness::Result w = labels("typed-arrays", method, true, workers), r = labels("typed-arrays", method, false, workers);
    for (harness::Result* x : {&w, &r}) {
      x->block_size = per_element(way) ? 4 : way == ArrayWay::Bulk ? std::min<std::uint64_t>(region, kBulkChunkInts * 4) : region;
      x->file_size = region * workers;
      x->buffer = "heap";
      x->extra["ints_per_worker"] = n;
      x->extra["workers"] = workers;
      x->extra["file_order"] = way == ArrayWay::Raw ? "native" : "big-endian";
      if (capped)
        x->extra["capped"] = method + " moves " + std::to_string(n * workers) + " of the " + std::to_string(all_ints) +
                             " ints (one call each)";
      if (way == ArrayWay::BufferedElementStream) x->extra["stream_buffer"] = 8192;
      x->extra["io_calls_source"] = "read/write system calls of the process between the barriers (/proc/self/io)";
      x->reference = paper_figure(way, x == &w);
    }
    w.cache = "";
    w.cache_method = "fresh file, preallocated";
    r.cache = "warm";
    r.cache_method = "written just before";

    // Each worker's array: pattern bytes read as ints, so about half are negative.
    std::vector<std::vector<std::int32_t>> values(workers, std::vector<std::int32_t>(n)), got(workers, std::vector<std::int32_t>(n));
    for (unsigned k = 0; k < workers; ++k)
      io::fill_pattern(cfg.seed, k * region, std::as_writable_bytes(std::span(values[k])));
    std::filesystem::path file;
    auto fresh_file = [&] {
      if (!file.empty()) scratch.remove_file(file);
      file = scratch.create_unique_file("parallel-array-" + method);
      io::preallocate(file, region * workers);
    };
    std::vector<std::unique_ptr<IntArrayFile>> open(workers);
    std::vector<std::uint64_t> calls(workers);
    auto count_calls = [&](PassTiming& t) {
      // The kernel's count: stdio's own read/write calls happen inside fwrite/fread, out of the File's sight.
      if (t.usage.have_proc_io) t.io_calls = t.usage.syscalls_read + t.usage.syscalls_write;
      else
        for (auto c : calls) t.io_calls += c;
      t.bytes = region * workers;
      t.ops = per_element(way)        ? n * workers
              : way == ArrayWay::Bulk ? (n + kBulkChunkInts - 1) / kBulkChunkInts * workers
                                      : workers;
    };

    auto write_pass = [&] {
      fresh_file();
      PassTiming t = run_workers(
          workers, [&](unsigned k) { open[k] = std::make_unique<IntArrayFile>(way, file, io::Access::ReadWrite, n); },
          [&](unsigned k) {
            open[k]->write(k * region, values[k]);
            calls[k] = open[k]->counters().calls;
            open[k]->close();  // inside the timing: the stdio buffer's last bytes reach the kernel here
          },
          [&](unsigned k) { open[k].reset(); });
      count_calls(t);
      return t;
    };
    auto file_matches = [&] {
      auto f = io::find_file_method("pread").open(file, io::Access::Read);
      std::vector<std::byte> bytes(region);
      for (unsigned k = 0; k < workers; ++k) {
        if (f->read_at(k * region, bytes) != bytes.size() || bytes != encode_reference(way, values[k])) return false;
      }
      return true;
    };
    std::vector<PassTiming> passes;
    for (unsigned i = 0; i < cfg.warmup; ++i) write_pass();
    for (unsigned i = 0; i < cfg.reps; ++i) {
      passes.push_back(write_pass());
      if (!file_matches()) throw Error("verify", file.string(), "ints written by " + method + " are not the expected bytes");
    }
    fill_result(w, passes);
    w.verified = true;
    emit(std::move(w));

    passes.clear();
    bool reads_ok = true;
    auto read_pass = [&] {
      PassTiming t = run_workers(
          workers,
          [&](unsigned k) {
            std::fill(got[k].begin(), got[k].end(), 0);
            open[k] = std::make_unique<IntArrayFile>(way, file, io::Access::Read, n);
          },
          [&](unsigned k) {
            open[k]->read(k * region, got[k]);
            calls[k] = open[k]->counters().calls;
          },
          [&](unsigned k) {
            open[k]->close();
            open[k].reset();
          });
      for (unsigned k = 0; k < workers; ++k)
        if (got[k] != values[k]) reads_ok = false;
      count_calls(t);
      return t;
    };
    for (unsigned i = 0; i < cfg.warmup; ++i) read_pass();
    for (unsigned i = 0; i < cfg.reps; ++i) passes.push_back(read_pass());
    if (!reads_ok) throw Error("verify", file.string(), "ints read by " + method + " differ from those written");
    fill_result(r, passes);
    r.verified = true;
    scratch.remove_file(file);
    emit(std::move(r));
  }

  // How far each result is from its baseline: typed arrays against raw
  // (same op, workers), everything against one worker (same experiment,
  // method, op).
  static void add_ratios(std::vector<harness::Result>& out) {
    std::map<std::tuple<std::string, std::string, std::string, unsigned>, double> rate;
    for (const auto& r : out)
      if (!r.skipped && !r.samples_s.empty()) rate[{r.experiment, r.method, r.op, r.threads}] = r.median_mib_per_s();
    for (auto& r : out) {
      if (r.skipped || r.samples_s.empty()) continue;
      double mine = r.median_mib_per_s();
      if (auto it = rate.find({r.experiment, r.method, r.op, 1}); it != rate.end() && it->second > 0)
        r.extra["vs_1_worker"] = mine / it->second;
      if (r.experiment == "typed-arrays")
        if (auto it = rate.find({r.experiment, "raw", r.op, r.threads}); it != rate.end() && mine > 0) {
          r.extra["vs_raw"] = mine / it->second;
          r.extra["raw_is_x_faster"] = it->second / mine;
        }
    }
  }
};

const ParallelSuite instance;
const SuiteRegistration registration{90, &instance};

}  // namespace
}  // namespace iolab::suites
