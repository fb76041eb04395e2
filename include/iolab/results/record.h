// The results of a run: one record per experiment, plus the machine they
// came from. This is iolab's file format (docs/results-format.md): written
// by `iolab run` and `iolab-mpi`, read by `report`, `recommend`, `compare`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/base/histogram.h"
#include "iolab/results/kinds.h"
#include "iolab/results/statistics.h"
#include "iolab/io/buffer.h"

namespace iolab::results {

inline constexpr const char* kResultsFormat = "iolab-results";
// Version 2: warnings are objects with a kind; latency says how it was
// obtained; passes per repetition; sync policies every-N/async-N.
// Version 1 files are still read (docs/results-format.md).
inline constexpr int kResultsSchemaVersion = 3;

// The machine and filesystem a run measured (llfio's storage_profile in spirit).
struct Environment {
  std::string hostname, cpu_model, kernel;
  unsigned cores = 0;
  std::uint64_t ram_bytes = 0;
  std::string scratch_dir, fs_type, mount_options, device;
  std::optional<bool> rotational;  // unknown for tmpfs, overlay, ...
  std::string scheduler;           // e.g. "mq-deadline"; empty when not a block device
  std::string iolab_version, compiler, build_type;
  std::string git_commit;  // the commit built from; "unknown" from a tarball, "" in files before it was recorded
  bool root = false;
  bool can_drop_caches = false;
  std::string created;  // UTC, ISO 8601
  std::string command;  // the command line that produced the results
  std::string block_device;  // the block device whose counters records report ("" when none)
  // /proc/sys/vm/dirty_*: how much written data the kernel lets sit in the
  // page cache, and for how long, before it writes it back.
  std::map<std::string, std::int64_t> vm_dirty;
  // The scratch directory's block device queue (/sys/block/*/queue):
  // read_ahead_kb (how much a read fault or a sequential read brings in
  // beside what it asked for), nr_requests, max_sectors_kb, the logical and
  // physical block sizes, write_cache. Empty where there is no block device.
  std::map<std::string, std::string> block_queue;
  // The guest's free page reporting (proc::free_page_reporting_order): the
  // order of the blocks it hands back to the host; nullopt when it does not.
  std::optional<unsigned> free_page_reporting_order;
};

// How a record's latency percentiles were obtained.
enum class LatencySource {
  EveryCall,     // a separate untimed-for-throughput pass timing every call
  EveryRequest,  // a separate pass timing every request from submission to completion (queued methods)
  EveryOp,       // every operation of the workload timed as it ran (custom workloads that need it)
};
std::string_view to_string(LatencySource);

// Percentiles of per-call (or per-request) latency, nanoseconds.
struct Latency {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  std::uint64_t samples = 0;  // calls or requests timed
  LatencySource source = LatencySource::EveryCall;
};
// p50, p90, p99, p99.9, max and the count of `h`, as taken by `source`.
Latency latency_of(const LatencyHistogram& h, LatencySource source);

// A published figure from a seed write-up, printed beside ours, labelled as theirs.
struct Reference {
  std::string source;  // e.g. "seed 001: Java, i7-8750H, SSD"
  double value = 0;
  std::string unit;  // "ms", "MiB/s", ...
};

// Why a figure deserves less trust than it looks; `kind` is stable (the
// report and the console group and filter by it), `text` is for people.
enum class WarningKind {
  TooShort,           // repetitions shorter than thresholds::kTooShortSeconds
  Outliers,           // repetitions far from the median (MAD rule)
  NotWarm,            // a warm file was not fully resident before a pass
  NotCold,            // a cold file was resident before a pass
  CacheIgnored,       // the asked cache state does not apply (O_DIRECT)
  SourceNotResident,  // a copy's source was not fully resident
  ShortLastCall,      // the file is not a multiple of the block size: the last call is shorter
  Note,               // anything else (results files of schema 1 read back)
};
std::string_view to_string(WarningKind);      // "too_short", "outliers", ...
WarningKind parse_warning_kind(std::string_view);  // unknown -> Note

struct Warning {
  WarningKind kind = WarningKind::Note;
  std::vector<std::string> subjects;  // the figures it is about, e.g. {"shortest 2.9 ms"}
  std::string text;                   // one line
  bool operator==(const Warning&) const = default;
};

struct Result {
  std::string suite, experiment, method;
  Op op = Op::Read;
  std::optional<AccessPattern> pattern = AccessPattern::Seq;  // nullopt when not applicable
  std::uint64_t block_size = 0;  // bytes per call
  std::uint64_t file_size = 0;
  std::optional<io::BufferKind> buffer = io::BufferKind::Heap;  // nullopt when not applicable
  std::optional<std::uint64_t> buffer_offset;  // the buffer's first byte within its page; nullopt when not recorded
  std::optional<CacheState> cache = CacheState::Warm;          // nullopt: not applicable (a fresh file, an allocation)
  std::string cache_method;      // how the cache state was made: "read once", "fadvise", "drop_caches", "O_DIRECT", "fresh file"
  std::optional<double> resident_fraction;  // of the file, measured just before each timed pass (the extreme over passes)
  io::FlushPolicy sync;
  unsigned threads = 1;
  std::optional<unsigned> queue_depth;  // queued methods: requests kept in flight
  unsigned reps = 0;
  unsigned passes = 1;           // passes of the workload per timed repetition
  std::uint64_t bytes = 0;       // per repetition
  std::uint64_t ops = 0;         // calls of the measured operation per repetition
  std::vector<double> samples_s; // seconds of each timed repetition
  // Seconds of single passes over every timed repetition (statistics.h:
  // what rows with different passes per repetition are compared on).
  std::optional<PassSpread> pass_s;
  std::optional<Latency> latency_ns;
  double user_s = 0, sys_s = 0;  // CPU of the median repetition by user + sys (results::median_cpu)
  std::int64_t minor_faults = 0, major_faults = 0;      // per repetition (median)
  std::int64_t voluntary_ctx = 0, involuntary_ctx = 0;  // per repetition (median)
  std::uint64_t io_calls = 0;    // system calls that moved data, per repetition (median)
  // Per repetition (median), from /proc/self/io: bytes fetched from storage
  // for this process, and page-cache bytes it dirtied (not device writes).
  std::uint64_t storage_read_bytes = 0, dirtied_bytes = 0;
  // Per repetition (median): what the scratch filesystem's block device read
  // and wrote during the timed passes, for every process on the machine
  // (unset when the device is unknown: tmpfs, overlay).
  std::optional<std::uint64_t> device_read_bytes, device_write_bytes;
  bool verified = false;
  std::optional<std::string> skipped;  // the reason, when the experiment could not run here
  std::vector<Warning> warnings;
  std::optional<Reference> reference;
  nlohmann::json extra = nlohmann::json::object();  // suite-specific fields (first_done_s, ...)

  // Derived from samples_s, bytes and ops.
  Summary seconds() const;  // of one repetition: `passes` passes, `ops` operations
  // The median repetition's seconds divided by its passes: one pass, the
  // workload done once (what another tool's single run is compared with).
  // 0 without samples.
  double seconds_per_pass() const;
  // The median repetition's nanoseconds per operation (seconds * 1e9 / ops);
  // nullopt without samples or operations.
  std::optional<double> ns_per_op() const;
  // The spread tables, charts and verdicts show, as seconds of one
  // repetition: that of single passes (the 5th and 95th percentile from 20
  // passes, else the slowest and fastest) times the passes, since a
  // repetition's range shrinks with its passes; without per-pass times
  // (older files), the repetitions' slowest and fastest. Zeros without samples.
  struct Spread {
    double slowest_s = 0, fastest_s = 0;
  };
  Spread spread_seconds() const;
  double median_mib_per_s() const;
  double median_ops_per_s() const;
  // Adds a warning of `kind` unless one of that kind is already there.
  void warn(WarningKind kind, std::string text, std::vector<std::string> subjects = {});
  bool has_warning(WarningKind kind) const;
};

// The record's labels as text ("" when not applicable), for tables and reports.
std::string pattern_name(const Result& r);
std::string buffer_name(const Result& r);
std::string cache_name(const Result& r);
// True when the record's writes were each followed by a flush: the `every`
// policy, or `every-N` with blocks of at least N bytes (extra.flush_every_write).
bool flushes_every_write(const Result& r);
// Where a write's bytes were when its timed region ended: "page cache only
// (not flushed)", "flushed (every-16k:fdatasync)", "on the device (O_DIRECT;
// ...)"; "" for operations that write nothing.
std::string destination(const Result& r);

struct Results {
  Environment environment;
  std::vector<Result> results;
  // Set when the run stopped early (an error, an interrupt): why. The
  // records before it are complete and valid.
  std::optional<std::string> incomplete;
};

nlohmann::json to_json(const Result& r);
nlohmann::json to_json(const Environment& e);
nlohmann::json to_json(const Results& r);
// Throws Error naming `source` and the JSON path of the bad value when the
// JSON is not iolab results, is a newer schema, or lacks or mistypes a field.
Results results_from_json(const nlohmann::json& j, const std::string& source);

// Writes JSON (pretty) to `path`, published atomically (io/publish.h:
// replaced whole or not at all). Parent directories are created.
void write_json(const Results& r, const std::filesystem::path& path);
// One row per result, a header line first; nested fields are flattened (seconds_median, ...).
std::string to_csv(const Results& r);
// Writes to_csv(r) to `path`, published atomically like write_json.
void write_csv(const Results& r, const std::filesystem::path& path);
Results read_results(const std::filesystem::path& path);
// The text of a results file, read as read_results reads it: refused
// (UsageError) when nested deeper than kJsonMaxDepth, before parsing.
Results results_from_text(std::string_view text, const std::string& source);

}  // namespace iolab::results
