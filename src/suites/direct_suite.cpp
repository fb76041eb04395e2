// seed 002 #8: direct I/O (O_DIRECT, bypassing the page cache; the seed only
// pointed at a JNI library) vs buffered pread/pwrite, reading and writing
// 4 KiB..1 MiB blocks, and random 4 KiB O_DIRECT reads kept 32 deep by
// io_uring vs one at a time.
//
// Reads: O_DIRECT ("direct") vs buffered from an evicted file ("cold") and
// from a resident one ("warm"). Writes: O_DIRECT vs buffered into the page
// cache ("none") vs buffered with a final fdatasync ("end:fdatasync"); an
// O_DIRECT write is on the device when the call returns (in its write-back
// cache: no flush of that is asked for). Small blocks at one request in
// flight are slow on a real device, so below the full scale each experiment
// moves at most `cap` blocks (its file is then cap blocks long); the
// experiment name gives the count.
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using harness::CacheState;
using harness::FileExperiment;

class DirectSuite final : public Suite {
 public:
  std::string_view name() const override { return "direct"; }
  std::string_view seed() const override { return "002 #8"; }
  std::string_view description() const override {
    return "O_DIRECT vs buffered pread/pwrite (cold, warm, + fdatasync), 4 KiB..1 MiB; random 4 KiB O_DIRECT io_uring qd32 vs qd1";
  }

  std::vector<harness::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const Scale s = options.scale;
    const std::uint64_t size = by_scale<std::uint64_t>(s, 2 * MiB, 64 * MiB, 256 * MiB, 1 * GiB);
    // Most blocks per experiment (0 = the whole file).
    const std::uint64_t cap = by_scale<std::uint64_t>(s, 64, 512, 2048, 0);
    const auto blocks = by_scale<std::vector<std::uint64_t>>(s, {4 * KiB, 1 * MiB}, {4 * KiB, 1 * MiB},
                                                             {4 * KiB, 64 * KiB, 1 * MiB},
                                                             {4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB});
    std::vector<FileExperiment> table;
    auto base = [&](std::uint64_t bs, harness::Op op) {
      FileExperiment e;
      e.suite = std::string(name());
      e.op = op;
      e.block_size = bs;
      e.file_size = size;
      e.buffer = io::BufferKind::Aligned;  // O_DIRECT needs it; the buffered runs use the same
      std::uint64_t whole = size / bs;
      e.ops = cap != 0 && cap < whole ? cap : whole;
      if (op == harness::Op::Write) e.file_size = e.ops * bs;
      return e;
    };

    for (std::uint64_t bs : blocks) {
      struct Read {
        const char* method;
        CacheState cache;
      };
      for (Read r : {Read{"direct", CacheState::Direct}, Read{"pread", CacheState::Cold}, Read{"pread", CacheState::Warm}}) {
        FileExperiment e = base(bs, harness::Op::Read);
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
        FileExperiment e = base(bs, harness::Op::Write);
        e.experiment = "seq write " + label(bs) + " x " + count_label(e.ops);
        e.method = w.method;
        e.method_label = w.label;
        e.cache = io::find_file_method(w.method).traits().bypasses_page_cache ? CacheState::Direct : CacheState::Warm;
        if (w.sync != io::Durability::None) e.sync = harness::SyncPolicy{harness::FlushSchedule::End, w.sync, 0};
        table.push_back(std::move(e));
      }
    }

    // Random 4 KiB O_DIRECT reads: one in flight vs 32 in flight.
    const std::uint64_t rand_ops = by_scale<std::uint64_t>(s, 256, 1024, 2048, 65536);
    struct Deep {
      const char* method;
      const char* label;
      unsigned depth;
    };
    for (Deep d : {Deep{"direct", "direct qd1", 1}, Deep{"io_uring", "io_uring qd1", 1}, Deep{"io_uring", "io_uring qd32", 32}}) {
      FileExperiment e = base(4 * KiB, harness::Op::Read);
      // Every block of a rand_ops-block file once, in a shuffled order.
      e.experiment = "random 4k O_DIRECT reads x " + count_label(rand_ops);
      e.method = d.method;
      e.method_label = d.label;
      e.pattern = harness::AccessPattern::Rand;
      e.ops = rand_ops;
      e.cache = CacheState::Direct;
      e.options.direct = true;
      e.options.queue_depth = d.depth;
      table.push_back(std::move(e));
    }

    std::vector<harness::Result> out;
    run_all(runner, table, out);
    return out;
  }
};

const DirectSuite instance;
const SuiteRegistration registration{60, &instance};

}  // namespace
}  // namespace iolab::suites
