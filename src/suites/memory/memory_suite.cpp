// Larger than memory (issue 24): random 4 KiB reads and a sequential scan (256 KiB calls) of
// a file 0.5..4x (--scale full: ..16x) a memory limit, by mmap (default
// advice, and MADV_RANDOM for the random reads), buffered pread, O_DIRECT
// pread, and io_uring and libaio with O_DIRECT at QD 32. Each experiment
// runs in a child process inside a memory cgroup iolab makes for it
// (harness/memory_cgroup.h), so a small limit shows on a big machine what
// happens when the data outgrows the page cache. The child runs the
// experiment through the harness engine as every other suite does (the
// verification pass included) and sends its record back as results JSON.
//
// Every method: the same file size, limit and cache state (the file evicted
// and proven cold before each pass; O_DIRECT bypasses the cache). A random
// pass reads every block of the file once in a shuffled order, so at 2x and
// more the cache fills early in the pass and the rest runs full. Each
// record carries extra.per_second for its first timed pass (throughput,
// major faults, the group's page-cache bytes, TLB shootdowns).
#include <atomic>

#include "iolab/harness/memory_cgroup.h"
#include "per_second.h"
#include "progress_method.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using harness::CacheState;
using harness::FileExperiment;

struct MemoryMethod {
  const char* method;
  const char* label;  // in records
  bool direct;        // O_DIRECT (io_uring, libaio: at QD 32)
  io::Advice advice;
  bool random_only;
};
constexpr MemoryMethod kMemoryMethods[] = {
    {"mmap", "mmap", false, io::Advice::Normal, false},
    {"mmap", "mmap+MADV_RANDOM", false, io::Advice::Random, true},
    {"pread", "pread", false, io::Advice::Normal, false},
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

class MemorySuite final : public Suite {
 public:
  std::string_view name() const override { return "memory"; }
  std::string_view seed() const override { return "issue 24"; }
  std::string_view description() const override {
    return "larger than memory: random 4 KiB reads and 256 KiB scans of files 0.5..4x a memory cgroup's limit, by mmap "
           "(+MADV_RANDOM), pread, O_DIRECT, io_uring and libaio at QD 32, with a per-second series";
  }
  void check(const SuiteOptions& o) const override {
    // The child's own memory counts against the limit: QD 32 x 256 KiB
    // buffers are 8 MiB of it.
    if (o.memory_limit != 0 && o.memory_limit < 32 * MiB)
      throw UsageError("--memory-limit " + label(o.memory_limit),
                       "at least 32m (the child's own memory counts against it: QD 32 x 256 KiB buffers are 8 MiB)");
  }

  std::vector<harness::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const Scale s = options.scale;
    const std::uint64_t limit =
        options.memory_limit != 0 ? options.memory_limit : by_scale<std::uint64_t>(s, 32 * MiB, 64 * MiB, 256 * MiB, 256 * MiB);
    const auto ratios = by_scale<std::vector<double>>(s, {0.5}, {0.5, 2}, {0.5, 1, 2, 4}, {0.5, 1, 2, 4, 8, 16});
    std::vector<FileExperiment> table;
    std::vector<double> table_ratios;
    for (double ratio : ratios) {
      const std::uint64_t size = static_cast<std::uint64_t>(static_cast<double>(limit) * ratio) / MiB * MiB;
      for (harness::AccessPattern pattern : {harness::AccessPattern::Rand, harness::AccessPattern::Seq}) {
        for (const MemoryMethod& m : kMemoryMethods) {
          if (m.random_only && pattern != harness::AccessPattern::Rand) continue;
          FileExperiment e;
          e.suite = std::string(name());
          const bool rand = pattern == harness::AccessPattern::Rand;
          e.block_size = rand ? 4 * KiB : 256 * KiB;
          e.experiment = std::string(rand ? "random 4k reads" : "seq 256k scan") + ", file " + ratio_label(ratio) +
                         "x limit " + label(limit);
          e.method = m.method;
          e.method_label = m.label;
          e.pattern = pattern;
          e.file_size = size;
          e.options.direct = m.direct;
          e.options.mmap_advice = m.advice;
          e.options.queue_depth = 32;
          e.buffer = io::BufferKind::Aligned;  // O_DIRECT needs it; the others use the same
          e.cache = io::find_file_method(m.method).traits(e.options).bypasses_page_cache ? CacheState::Direct
                                                                                          : CacheState::Cold;
          e.eviction = kEviction;
          e.latency = false;  // a whole extra pass per record; the series shows the time course instead
          table.push_back(std::move(e));
          table_ratios.push_back(ratio);
        }
      }
    }

    std::vector<harness::Result> out;
    const harness::CgroupPlace place = harness::find_memory_cgroup();
    for (std::size_t i = 0; i < table.size(); ++i) {
      harness::Result labels = harness::labels_of(table[i]);
      labels.extra["memory_limit_bytes"] = limit;
      labels.extra["working_set_ratio"] = table_ratios[i];
      if (!place.root) {
        out.push_back(runner.skip(labels, place.why));
        continue;
      }
      out.push_back(run_limited(runner, *place.root, limit, table[i], table_ratios[i]));
    }
    return out;
  }

 private:
  // One experiment in a child inside a fresh group; the record comes back
  // as results JSON (harness/result.h's reader checks it).
  harness::Result run_limited(harness::Runner& runner, const harness::CgroupRoot& root, std::uint64_t limit,
                              const FileExperiment& e, double ratio) const {
    harness::MemoryCgroup group(root, limit);
    // The child's files go in a directory of their own inside the scratch
    // directory: every file in it is the child's, so it can be emptied when
    // the child is killed (a signal, the group's OOM killer) and its own
    // cleanup never ran.
    io::ScratchDir child_scratch(runner.scratch().path());
    const std::filesystem::path child_dir = child_scratch.path();
    auto remove_child_files = [child_dir] {
      std::error_code ec;
      for (const auto& f : std::filesystem::directory_iterator(child_dir, ec)) ::unlink(f.path().c_str());
    };
    // On a signal the directory goes too, before the scratch directory holding it is removed.
    auto remove_child_dir = [child_dir, remove_child_files] {
      remove_child_files();
      ::rmdir(child_dir.c_str());
    };
    struct Emptied {
      std::function<void()> f;
      ~Emptied() { f(); }
    } emptied{remove_child_files};
    std::string text = harness::run_in_child(group, [&]() -> std::string {
      std::atomic<std::uint64_t> bytes{0};
      memory::ProgressMethod method(io::find_file_method(e.method), bytes);
      memory::PerSecondSampler sampler(bytes, [&group] { return group.page_cache_bytes(); });
      harness::RunConfig config = runner.config();
      config.on_result = nullptr;  // the parent reports the record
      config.on_experiment = nullptr;
      config.on_pass = nullptr;
      bool sampled = false;
      config.on_pass_begin = [&](harness::PassKind kind) {
        if (kind == harness::PassKind::Timed && !sampled) sampler.start();
      };
      config.on_pass_end = [&](harness::PassKind) {
        if (sampler.running()) {
          sampler.stop();
          sampled = true;
        }
      };
      harness::Runner child(config, child_scratch);
      FileExperiment mine = e;
      mine.method_object = &method;
      harness::Result r = child.run(mine);
      r.extra["memory_limit_bytes"] = limit;
      r.extra["working_set_ratio"] = ratio;
      r.extra["cgroup"] = group.description();
      r.extra["per_second_pass"] = "the first timed pass, from its start (file cold, cache of the group empty)";
      r.extra["per_second"] = memory::to_json(sampler.samples());
      harness::Results one;
      one.results.push_back(std::move(r));
      return harness::to_json(one).dump();
    }, remove_child_dir);
    group.remove();
    harness::Results back = harness::results_from_json(nlohmann::json::parse(text), "the memory suite's child");
    if (back.results.size() != 1)
      throw Error("run", group.description(), "the child sent " + std::to_string(back.results.size()) + " records, not 1");
    return runner.report(std::move(back.results.front()));
  }
};

const MemorySuite memory_suite_instance;
const SuiteRegistration memory_registration{120, SuiteGroup::ByName, &memory_suite_instance};

}  // namespace
}  // namespace iolab::suites
