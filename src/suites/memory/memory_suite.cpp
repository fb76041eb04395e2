// Larger than memory (issue 24): random 4 KiB reads and a sequential scan (256 KiB calls) of
// a file 0.5..4x (--scale full: ..16x) a memory limit, by mmap (default
// advice, and MADV_RANDOM for the random reads), buffered pread, O_DIRECT
// pread, and io_uring and libaio with O_DIRECT at QD 32; and sequential
// 256 KiB writes of such a file by mmap stores and by pwrite, flushed at the
// end, so the dirty data outgrows the limit. Each experiment runs in a child
// process inside a memory cgroup iolab makes for it
// (harness/memory_cgroup.h), so a small limit shows on a big machine what
// happens when the data outgrows the page cache. The child runs the
// experiment through the harness engine as every other suite does (the
// verification pass included) and sends its record back as results JSON.
//
// Every method: the same file size, limit and cache state. Up to 1x the
// file is evicted and proven cold before each pass (O_DIRECT bypasses the
// cache), and the series shows the cache filling. Past the limit (reads of
// a file larger than it) every method starts its timed pass from the
// group's page cache proven full of the file (CacheState::Full, as the
// decision's past-memory column does: the room the limit, filled by reads
// of the file): a method that reads 20 MiB/s from a cold file would
// otherwise never fill a 128 MiB cache in its pass and measure the cold
// test again (issue 40). A random pass reads every block of the file twice
// (two shuffled rounds), so the working set is read more than once and at
// 0.5x and 1x the second round finds what the first left cached, or until a
// time bound. One timed pass per record, whatever --reps says: a pass is
// seconds long. Each record carries extra.per_second for its timed pass
// (throughput, major faults, the group's page-cache bytes, TLB shootdowns),
// the counters per byte that say why, and when the cache was full
// (cache_full_at_s: 0 when full before the pass, else to 100 ms).
#include <atomic>

#include "child_files.h"
#include "counters.h"
#include "iolab/harness/memory_cgroup.h"
#include "per_second.h"
#include "progress_method.h"
#include "seed_common.h"
#include "time_bound.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using results::CacheState;
using harness::FileExperiment;

struct MemoryMethod {
  const char* method;
  const char* label;  // in records
  bool direct;        // O_DIRECT (io_uring, libaio: at QD 32)
  io::Advice advice;
  bool random_only;
  bool tiny_past_limit = false;  // the tests' tiny scale measures past the limit with this one alone (random reads)
};
constexpr MemoryMethod kMemoryMethods[] = {
    {"mmap", "mmap", false, io::Advice::Normal, false},
    {"mmap", "mmap+MADV_RANDOM", false, io::Advice::Random, true},
    {"pread", "pread", false, io::Advice::Normal, false, true},
    {"direct", "direct", true, io::Advice::Normal, false},
    {"io_uring", "io_uring", true, io::Advice::Normal, false},
    {"libaio", "libaio", true, io::Advice::Normal, false},
};

// 0.5 -> "0.5", 4 -> "4".
std::string ratio_label(double r) {
  std::string s = std::to_string(r);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

// The time bounds of one pass, by scale: a random read pass (timed, and the
// verification pass) ends at its bound if it has not read its two rounds.
struct Bounds {
  double timed_s, verify_s;
};

// The group's page cache is full at 85% of the limit (the child's own
// buffers and plan hold the rest), as CacheState::Full's proof says.
constexpr double kCacheFullShare = 0.85;

class MemorySuite final : public Suite {
 public:
  using Suite::Suite;

  void check(const SuiteOptions& o) const override {
    // The child's own memory counts against the limit: QD 32 x 256 KiB
    // buffers are 8 MiB of it.
    if (o.memory_limit)
      harness::check_memory_limit(*o.memory_limit, 32 * MiB, "--memory-limit " + label(*o.memory_limit),
                                  "the child's own memory counts against it: QD 32 x 256 KiB buffers are 8 MiB");
  }

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const Scale s = options.scale;
    // Default 128 MiB (files 64 MiB .. 512 MiB): at 256 MiB the default run took 5 min 36 s under
    // load 11 here, over the 3 minutes; at 128 MiB 3 min 35 s (docs/suites.md).
    const std::uint64_t limit =
        options.memory_limit ? *options.memory_limit : by_scale<std::uint64_t>(s, 32 * MiB, 64 * MiB, 128 * MiB, 256 * MiB);
    // Tiny (tests): past the limit, one random pread from a full cache only.
    const auto ratios = by_scale<std::vector<double>>(s, {0.5, 2}, {0.5, 2}, {0.5, 1, 2, 4}, {0.5, 1, 2, 4, 8, 16});
    auto in_table = [s](double ratio, const MemoryMethod& m, results::AccessPattern pattern) {
      return s != Scale::Tiny || ratio <= 1 ||
             (pattern == results::AccessPattern::Rand && m.tiny_past_limit);
    };
    // Writes: the dirty data past the limit is the point, so tiny (tests) writes 2x.
    const auto write_ratios = by_scale<std::vector<double>>(s, {2}, {0.5, 2}, {0.5, 1, 2, 4}, {0.5, 1, 2, 4, 8, 16});
    const Bounds bounds = by_scale<Bounds>(s, {2, 2}, {1.5, 1}, {1.5, 1}, {10, 5});
    auto size_of = [limit](double ratio) {
      return static_cast<std::uint64_t>(static_cast<double>(limit) * ratio) / MiB * MiB;
    };
    std::vector<FileExperiment> table;
    std::vector<double> table_ratios;
    for (double ratio : ratios) {
      for (results::AccessPattern pattern : {results::AccessPattern::Rand, results::AccessPattern::Seq}) {
        for (const MemoryMethod& m : kMemoryMethods) {
          if (m.random_only && pattern != results::AccessPattern::Rand) continue;
          if (!in_table(ratio, m, pattern)) continue;
          FileExperiment e;
          e.suite = std::string(name());
          const bool rand = pattern == results::AccessPattern::Rand;
          e.block_size = rand ? 4 * KiB : 256 * KiB;
          e.experiment = std::string(rand ? "random 4k reads" : "seq 256k scan") + ", file " + ratio_label(ratio) +
                         "x limit " + label(limit);
          e.method = m.method;
          e.method_label = m.label;
          e.pattern = pattern;
          e.file_size = size_of(ratio);
          e.rounds = rand ? kRandomRounds : 1;
          e.options.direct = m.direct;
          e.options.mmap_advice = m.advice;
          e.options.queue_depth = 32;
          e.buffer = io::BufferKind::Aligned;  // O_DIRECT needs it; the others use the same
          // Past the limit, every method from the group's cache full of the file (O_DIRECT beside it).
          e.cache = ratio > 1 ? CacheState::Full
                    : io::find_file_method(m.method).traits(e.options).bypasses_page_cache ? CacheState::Direct
                                                                                            : CacheState::Cold;
          e.eviction = kEviction;
          e.latency = false;  // a whole extra pass per record; the series shows the time course instead
          table.push_back(std::move(e));
          table_ratios.push_back(ratio);
        }
      }
    }
    // Writes past the limit: a fresh file each pass, read back and compared
    // after it (the harness's write check), flushed at the end by the
    // method's own data sync (msync for the mapping, fdatasync for pwrite).
    for (double ratio : write_ratios) {
      for (auto [method, method_label] : {std::pair{"mmap", "mmap stores"}, std::pair{"pread", "pwrite"}}) {
        FileExperiment e;
        e.suite = std::string(name());
        e.op = results::Op::Write;
        e.pattern = results::AccessPattern::Seq;
        e.block_size = 256 * KiB;
        e.experiment = "seq 256k writes, flushed at the end, file " + ratio_label(ratio) + "x limit " + label(limit);
        e.method = method;
        e.method_label = method_label;
        e.file_size = size_of(ratio);
        e.sync = io::FlushPolicy{io::FlushSchedule::End, io::Durability::None, 0};
        e.buffer = io::BufferKind::Aligned;
        e.latency = false;
        table.push_back(std::move(e));
        table_ratios.push_back(ratio);
      }
    }

    std::vector<results::Result> out;
    const harness::CgroupPlace place = harness::find_memory_cgroup();
    for (std::size_t i = 0; i < table.size(); ++i) {
      results::Result labels = harness::labels_of(table[i]);
      labels.extra["memory_limit_bytes"] = limit;
      labels.extra["working_set_ratio"] = table_ratios[i];
      if (!place.root) {
        out.push_back(runner.skip(labels, place.why));
        continue;
      }
      out.push_back(run_limited(runner, *place.root, limit, table[i], table_ratios[i], bounds));
    }
    return out;
  }

 private:
  static constexpr unsigned kRandomRounds = 2;

  // One experiment in a child inside a fresh group; the record comes back
  // as results JSON (results/record.h's reader checks it).
  results::Result run_limited(harness::Runner& runner, const harness::CgroupRoot& root, std::uint64_t limit,
                              const FileExperiment& e, double ratio, Bounds bounds) const {
    harness::MemoryCgroup group(root, limit);
    // The child's files go in a directory of their own (child_files.h).
    io::ScratchDir child_scratch(runner.scratch().path());
    const std::filesystem::path child_dir = child_scratch.path();
    struct Emptied {
      std::filesystem::path dir;
      ~Emptied() { memory::remove_child_files(dir); }
    } emptied{child_dir};
    const bool random_reads = e.op == results::Op::Read && e.pattern == results::AccessPattern::Rand;
    std::string text = harness::run_in_child(group, [&]() -> std::string {
      std::atomic<std::uint64_t> bytes{0};
      memory::ProgressMethod method(io::find_file_method(e.method), bytes);
      memory::PerSecondSampler sampler(bytes, [&group] { return group.page_cache_bytes(); },
                                       static_cast<std::uint64_t>(kCacheFullShare * static_cast<double>(limit)));
      memory::TimeBound bound;
      harness::RunConfig config = memory::unreported(runner.config());  // the parent reports the record
      // One timed pass, whatever --reps says: a pass is seconds long, starts
      // cold, and its series is the time course (the record's reps say 1).
      config.reps = 1;
      config.warmup = 0;
      config.min_time = 0;
      bool sampled = false, timed_stopped = false, verify_stopped = false, verified_before = false;
      std::uint64_t verify_from = 0, verified_bytes = 0;
      // The figures below are the first Verify pass's (before timing); the
      // engine's Verify pass after timing checks again and is bounded alike.
      config.on_pass_begin = [&](harness::PassKind kind) {
        if (kind == harness::PassKind::Verify) {
          verify_from = bytes.load();
          if (random_reads) bound.arm(bounds.verify_s);
        }
        if (kind == harness::PassKind::Timed && !sampled) {
          sampler.start();
          if (random_reads) bound.arm(bounds.timed_s);
        }
      };
      config.on_pass_end = [&](harness::PassKind kind) {
        const bool hit = bound.disarm();
        if (kind == harness::PassKind::Verify && !verified_before) {
          verified_bytes = bytes.load() - verify_from;
          verify_stopped = hit;
          verified_before = true;
        }
        if (sampler.running()) {
          sampler.stop();
          sampled = true;
          timed_stopped = hit;
        }
      };
      harness::Runner child(config, child_scratch);
      FileExperiment mine = e;
      mine.method_object = &method;
      if (random_reads) mine.stop = &bound.flag();
      const bool full = mine.cache == CacheState::Full;
      if (full) mine.memory_group = &group, mine.cache_room = limit;
      results::Result r = child.run(mine);
      r.extra["memory_limit_bytes"] = limit;
      r.extra["working_set_ratio"] = ratio;
      r.extra["cgroup"] = group.description();
      r.extra["per_second_pass"] = full ? "the timed pass, from its start (the group's page cache proven full of the file)"
                                        : "the timed pass, from its start (file cold, cache of the group empty)";
      nlohmann::json series = memory::to_json(sampler.samples());
      if (random_reads && !r.skipped) {
        r.extra["rounds_planned"] = kRandomRounds;
        r.extra["time_bound_s"] = bounds.timed_s;
        r.extra["stopped_at_time_bound"] = timed_stopped;
        r.extra["working_set_reads"] = r.file_size ? static_cast<double>(r.bytes) / static_cast<double>(r.file_size) : 0.0;
        r.extra["verify_time_bound_s"] = bounds.verify_s;
        r.extra["verified_bytes"] = verified_bytes;
        r.extra["verified_fraction"] =
            r.file_size ? static_cast<double>(verified_bytes) / static_cast<double>(r.file_size) : 0.0;
        r.extra["verify_stopped_at_time_bound"] = verify_stopped;
      }
      if (!r.skipped) {
        memory::add_counters(r, series);
        // Full: proven before the pass (cache_full_fraction >= cache_full_min, else skipped).
        const std::optional<double> full_at = full ? std::optional<double>(0.0) : sampler.cache_full_at_s();
        r.extra["cache_full_at_s"] = full_at ? nlohmann::json(*full_at) : nlohmann::json(nullptr);
        r.extra["cache_full_at_resolution_s"] =
            static_cast<double>(memory::PerSecondSampler::kTickNs) / 1e9;
        if (!full_at && e.op == results::Op::Read && ratio >= 1 && !e.options.direct) {
          r.extra["cache_never_full"] = true;
          r.warn(results::WarningKind::Note,
                 "the group's page cache never held " + std::to_string(static_cast<int>(kCacheFullShare * 100)) +
                     "% of the limit during the timed pass: the pass did not reach past memory, so it is no "
                     "past-memory figure (left out of the curve)");
        }
      }
      r.extra["per_second"] = std::move(series);
      results::Results one;
      one.results.push_back(std::move(r));
      return results::to_json(one).dump();
    }, [child_dir] { memory::remove_child_dir(child_dir); });
    group.remove();
    results::Results back = results::results_from_json(nlohmann::json::parse(text), "the memory suite's child");
    if (back.results.size() != 1)
      throw Error("run", group.description(), "the child sent " + std::to_string(back.results.size()) + " records, not 1");
    return runner.report(std::move(back.results.front()));
  }
};

const SuiteRegistration memory_registration{std::make_unique<MemorySuite>(catalogued("memory"))};

}  // namespace
}  // namespace iolab::suites
