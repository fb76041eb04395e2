// seed 002 #4-#6: the write path into the page cache.
// #4 pwrite of 1 KiB from a heap vs a page-aligned buffer (Java: FileChannel
//    with a heap vs a direct ByteBuffer), over several call counts; then the
//    write size swept 4 KiB..64 MiB with the total fixed, heap vs aligned
//    (the seed: "direct wins as buffers grow").
// #5 N writes of 1 KiB and of 2 KiB through mmap vs pwrite vs buffered stdio
//    (the seed: mmap "300-odd" ms, 300-399, for 1,000,000 x 1 KiB, 837 ms for x 2 KiB).
// #6 pwrite with 1 KiB and 4..20 KiB writes (4 KiB steps).
// None of these flush: like the seed's, they measure the copy into the page
// cache (the runner's `sync` field says "none").
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using harness::FileExperiment;

FileExperiment writer(std::string experiment, const char* method, std::uint64_t size, std::uint64_t count,
                      io::BufferKind buffer = io::BufferKind::Heap) {
  FileExperiment e;
  e.experiment = std::move(experiment);
  e.method = method;
  e.op = results::Op::Write;
  e.block_size = size;
  e.ops = count;
  e.file_size = size * count;
  e.buffer = buffer;
  return e;
}

std::vector<FileExperiment> write_path_experiments(const SuiteOptions& options) {
  const Scale s = options.scale;
  std::vector<FileExperiment> table;

  // #4a: 1 KiB pwrite, heap vs aligned, several call counts.
  for (std::uint64_t n : by_scale<std::vector<std::uint64_t>>(s, {1000}, {50000}, {50000},
                                                               {100000, 1000000, 10000000}))
    for (io::BufferKind b : {io::BufferKind::Heap, io::BufferKind::Aligned})
      table.push_back(writer(count_label(n) + " pwrites of 1k", "pread", 1 * KiB, n, b));

  // #4b: the write size swept with the total fixed.
  const std::uint64_t total = by_scale<std::uint64_t>(s, 1 * MiB, 32 * MiB, 128 * MiB, 1 * GiB);
  // (Every fourfold size at the full and tiny scales; by default every
  // sixteenfold, 4 KiB to 16 MiB; the quick scale 4 KiB and 1 MiB.)
  const std::uint64_t step = by_scale<std::uint64_t>(s, 4, 256, 16, 4);
  for (std::uint64_t size = 4 * KiB; size <= std::min<std::uint64_t>(64 * MiB, total); size *= step)
    for (io::BufferKind b : {io::BufferKind::Heap, io::BufferKind::Aligned})
      table.push_back(writer("pwrite " + label(total) + " in " + label(size) + " writes", "pread", size, total / size, b));

  // #5: mmap vs pwrite vs buffered stdio, 1 KiB and 2 KiB writes.
  const std::uint64_t n5 = by_scale<std::uint64_t>(s, 1000, 16000, 32000, 1000000);
  for (std::uint64_t size : by_scale<std::vector<std::uint64_t>>(s, {1 * KiB}, {1 * KiB}, {1 * KiB, 2 * KiB},
                                                                  {1 * KiB, 2 * KiB})) {
    std::string experiment = count_label(n5) + " writes of " + label(size);
    for (const char* method : {"mmap", "pread", "stdio"}) {
      FileExperiment e = writer(experiment, method, size, n5);
      if (io::find_file_method(e.method).traits().maps_file) {
        // The seed mapped the whole file once (the size known in advance).
        e.options.mmap_grow_step = static_cast<std::size_t>(size * n5);
        e.reference = published(size == 1 * KiB ? "seed 002: Java MappedByteBuffer, i7-8565U, NVMe; '300-odd' ms (300-399) for 1,000,000 x 1 KiB, "
                                                  "so 300 ms gives their rate's upper bound"
                                                : "seed 002: Java MappedByteBuffer, i7-8565U, NVMe; 837 ms for 1,000,000 x 2 KiB",
                                static_cast<double>(size * 1000000), size == 1 * KiB ? 300.0 : 837.0);
      }
      table.push_back(std::move(e));
    }
  }

  // #6: pwrite of 1 KiB and 4..20 KiB in 4 KiB steps, fixed call count.
  const std::uint64_t n6 = by_scale<std::uint64_t>(s, 256, 2000, 8000, 1000000);
  for (std::uint64_t size : by_scale<std::vector<std::uint64_t>>(
           s, {1 * KiB, 8 * KiB, 20 * KiB}, {1 * KiB, 8 * KiB, 20 * KiB},
           {1 * KiB, 4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB, 20 * KiB}, {1 * KiB, 4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB, 20 * KiB}))
    table.push_back(writer(count_label(n6) + " pwrites of 1..20k", "pread", size, n6, io::BufferKind::Aligned));

  return table;
}

const SuiteRegistration write_path_registration{
    std::make_unique<TableSuite>(catalogued("write-path"), write_path_experiments)};

}  // namespace
}  // namespace iolab::suites
