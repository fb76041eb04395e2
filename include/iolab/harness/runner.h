// The runner: prepares a file (untimed), sets its cache state (untimed),
// warms up, times N repetitions, verifies (untimed), and returns one Result.
//
// Two kinds of experiment:
//  - FileExperiment: the generic workload, a method reading or writing a
//    file in blocks (seq or rand), described entirely by data;
//  - CustomExperiment: a workload given as callbacks (copies, allocation,
//    flush policies, the record store), timed and summarised the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "iolab/harness/result.h"
#include "iolab/harness/usage.h"
#include "iolab/io/buffer.h"
#include "iolab/io/file.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {

enum class Op { Read, Write };
enum class AccessPattern { Seq, Rand };
// Warm: read once first, so the file is resident. Cold: evicted (root:
// sync + drop_caches; otherwise fsync + posix_fadvise(DONTNEED)), or a fresh
// file per repetition where the experiment asks. Direct: O_DIRECT bypasses it.
enum class CacheState { Warm, Cold, Direct };
// When the sync call runs: never, once after the timed writes (inside the
// timed region), every sync_interval bytes from a background thread, or
// after every write call.
enum class SyncSchedule { None, End, Periodic, EveryWrite };

std::string_view to_string(Op);
std::string_view to_string(AccessPattern);
std::string_view to_string(CacheState);
std::string_view to_string(SyncSchedule);
Op parse_op(std::string_view);
AccessPattern parse_pattern(std::string_view);
CacheState parse_cache(std::string_view);
// "none", "end", "periodic", "every". Throws UsageError.
SyncSchedule parse_schedule(std::string_view);

// How a Cold cache state is made. Auto: as root sync + drop_caches,
// otherwise fdatasync + posix_fadvise(DONTNEED). DropCaches insists on
// drop_caches (the experiment is skipped when not root); Fadvise never
// touches the system-wide cache.
enum class Eviction { Auto, DropCaches, Fadvise };
std::string_view to_string(Eviction);
Eviction parse_eviction(std::string_view);  // "auto", "drop_caches", "fadvise"

struct FileExperiment {
  std::string suite, experiment;  // labels in results
  std::string method;             // a file method name (io::find_file_method)
  std::string method_label;       // name in results when not `method` (e.g. "stdio-unbuffered")
  io::FileOptions options;
  Op op = Op::Read;
  AccessPattern pattern = AccessPattern::Seq;
  std::uint64_t block_size = 4096;
  std::uint64_t file_size = 0;
  std::uint64_t ops = 0;  // calls per repetition; 0 = file_size / block_size (rounded up)
  io::BufferKind buffer = io::BufferKind::Heap;
  CacheState cache = CacheState::Warm;
  io::Durability sync = io::Durability::None;
  SyncSchedule schedule = SyncSchedule::None;
  std::uint64_t sync_interval = 16 * 1024;  // Periodic: bytes written between flushes
  bool fresh_file_per_rep = false;          // reads: a new file per repetition (seed 004); writes always get one
  unsigned batch = 1;                       // requests per File::submit call (io_uring queue depth)
  bool per_op_latency = true;               // record the latency histogram
  std::optional<Reference> reference;       // the seed's published figure for this experiment
  Eviction eviction = Eviction::Auto;       // Cold: how the file is evicted
};
// Semantics the runner gives these fields (docs/results-format.md has more):
//  - Reads: the file holds io::fill_pattern(config.seed) bytes, written untimed
//    with pwrite + fdatasync. Every timed repetition checks each call's byte
//    count; after the repetitions one untimed pass through the same method
//    checks every block against the pattern.
//  - Writes: each repetition writes a fresh file (removed afterwards) from a
//    ring of pre-generated pattern bytes (8 MiB, or one block when larger), so
//    no pattern generation runs inside the timed region; each file is read
//    back untimed with pread and compared. The timed region ends after
//    File::close(), which hands user-space buffers (stdio, iostream) to the kernel.
//  - sync: the durability call; when a schedule is set and sync is None the
//    runner uses fdatasync (msync for mmap). Periodic flushes run on a
//    background thread through a second descriptor of the file (fdatasync,
//    fsync, sync_file_range) or its own read-only mapping (msync MS_SYNC,
//    which Linux implements as a data sync of the range): a File is not
//    thread-safe, and msync on any shared mapping writes back the file's pages.
//  - batch > 1: File::submit with `batch` requests per call, each request
//    its own buffer; latency is then per call, not per request.
//  - Direct cache: method "direct", or "io_uring" (direct is set).


// One timed repetition of a custom workload.
struct Repetition {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  std::uint64_t io_calls = 0;  // 0 = take the kernel's count from /proc/self/io
};

struct CustomExperiment {
  Result labels;  // suite, experiment, method, op, sizes, buffer, cache, sync, reference... (figures are filled in)
  std::function<void()> prepare;     // untimed, before every repetition (and the warm-up)
  std::function<Repetition()> timed; // the timed region
  std::function<bool()> verify;      // untimed, after the repetitions; false = data did not verify
  std::function<void()> cleanup;     // untimed, after each repetition
};

struct RunConfig {
  unsigned reps = 5;
  unsigned warmup = 1;  // untimed repetitions before the timed ones
  std::uint64_t seed = 0x10AB;
  bool show_progress = false;  // progress bar on stderr
  // Replaces Eviction::Auto of every experiment (tests: Fadvise, so they
  // never drop the machine's page cache; `iolab run --evict`).
  std::optional<Eviction> eviction;
  // Called after each experiment (tables, progress); may be empty.
  std::function<void(const Result&)> on_result;
  // Called when an experiment starts ("seq-read/pread 4k warm", reps incl.
  // warm-up) and after each of its repetitions; may be empty (progress bars).
  std::function<void(const std::string& label, unsigned reps)> on_experiment;
  std::function<void(unsigned done)> on_repetition;
};

class Runner {
 public:
  Runner(RunConfig config, io::ScratchDir& scratch);
  ~Runner();

  // Never throws for "cannot run here": returns a Result with `skipped` set.
  // Throws Error for real failures (I/O errors, data that does not verify).
  Result run(const FileExperiment& e);
  Result run(const CustomExperiment& e);

  const RunConfig& config() const noexcept { return config_; }
  io::ScratchDir& scratch() noexcept { return scratch_; }

 private:
  RunConfig config_;
  io::ScratchDir& scratch_;
};

// Cache control, usable on its own (tests, custom workloads).
// Fraction of the file's pages resident in the page cache (mincore).
double resident_fraction(const std::filesystem::path& file);
// Reads the whole file once so it is resident.
void make_warm(const std::filesystem::path& file);
// Evicts the file: root -> sync + drop_caches; otherwise fdatasync +
// posix_fadvise(DONTNEED). Returns how ("drop_caches" or "fadvise").
std::string make_cold(const std::filesystem::path& file);
// Evicts the file the way `how` says; throws Error(EPERM) when DropCaches is
// asked for without root. Returns "drop_caches" or "fadvise".
std::string make_cold(const std::filesystem::path& file, Eviction how);
// Whether this process may write /proc/sys/vm/drop_caches.
bool can_drop_caches();

}  // namespace iolab::harness
