// seed 002 #7: copy a file with every copy method. The seed: transferTo
// (zero copy; sendfile on Linux) 3,700 ms vs a 4 KiB stream copy 6,221 ms
// for a 2 GB file.
//
// The source is warm (resident, checked with mincore before every
// pass). Each pass copies into a new destination file, which is checked
// after the pass against the source's pattern: whole after the first pass of
// each repetition, its length and last 4 KiB after the others
// (harness::DataCheck). Without a flush, a copy ends when the data is in the page
// cache as dirty pages (as the seed's did: transferTo does not force); the
// "+ fdatasync" variant also waits for the destination to reach the device,
// inside the timed region.
#include <memory>

#include "iolab/results/thresholds.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;

struct CopyWay {
  const char* method;       // io copy method, the name in results
  std::size_t buffer_size;  // read/write buffer, splice pipe, mmap_write chunk; 0 = the method's own
  io::BufferKind buffer;
  const char* java;  // the seed's counterpart with a published figure, or nullptr
  double java_ms;
};
constexpr CopyWay kWays[] = {
    {"readwrite", 4096, io::BufferKind::Heap, "FileInputStream/FileOutputStream, 4096-byte array", 6221},
    {"readwrite", 1 << 20, io::BufferKind::Aligned, nullptr, 0},
    {"sendfile", 0, io::BufferKind::Aligned, "FileChannel.transferTo", 3700},
    {"copy_file_range", 0, io::BufferKind::Aligned, nullptr, 0},
    {"splice", 1 << 20, io::BufferKind::Aligned, nullptr, 0},
    {"mmap_write", 1 << 20, io::BufferKind::Aligned, nullptr, 0},
};

// Bytes one call moves at most: what tells the two read/write loops apart.
std::uint64_t chunk_of(const io::CopyMethod& method, const CopyWay& way, std::uint64_t size) {
  std::uint64_t limit = method.traits().max_call_bytes;
  return limit != 0 ? std::min(size, limit) : way.buffer_size;
}

struct Source {
  std::filesystem::path path;
  std::uint64_t size = 0;
};

Custom copy_experiment(harness::Runner& runner, std::string suite, const Source& src, const CopyWay& way,
                       bool flush) {
  struct State {
    io::ScratchDir* scratch;
    std::filesystem::path to;
    std::unique_ptr<io::CopyEnds> ends;  // its buffer made once; opened untimed before each copy, which closes the destination
    double resident = 1.0;  // the source's, the lowest seen before a repetition
    bool all_verified = true;
    unsigned verified = 0;
  };
  auto st = std::make_shared<State>();
  st->scratch = &runner.scratch();
  const io::CopyMethod& method = io::find_copy_method(way.method);
  io::CopyOptions options;
  if (way.buffer_size != 0) options.buffer_size = way.buffer_size;
  options.buffer = way.buffer;
  options.flush = flush;

  Custom custom;
  harness::CustomExperiment& c = custom.experiment;
  c.labels.suite = std::move(suite);
  c.labels.experiment = "copy " + label(src.size) + (flush ? " + fdatasync" : ", no flush");
  c.labels.method = way.method;
  c.labels.op = results::Op::Copy;
  c.labels.block_size = chunk_of(method, way, src.size);
  c.labels.file_size = src.size;
  // Only a method with a user-space buffer has a buffer kind.
  c.labels.buffer = method.traits().user_space_buffer ? std::optional(way.buffer) : std::nullopt;
  c.labels.cache = results::CacheState::Warm;
  c.labels.cache_method = "read once";
  if (flush) c.labels.sync = io::FlushPolicy{io::FlushSchedule::End, io::Durability::Fdatasync, 0};
  c.labels.extra = {{"destination", flush ? "written back to the device (fdatasync inside the timed region)"
                                          : "left as dirty page-cache pages, not flushed"}};
  if (way.java != nullptr && !flush)
    c.labels.reference = published(std::string("seed 002: Java ") + way.java + ", i7-8565U, NVMe; " +
                                       std::to_string(static_cast<int>(way.java_ms)) + " ms for 2 GB",
                                   static_cast<double>(2 * GiB), way.java_ms);

  const Source source = src;
  c.prepare = [st, source, options] {
    if (!st->to.empty()) st->scratch->remove_file(st->to);  // drops its dirty pages: nothing left to write back
    st->to = st->scratch->create_unique_file("copy-dst");
    if (harness::resident_fraction(source.path) < 1.0) harness::make_warm(source.path);
    st->resident = std::min(st->resident, harness::resident_fraction(source.path));
    if (!st->ends) st->ends = std::make_unique<io::CopyEnds>(options);
    st->ends->open(source.path, st->to);
  };
  // Timed: the copy's calls, the flush when asked, and closing the destination.
  c.timed = [st, &method, options] {
    io::CopyStats stats = method.copy(*st->ends, options);
    return harness::Repetition{stats.bytes, 1, stats.calls};
  };
  // The destination's length, and its bytes against the source's pattern:
  // all of them or the last 4 KiB, as the engine asks.
  c.cleanup = [st, source](harness::DataCheck check) {
    st->ends->close();
    const bool same = file_matches_pattern(st->to, source.size, kCustomSeed, 0, check);
    st->all_verified = st->all_verified && same;
    ++st->verified;
  };
  c.verify = [st] { return st->all_verified && st->verified > 0; };
  custom.finish = [st](results::Result& r) {
    st->ends.reset();
    if (!st->to.empty()) st->scratch->remove_file(st->to);
    st->to.clear();
    if (!r.skipped) {
      r.resident_fraction = st->resident;  // of the source; the lowest seen before a repetition
      if (st->resident < results::thresholds::kWarmResidentMin)
        r.warn(results::WarningKind::SourceNotResident,
               "the source was not fully resident before a pass (" + std::to_string(static_cast<int>(st->resident * 100)) +
                   "%): the copy read some of it from the device");
    }
  };
  return custom;
}

class CopySuite final : public Suite {
 public:
  using Suite::Suite;

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    Source src;
    src.size = by_scale<std::uint64_t>(options.scale, 4 * MiB, 16 * MiB, 64 * MiB, 2 * GiB);
    src.path = runner.scratch().create_unique_file("copy-src");
    write_pattern_file(src.path, src.size, kCustomSeed);
    harness::make_warm_from_disk(src.path);  // as every warm file starts

    std::vector<results::Result> out;
    // (The quick scale copies without the flush only.)
    for (bool flush : {false, true}) {
      if (flush && options.scale == Scale::Quick) continue;
      for (const CopyWay& way : kWays) {
        const io::CopyMethod& m = io::find_copy_method(way.method);
        io::Availability a = m.probe(runner.scratch().path());
        Custom custom = copy_experiment(runner, std::string(name()), src, way, flush);
        if (!a.available) {
          out.push_back(skipped(runner, custom.experiment.labels, a.reason));
          continue;
        }
        results::Result r = run_custom(runner, custom);
        out.push_back(std::move(r));
      }
    }
    runner.scratch().remove_file(src.path);
    return out;
  }
};

const SuiteRegistration copy_registration{std::make_unique<CopySuite>(catalogued("copy"))};

}  // namespace
}  // namespace iolab::suites
