// The results of a run: one record per experiment, plus the machine they
// came from. This is iolab's file format (docs/results-format.md): written
// by `iolab run` and `iolab-mpi`, read by `report`, `recommend`, `compare`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/harness/statistics.h"

namespace iolab::harness {

inline constexpr const char* kResultsFormat = "iolab-results";
inline constexpr int kResultsFormatVersion = 1;

// The machine and filesystem a run measured (llfio's storage_profile in spirit).
struct Environment {
  std::string hostname, cpu_model, kernel;
  unsigned cores = 0;
  std::uint64_t ram_bytes = 0;
  std::string scratch_dir, fs_type, mount_options, device;
  std::optional<bool> rotational;  // unknown for tmpfs, overlay, ...
  std::string scheduler;           // e.g. "mq-deadline"; empty when not a block device
  std::string iolab_version, compiler, build_type;
  bool root = false;
  bool can_drop_caches = false;
  std::string created;  // UTC, ISO 8601
  std::string command;  // the command line that produced the results
};

// Facts of this machine and of the filesystem holding `scratch_dir`.
Environment collect_environment(const std::filesystem::path& scratch_dir);

// Percentiles of per-operation latency, nanoseconds.
struct Latency {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

// A published figure from a seed write-up, printed beside ours, labelled as theirs.
struct Reference {
  std::string source;  // e.g. "seed 001: Java, i7-8750H, SSD"
  double value = 0;
  std::string unit;  // "ms", "MiB/s", ...
};

struct Result {
  std::string suite, experiment, method;
  std::string op = "read";       // read, write, copy, alloc, or a store phase (insert, get, ...)
  std::string pattern = "seq";   // seq, rand
  std::uint64_t block_size = 0;  // bytes per call
  std::uint64_t file_size = 0;
  std::string buffer = "heap";   // heap, aligned, or "" when not applicable
  std::string cache = "warm";    // warm, cold, direct, or "" when not applicable
  std::string cache_method;      // how the cache state was made: "read once", "drop_caches", "fadvise", "O_DIRECT", "fresh file"
  std::optional<double> resident_fraction;  // of the file, measured just before each timed run (max over reps)
  std::string sync = "none";     // none, end:fdatasync, periodic-16k:msync, every:fsync, ...
  unsigned threads = 1;
  unsigned reps = 0;
  std::uint64_t bytes = 0;       // per repetition
  std::uint64_t ops = 0;         // calls of the measured operation per repetition
  std::vector<double> samples_s; // seconds of each timed repetition
  std::optional<Latency> latency_ns;
  double user_s = 0, sys_s = 0;  // CPU per repetition (median)
  std::int64_t minor_faults = 0, major_faults = 0;      // per repetition (median)
  std::int64_t voluntary_ctx = 0, involuntary_ctx = 0;  // per repetition (median)
  std::uint64_t io_calls = 0;    // system calls that moved data, per repetition (median)
  std::uint64_t storage_read_bytes = 0, storage_write_bytes = 0;  // per repetition (median)
  bool verified = false;
  std::optional<std::string> skipped;  // the reason, when the experiment could not run here
  std::vector<std::string> warnings;   // noisy, too short, not cold, ...
  std::optional<Reference> reference;
  nlohmann::json extra = nlohmann::json::object();  // suite-specific fields (first_done_s, ...)

  // Derived from samples_s, bytes and ops.
  Summary seconds() const;
  double median_mib_per_s() const;
  double median_ops_per_s() const;
};

struct Results {
  Environment environment;
  std::vector<Result> results;
};

nlohmann::json to_json(const Result& r);
nlohmann::json to_json(const Environment& e);
nlohmann::json to_json(const Results& r);
// Throws Error naming `source` when the JSON is not iolab results, is a newer
// format version, or lacks a required field.
Results results_from_json(const nlohmann::json& j, const std::string& source);

// Writes JSON (pretty) to `path`; returns the path. Parent directories are created.
void write_json(const Results& r, const std::filesystem::path& path);
// One row per result, a header line first; nested fields are flattened (seconds_median, ...).
void write_csv(const Results& r, const std::filesystem::path& path);
Results read_results(const std::filesystem::path& path);

}  // namespace iolab::harness
