// seed 001: read one whole file sequentially with 1 KiB, 1 MiB and 10 MiB
// buffers through every read path, warm and cold (the quick scale: the
// seed's four paths, warm, 1 KiB and 1 MiB).
//
// Java -> here: FileInputStream.read(byte[]) -> unbuffered stdio (one read(2)
// per call); FileChannel.read into a heap ByteBuffer -> read(2) into a heap
// buffer; into a direct ByteBuffer -> read(2) into a page-aligned buffer;
// MappedByteBuffer.get(byte[]) -> mmap, copied out in buffer-size chunks.
// iostream (4 KiB buffer, the BufferedInputStream analogue) and io_uring are
// ours. The seed's three runs read 1.73 GB in 318 ms at best (5.4 GB/s, more
// than its SSD): its figures are page-cache (warm) figures, so they stand
// beside our warm runs only.
#include <algorithm>
#include <array>

#include "iolab/harness/job.h"
#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using results::CacheState;
using harness::FileExperiment;

// The seed's file: 1,818,681 reads of 1 KiB, 1,777 of 1 MiB, 178 of 10 MiB.
constexpr std::uint64_t kSeedFileBytes = 1818681 * KiB;

struct Published {
  std::uint64_t buffer;
  double stream_ms, nio_heap_ms, nio_direct_ms, mmap_ms;  // means of the seed's three runs
};
constexpr std::array<Published, 3> kPublished{{
    {1 * KiB, 4696.7, 4794.3, 4654.0, 732.3},
    {1 * MiB, 1130.0, 458.0, 318.0, 755.0},
    {10 * MiB, 1265.7, 921.0, 511.3, 838.3},
}};

struct ReadPath {
  harness::MethodVariant variant;
  const char* java;       // the seed's counterpart, "" when none
  double Published::*ms;  // its published time
  bool at_default = true; // run at the default scale (all run at tiny and full)
};

io::FileOptions stream_buffer(std::size_t bytes) {
  io::FileOptions o;
  o.stream_buffer = bytes;
  return o;
}
io::FileOptions queue_depth(unsigned qd) {
  io::FileOptions o;
  o.queue_depth = qd;
  return o;
}

const std::array<ReadPath, 7> kPaths{{
    {{"iostream", "", stream_buffer(4096), io::BufferKind::Heap}, "", nullptr},
    {{"stdio", kStdioUnbuffered, stream_buffer(0), io::BufferKind::Heap}, "FileInputStream.read(byte[])", &Published::stream_ms},
    {{"syscall", "", {}, io::BufferKind::Heap}, "FileChannel.read, heap ByteBuffer", &Published::nio_heap_ms},
    {{"syscall", "", {}, io::BufferKind::Aligned}, "FileChannel.read, direct ByteBuffer", &Published::nio_direct_ms},
    {{"mmap", "", {}, io::BufferKind::Heap}, "MappedByteBuffer.get(byte[])", &Published::mmap_ms},
    // io_uring at one request in flight (a verdict on the depth, not the method) and at 32.
    {{"io_uring", "", queue_depth(1), io::BufferKind::Aligned}, "", nullptr, false},
    {{"io_uring", "", queue_depth(32), io::BufferKind::Aligned}, "", nullptr},
}};

std::vector<FileExperiment> seq_read_experiments(const SuiteOptions& options) {
  const std::uint64_t size = by_scale<std::uint64_t>(options.scale, 2 * MiB, 16 * MiB, 64 * MiB, kSeedFileBytes);
  // The matrix: cache x buffer size x read path, every path reading the whole file.
  // The quick scale is a first look: the seed's own four paths, warm (its
  // figures are page-cache figures), at 1 KiB and 1 MiB.
  const bool quick = options.scale == Scale::Quick;
  harness::Matrix m;
  m.ops = {results::Op::Read};
  m.caches = quick ? std::vector{CacheState::Warm} : std::vector{CacheState::Warm, CacheState::Cold};
  for (const Published& p : kPublished) m.block_sizes.push_back(p.buffer);
  m.block_sizes.erase(m.block_sizes.begin());  // the default axis value
  if (quick) m.block_sizes.pop_back();
  m.file_size = size;
  m.eviction = kEviction;
  for (const ReadPath& path : kPaths)
    if (quick ? path.ms != nullptr : options.scale != Scale::Default || path.at_default)
      m.methods.push_back(path.variant);
  std::vector<FileExperiment> table = harness::expand(m);
  for (FileExperiment& e : table) {
    e.experiment = "read " + label(size) + " file, " + label(e.block_size) + " buffer, " +
                   std::string(results::to_string(e.cache));
    // The seed's figures are page-cache figures (see the top of this file).
    const ReadPath& path = *std::find_if(kPaths.begin(), kPaths.end(), [&](const ReadPath& p) {
      return p.variant.method == e.method && p.variant.label == e.method_label && p.variant.buffer == e.buffer &&
             p.variant.options.queue_depth == e.options.queue_depth;
    });
    const Published& p = *std::find_if(kPublished.begin(), kPublished.end(),
                                       [&](const Published& x) { return x.buffer == e.block_size; });
    if (e.cache == CacheState::Warm && path.ms != nullptr)
      e.reference = published(std::string("seed 001: Java ") + path.java + ", i7-8750H, SSD; " +
                                  std::to_string(static_cast<int>(p.*path.ms + 0.5)) + " ms for 1.73 GB",
                              static_cast<double>(kSeedFileBytes), p.*path.ms);
  }
  return table;
}

const SuiteRegistration seq_read_registration{
    std::make_unique<TableSuite>(catalogued("seq-read"), seq_read_experiments)};

}  // namespace
}  // namespace iolab::suites
