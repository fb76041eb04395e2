// The parallel workload of seed 003 (Bonachea, Dickens, Thakur 2001): W
// workers each own a disjoint contiguous region of one shared file (or a file
// of their own, like IOR's -F), write it, then read it back; and the paper's
// ways of turning an array of int32 into file bytes and back.
//
// Used by the `parallel` suite (threads) and by `iolab-mpi` (ranks): both
// time each worker from a common start after a barrier and report "first
// done" (the fastest worker) and "last done" (the slowest), elbencho-style.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/harness/result.h"
#include "iolab/harness/usage.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/suite.h"

namespace iolab::suites::parallel {

// ---------------------------------------------------------------- regions

enum class Layout {
  SharedFile,     // one file; worker w owns [w * region, (w + 1) * region)
  FilePerWorker,  // worker w owns [0, region) of its own file (IOR -F)
};
std::string_view to_string(Layout);  // "shared-file", "file-per-worker"
Layout parse_layout(std::string_view);

struct Region {
  unsigned worker = 0;
  unsigned file = 0;          // index into the run's files (0 for a shared file)
  std::uint64_t offset = 0;   // in that file
  std::uint64_t length = 0;
};

// The regions of `workers` workers of `region_size` bytes each. `alignment`
// is what the method needs for offsets and lengths (1 when nothing; the
// O_DIRECT alignment for direct). Throws UsageError for 0 workers, an empty
// region, a region that is not a multiple of `alignment`, or a total size
// that does not fit in a file offset.
std::vector<Region> plan_regions(unsigned workers, std::uint64_t region_size, Layout layout,
                                 std::size_t alignment = 1);

// The methods a region workload can use (file methods of io::registry):
// pread, mmap, direct, io_uring.
std::span<const std::string_view> region_methods();

struct RegionWorkload {
  std::string method = "pread";        // one of region_methods()
  unsigned workers = 1;
  std::uint64_t region_size = 0;       // bytes per worker
  std::uint64_t block_size = 1 << 20;  // bytes per call; the last call of a region may be shorter
  Layout layout = Layout::SharedFile;
  unsigned queue_depth = 8;            // io_uring: requests in flight per worker
  bool sync_at_end = false;            // writes: each worker fdatasyncs (mmap: msync) inside its timing
};

// What one timed pass of all workers cost. Worker times run from the common
// start (all workers released by one barrier) to that worker's end.
struct PassTiming {
  std::vector<double> worker_s;  // per worker
  double first_done_s = 0;       // fastest worker
  double last_done_s = 0;        // slowest worker: the pass's wall time
  harness::Usage usage;          // whole process, between the two barriers
  std::uint64_t io_calls = 0;    // calls that moved data, summed over workers (io::IoCounters)
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;         // requests issued, summed over workers
};

// Runs `workers` threads: prepare(w) untimed; a barrier releases every worker
// at once; timed(w); a second barrier ends the usage measurement; finish(w)
// untimed. Returns the per-worker times. An exception in any worker is
// rethrown (the first one) after all threads have joined.
PassTiming run_workers(unsigned workers, const std::function<void(unsigned)>& prepare,
                       const std::function<void(unsigned)>& timed, const std::function<void(unsigned)>& finish);

// Fills a result's figures from its timed passes: samples_s = last done per
// pass, extra {first_done_s, last_done_s (medians), first_done_samples_s},
// bytes and ops of a pass, medians of CPU, faults, context switches and I/O
// calls, and the harness's warnings (passes under 50 ms, outliers).
void fill_result(harness::Result& r, std::span<const PassTiming> passes);

// One region workload on files in `scratch`: creates the files (preallocated
// to their full size, untimed: writers through a shared map must not race to
// grow the file), then runs write and read passes. Every pass is verified
// untimed: after a write pass the files are read back and compared with the
// pattern; after a read pass every byte each worker read is compared.
class RegionRun {
 public:
  RegionRun(io::ScratchDir& scratch, RegionWorkload workload, std::uint64_t seed);
  ~RegionRun();
  RegionRun(const RegionRun&) = delete;
  RegionRun& operator=(const RegionRun&) = delete;

  // Fresh preallocated files, then every worker writes its region.
  PassTiming write_pass();
  // Every worker reads its region into its own buffer (zeroed untimed first).
  PassTiming read_pass();
  // Reads the files back (untimed) and checks every region; false on any mismatch.
  bool verify_files() const;
  // True when every read pass so far returned exactly the pattern.
  bool reads_verified() const noexcept { return reads_ok_; }
  // Flushes the files to storage (untimed), so reads after writes do not
  // compete with writeback and O_DIRECT readers see the data.
  void flush_files() const;

  const std::vector<Region>& regions() const noexcept { return regions_; }
  const std::vector<std::filesystem::path>& files() const noexcept { return files_; }
  std::uint64_t total_bytes() const noexcept;
  std::size_t alignment() const noexcept { return alignment_; }
  const RegionWorkload& workload() const noexcept { return w_; }
  // Pattern seed of a file: distinct per file, so a worker writing the wrong file fails verification.
  std::uint64_t file_seed(unsigned file) const noexcept { return seed_ + file; }

 private:
  void create_files();
  void remove_files();
  io::ScratchDir& scratch_;
  RegionWorkload w_;
  std::uint64_t seed_;
  std::size_t alignment_ = 1;
  std::vector<Region> regions_;
  std::vector<std::filesystem::path> files_;
  std::vector<io::Buffer> buffers_;  // one region-sized, page-aligned buffer per worker
  bool reads_ok_ = true;
  bool patterned_ = false;  // the buffers hold the pattern (filled by a write pass, zeroed by a read pass)
};

// -------------------------------------------------------- typed int arrays

// The paper's ways of moving an int32 array to and from a file. File order
// is big-endian (Java's DataOutputStream) for every way but Raw, which moves
// the array's own (native) bytes: "the data is already in byte form".
enum class ArrayWay {
  Raw,                    // one write of the array's bytes
  Encode,                 // manual loop to 4 big-endian bytes per int into a byte buffer, one write
  ElementStream,          // one unbuffered write(2) of 4 bytes per int (DataOutputStream on a file)
  BufferedElementStream,  // one fwrite of 4 bytes per int into an 8 KiB stdio buffer
  ArrayStream,            // append 4 bytes per int to a growing std::vector<std::byte>, one write
  Bulk,                   // vectorized byte swap in cache-sized chunks, one write per chunk
};
// Bulk converts and moves kBulkChunkInts ints (256 KiB) at a time: the
// converted chunk is still in cache when the kernel copies it, where a
// whole-array conversion would stream the array through memory twice more.
// (CPU per 64 MiB here: 64 KiB chunks 21 ms, 256 KiB 17.5 ms, raw 13.4 ms.)
inline constexpr std::size_t kBulkChunkInts = 64 * 1024;
std::span<const ArrayWay> all_array_ways();
std::string_view to_string(ArrayWay);  // "raw", "encode", "element-stream", ...
ArrayWay parse_array_way(std::string_view);
// True for the ways that make one call per element (and are capped in benchmarks).
bool per_element(ArrayWay);

// The file bytes `way` produces for `values` (untimed reference for verification).
std::vector<std::byte> encode_reference(ArrayWay way, std::span<const std::int32_t> values);

// Moves int arrays to and from one existing file with one way. Open it
// untimed; write/read are what a benchmark times.
class IntArrayFile {
 public:
  // `max_ints`: the longest array write/read will be given (scratch buffers
  // are allocated here, not in the timed calls). `stream_buffer`: the stdio
  // buffer of BufferedElementStream.
  IntArrayFile(ArrayWay way, const std::filesystem::path& path, io::Access access, std::size_t max_ints,
               std::size_t stream_buffer = 8192);
  ~IntArrayFile();
  IntArrayFile(const IntArrayFile&) = delete;
  IntArrayFile& operator=(const IntArrayFile&) = delete;

  // Writes values at byte `offset`.
  void write(std::uint64_t offset, std::span<const std::int32_t> values);
  // Reads out.size() ints from byte `offset`; throws Error on a short file.
  void read(std::uint64_t offset, std::span<std::int32_t> out);
  // Flushes stream buffers and closes; errors surface here.
  void close();

  ArrayWay way() const noexcept { return way_; }
  const io::IoCounters& counters() const noexcept;

 private:
  ArrayWay way_;
  std::unique_ptr<io::File> file_;
  std::vector<std::byte> bytes_;        // Encode
  std::vector<std::uint32_t> swapped_;  // Bulk (write): one chunk
};

// ------------------------------------------------------------ the suite

// Sizes of the suite at each scale (also printed in docs/parallel.md).
struct ParallelPlan {
  std::uint64_t region_total = 0;         // bytes of the region experiments, split among the workers
  std::uint64_t block_size = 0;
  std::uint64_t array_total = 0;          // bytes of the typed-array experiments, split among the workers
  std::uint64_t element_cap_ints = 0;     // element-stream: ints moved per pass, over all workers
  std::uint64_t buffered_cap_ints = 0;    // buffered-element-stream: the same (a call per int is slow even buffered)
  std::vector<unsigned> threads;          // default worker counts
};
ParallelPlan plan_for(Scale scale);

}  // namespace iolab::suites::parallel
