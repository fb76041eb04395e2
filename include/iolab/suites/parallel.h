// The parallel workload of seed 003 (Bonachea, Dickens, Thakur 2001): W
// workers each own a disjoint contiguous region of one shared file (or a file
// of their own, like IOR's -F), write it, then read it back; and the paper's
// ways of turning an array of int32 into file bytes and back.
//
// Used by the `parallel` suite (threads) and by `iolab-mpi` (ranks): both run
// the same workloads on the engine (harness/engine.h), which times a pass
// from the start barrier's release to the last worker's end and reports
// "first done" and "last done", elbencho-style.
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

#include "iolab/harness/engine.h"
#include "iolab/harness/requests.h"
#include "iolab/results/record.h"
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

// Throws Error(ENOSPC) naming `dir` when its filesystem has less than `bytes` free.
void require_free_space(const std::filesystem::path& dir, std::uint64_t bytes);

// What every worker of a region run does.
struct RegionSpec {
  unsigned workers = 1;
  std::uint64_t region_size = 0;       // bytes per worker
  std::uint64_t block_size = 1 << 20;  // bytes per call; the last call of a region may be shorter
  Layout layout = Layout::SharedFile;
  io::FileOptions options;             // queue depth for queued methods, ...
  bool sync_at_end = false;            // writes: each worker's data sync inside its timed region
  results::AccessPattern pattern = results::AccessPattern::Seq;  // rand: each worker's blocks in a fixed permutation
  std::uint64_t seed = 0;              // of that permutation (worker w uses seed + w)
};

// The files of a region run. Before every write pass they are made anew
// (preallocated to their full size, untimed: writers through a shared map
// must not race to grow the file) by the process that owns them: for a
// shared file the process running worker 0, which tells the others its path
// (Team::broadcast); for a file per worker, each worker's process. Removed
// when this object goes.
class RegionFiles {
 public:
  // `scratch` may be null in a process that creates no file (an MPI rank other than 0, shared layout).
  RegionFiles(harness::Team& team, io::ScratchDir* scratch, const RegionSpec& spec, std::string stem);
  ~RegionFiles();
  RegionFiles(const RegionFiles&) = delete;
  RegionFiles& operator=(const RegionFiles&) = delete;

  void recreate();
  const std::filesystem::path& file_of(unsigned worker) const;
  const Region& region_of(unsigned worker) const { return regions_.at(worker); }
  const std::vector<Region>& regions() const noexcept { return regions_; }
  // The files this process created.
  const std::vector<std::filesystem::path>& owned() const noexcept { return owned_; }
  // fdatasync of the files this process created (untimed): reads after
  // writes neither race writeback nor, under O_DIRECT, miss data.
  void flush() const;
  // Writes `source`'s bytes over every region this process owns and makes
  // them durable (untimed): for read-only runs that need no write pass.
  void fill(const harness::WriteSource& source) const;
  std::uint64_t total_bytes() const noexcept;

 private:
  void remove_owned() noexcept;
  harness::Team& team_;
  io::ScratchDir* scratch_;
  RegionSpec spec_;
  std::string stem_;
  std::vector<Region> regions_;
  std::vector<std::filesystem::path> by_worker_;  // empty path: a worker of another process
  std::vector<std::filesystem::path> owned_;
};

// Every worker writes (Op::Write) or reads (Op::Read) its region of the
// files with one method, as an engine workload on any team (threads or MPI
// ranks). Writes take their bytes from `source`; each worker checks its
// region after every write pass (untimed, after the end barrier) and every
// call's bytes in the verification pass of reads, which read what the write
// passes left. The timed region: a worker's calls, its data sync when the
// spec asks, and, for writes, closing the file (docs/results-format.md).
class RegionWorkload final : public harness::Workload {
 public:
  RegionWorkload(harness::Team& team, const io::Method& method, const RegionSpec& spec, results::Op op,
                 RegionFiles& files, const harness::WriteSource& source);
  ~RegionWorkload() override;

  std::optional<std::string> setup() override;
  void before_pass(harness::PassKind kind) override;
  harness::PassBody pass(harness::PassKind kind) override;
  results::LatencySource latency_source() const override;
  // Written regions are read back after every pass: no verification pass.
  bool has_verification_pass() const override { return op_ == results::Op::Read; }
  void describe(results::Result& r) const override;
  // The O_DIRECT alignment the files need (1 when the method needs none); known after setup().
  std::size_t alignment() const noexcept { return alignment_; }

 private:
  struct Worker;
  harness::Team& team_;
  const io::Method& method_;
  RegionSpec spec_;
  results::Op op_;
  RegionFiles& files_;
  const harness::WriteSource& source_;
  io::MethodTraits traits_;
  std::size_t alignment_ = 1;
  std::vector<std::unique_ptr<Worker>> workers_;  // indexed by worker; null for other processes' workers
  double least_resident_ = 1.0;
};

// -------------------------------------------------------- typed int arrays

// The paper's ways of moving an int32 array to and from a file. File order
// is big-endian (Java's DataOutputStream) for every way but Raw, which moves
// the array's own (native) bytes: "the data is already in byte form".
enum class ArrayWay {
  Raw,                    // the array's bytes, one write per chunk
  Encode,                 // manual loop to 4 big-endian bytes per int into a chunk buffer, one write per chunk
  ElementStream,          // one unbuffered write(2) of 4 bytes per int (DataOutputStream on a file)
  BufferedElementStream,  // one fwrite of 4 bytes per int into an 8 KiB stdio buffer
  ArrayStream,            // append 4 bytes per int to a growing std::vector<std::byte>, one write
  Bulk,                   // vectorized byte swap in cache-sized chunks, one write per chunk
};
// Raw, Encode and Bulk move kArrayChunkInts ints (256 KiB) per call, so
// their calls are alike and they differ only in the conversion: Bulk's
// converted chunk is still in cache when the kernel copies it, where a
// whole-array conversion would stream the array through memory twice more.
inline constexpr std::size_t kArrayChunkInts = 64 * 1024;
std::span<const ArrayWay> all_array_ways();
std::string_view to_string(ArrayWay);  // "raw", "encode", "element-stream", ...
ArrayWay parse_array_way(std::string_view);
// True for the ways that make one call per element (and are capped in benchmarks).
bool per_element(ArrayWay);
// True for the ways that move kArrayChunkInts ints per call (Raw, Encode, Bulk).
bool chunked(ArrayWay);

// The file bytes `way` produces for `values` (untimed reference for verification).
std::vector<std::byte> encode_reference(ArrayWay way, std::span<const std::int32_t> values);
// True when `bytes` equal encode_reference(way, values), without making it.
bool matches_encoding(ArrayWay way, std::span<const std::int32_t> values, std::span<const std::byte> bytes);

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
  std::vector<Layout> layouts{Layout::SharedFile, Layout::FilePerWorker};
  // The methods whose regions are compared (seed 003 used raw reads and writes).
  std::vector<std::string> region_methods{"pread", "mmap", "direct", "io_uring"};
};
ParallelPlan plan_for(Scale scale);

}  // namespace iolab::suites::parallel
