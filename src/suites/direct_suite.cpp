// seed 002 #8: direct I/O (O_DIRECT, bypassing the page cache; the seed only
// pointed at a JNI library) vs buffered pread/pwrite, reading and writing
// 4 KiB..1 MiB blocks, and the queue-depth curve of random 4 KiB O_DIRECT
// reads: io_uring and libaio at depths 1..128 (one thread, that many requests
// in flight) beside as many threads of O_DIRECT pread (one request each);
// records carry extra.total_depth, latency is per request.
//
// Reads: O_DIRECT ("direct") vs buffered from an evicted file ("cold") and
// from a resident one ("warm"). Writes: O_DIRECT vs buffered into the page
// cache ("none") vs buffered with a final fdatasync ("end:fdatasync"); an
// O_DIRECT write is on the device when the call returns (in its write-back
// cache: no flush of that is asked for). Small blocks at one request in
// flight are slow on a real device, so below the full scale each experiment
// moves at most `cap` blocks (its file is then cap blocks long); the
// experiment name gives the count.
#include "iolab/harness/job.h"
#include "iolab/suites/parallel.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using results::CacheState;
using harness::FileExperiment;

class DirectSuite final : public Suite {
 public:
  using Suite::Suite;

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const Scale s = options.scale;
    const std::uint64_t size = by_scale<std::uint64_t>(s, 2 * MiB, 16 * MiB, 64 * MiB, 1 * GiB);
    // Most blocks per experiment (0 = the whole file).
    const std::uint64_t cap = by_scale<std::uint64_t>(s, 64, 512, 2048, 0);
    const auto blocks = by_scale<std::vector<std::uint64_t>>(s, {4 * KiB, 1 * MiB}, {1 * MiB},
                                                             {4 * KiB, 64 * KiB, 1 * MiB},
                                                             {4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB});
    std::vector<FileExperiment> table;
    auto base = [&](std::uint64_t bs, results::Op op) {
      FileExperiment e;
      e.suite = std::string(name());
      e.op = op;
      e.block_size = bs;
      e.file_size = size;
      e.buffer = io::BufferKind::Aligned;  // O_DIRECT needs it; the buffered runs use the same
      std::uint64_t whole = size / bs;
      e.ops = cap != 0 && cap < whole ? cap : whole;
      if (op == results::Op::Write) e.file_size = e.ops * bs;
      return e;
    };

    for (std::uint64_t bs : blocks) {
      struct Read {
        const char* method;
        CacheState cache;
      };
      for (Read r : {Read{"direct", CacheState::Direct}, Read{"pread", CacheState::Cold}, Read{"pread", CacheState::Warm}}) {
        FileExperiment e = base(bs, results::Op::Read);
        e.experiment = "seq read " + label(bs) + " x " + count_label(e.ops);
        e.method = r.method;
        e.cache = r.cache;
        e.eviction = kEviction;
        table.push_back(std::move(e));
      }
    }
    for (std::uint64_t bs : blocks) {
      struct Write {
        const char* method;
        const char* label;
        io::Durability sync;
      };
      for (Write w : {Write{"direct", "", io::Durability::None}, Write{"pread", "", io::Durability::None},
                      Write{"pread", "pread+fdatasync", io::Durability::Fdatasync}}) {
        FileExperiment e = base(bs, results::Op::Write);
        e.experiment = "seq write " + label(bs) + " x " + count_label(e.ops);
        e.method = w.method;
        e.method_label = w.label;
        e.cache = io::find_file_method(w.method).traits().bypasses_page_cache ? CacheState::Direct : CacheState::Warm;
        if (w.sync != io::Durability::None) e.sync = io::FlushPolicy{io::FlushSchedule::End, w.sync, 0};
        table.push_back(std::move(e));
      }
    }

    std::vector<results::Result> out;
    run_all(runner, table, out);

    // The queue-depth curve fio users plot by hand: random 4 KiB O_DIRECT
    // reads at each total depth, by io_uring and libaio (one thread, that
    // many requests in flight) and by that many threads of O_DIRECT pread
    // (one request each). Every block of a rand_ops-block file once, in a
    // shuffled order; latency per request, from submission to completion.
    const std::uint64_t rand_ops = by_scale<std::uint64_t>(s, 256, 1024, 2048, 65536);
    const auto depths = by_scale<std::vector<unsigned>>(s, {1, 4}, {1, 32}, {1, 16, 64}, {1, 2, 4, 8, 16, 32, 64, 128});
    const std::string curve = "QD curve: random 4k O_DIRECT reads x " + count_label(rand_ops);
    table.clear();
    harness::Matrix m;
    io::FileOptions direct;
    direct.direct = true;
    m.methods = {{"io_uring", "", direct, std::nullopt}, {"libaio", "", direct, std::nullopt}};
    m.ops = {results::Op::Read};
    m.patterns = {results::AccessPattern::Rand};
    m.block_sizes = {4 * KiB};
    m.ops_per_rep = rand_ops;
    m.caches = {CacheState::Direct};
    m.queue_depths = depths;
    for (FileExperiment& e : harness::expand(m)) {
      e.suite = std::string(name());
      e.experiment = curve;
      table.push_back(std::move(e));
    }
    for (const FileExperiment& e : table) {
      results::Result r = runner.run(e);
      r.extra["total_depth"] = e.options.queue_depth;  // the curve's x: requests in flight
      out.push_back(std::move(r));
    }
    for (unsigned threads : depths) out.push_back(threaded_reads(runner, curve, rand_ops, threads));
    return out;
  }

 private:
  // `threads` workers of O_DIRECT pread, one request in flight each, over
  // their own slices of one file (read untimed first by nobody: O_DIRECT).
  results::Result threaded_reads(harness::Runner& runner, const std::string& experiment, std::uint64_t blocks,
                                 unsigned threads) const {
    results::Result labels;
    labels.suite = std::string(name());
    labels.experiment = experiment;
    labels.method = "direct";
    labels.op = results::Op::Read;
    labels.pattern = results::AccessPattern::Rand;
    labels.block_size = 4 * KiB;
    labels.file_size = blocks / threads * threads * 4 * KiB;
    labels.buffer = io::BufferKind::Aligned;
    labels.cache = CacheState::Direct;
    labels.cache_method = "O_DIRECT";
    labels.queue_depth = 1;  // per thread
    labels.extra["total_depth"] = threads;
    if (blocks / threads == 0) return runner.skip(labels, "more threads than blocks in the file");
    parallel::RegionSpec spec;
    spec.workers = threads;
    spec.region_size = blocks / threads * 4 * KiB;
    spec.block_size = 4 * KiB;
    spec.pattern = results::AccessPattern::Rand;
    spec.seed = runner.config().seed;
    harness::LocalTeam team(threads);
    parallel::RegionFiles files(team, &runner.scratch(), spec, "qd-curve");
    harness::WriteSource source(runner.config().seed, spec.region_size, spec.block_size, io::BufferKind::Aligned);
    files.recreate();
    files.fill(source);
    parallel::RegionWorkload reads(team, io::find_file_method("direct"), spec, results::Op::Read, files, source);
    return runner.run(reads, labels, team);
  }
};

const SuiteRegistration direct_registration{std::make_unique<DirectSuite>(catalogued("direct"))};

}  // namespace
}  // namespace iolab::suites
