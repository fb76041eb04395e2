// A custom matrix of file experiments: every combination of the listed
// methods, ops, patterns, block sizes, caches, buffers and sync policies.
// Given on the command line (`iolab run --method pread,mmap --bs 4k,1m ...`)
// or in a TOML job file (`iolab run --job FILE.toml`) with the same keys.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "iolab/harness/runner.h"

namespace iolab::harness {

// A sync policy as written by users: "none", "end", "end:fsync", "every",
// "every:fdatasync", "periodic", "periodic-16k", "periodic-16k:msync".
struct SyncPolicy {
  SyncSchedule schedule = SyncSchedule::None;
  io::Durability durability = io::Durability::None;  // None: the runner's default for the method
  std::uint64_t interval = 16 * 1024;
};
SyncPolicy parse_sync_policy(std::string_view text);  // throws UsageError

struct Matrix {
  std::vector<std::string> methods;
  std::vector<Op> ops{Op::Read};
  std::vector<AccessPattern> patterns{AccessPattern::Seq};
  std::vector<std::uint64_t> block_sizes{std::uint64_t{1} << 20};
  std::uint64_t file_size = std::uint64_t{256} << 20;
  std::uint64_t ops_per_rep = 0;  // when set, file size = ops x block size
  std::vector<CacheState> caches{CacheState::Warm};
  std::vector<io::BufferKind> buffers{io::BufferKind::Heap};
  std::vector<SyncPolicy> syncs{SyncPolicy{}};
  unsigned queue_depth = 32;  // io_uring: ring depth and requests per submit
  Eviction eviction = Eviction::Auto;
  bool latency = true;
};

// Every combination, in the order: op, pattern, block, cache, buffer, sync, method
// (methods vary fastest, so one table compares them). Suite "custom"; the
// experiment label names everything but the method.
std::vector<FileExperiment> expand(const Matrix& m);

// A job file: the matrix keys (method, op, pattern, bs, size, ops, cache,
// buffer, sync, qd, evict, latency) plus run settings (reps, warmup, seed).
// Each matrix key takes a string ("4k,1m"), a list (["4k", "1m"]) or, for
// sizes and counts, an integer.
struct Job {
  Matrix matrix;
  std::optional<unsigned> reps, warmup;
  std::optional<std::uint64_t> seed;
};
// Throws UsageError with one line naming the file, and the key or the TOML
// error with its line, for anything wrong.
Job read_job(const std::filesystem::path& file);
// The same from a job file's text; `source` names it in errors (read_job's
// core, and the fuzz target's entry).
Job parse_job(std::string_view text, const std::string& source);

// "a,b,c" -> {"a","b","c"} (empty items are an error).
std::vector<std::string> split_list(std::string_view text, std::string_view what);

}  // namespace iolab::harness
