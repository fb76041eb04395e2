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

#include "iolab/results/kinds.h"
#include "iolab/harness/runner.h"

namespace iolab::harness {

// A method as a matrix axis value: the io method, the name its records
// carry, its options, and a buffer kind that overrides the matrix's.
struct MethodVariant {
  std::string method;
  std::string label;  // empty = the method's name
  io::FileOptions options;
  std::optional<io::BufferKind> buffer;
};
// The plain variant of each named method (the command line's --method).
std::vector<MethodVariant> variants_of(const std::vector<std::string>& methods);

// Most experiments one matrix may expand to: checked before any is built.
inline constexpr std::uint64_t kMaxMatrixExperiments = 100000;

struct Matrix {
  std::vector<MethodVariant> methods;
  std::vector<results::Op> ops{results::Op::Read};
  std::vector<results::AccessPattern> patterns{results::AccessPattern::Seq};
  std::vector<std::uint64_t> block_sizes{std::uint64_t{1} << 20};
  std::uint64_t file_size = std::uint64_t{256} << 20;
  std::uint64_t ops_per_rep = 0;  // when set, file size = ops x block size
  std::vector<results::CacheState> caches{results::CacheState::Warm};
  // nullopt: the method's natural buffer (aligned for O_DIRECT, else heap).
  std::vector<std::optional<io::BufferKind>> buffers{std::nullopt};
  std::vector<io::FlushPolicy> syncs{io::FlushPolicy{}};
  // Queued methods (MethodTraits::queued) run at each depth; the others
  // once. Empty: each variant's own options.queue_depth.
  std::vector<unsigned> queue_depths;
  results::Eviction eviction = results::Eviction::PerFile;
  bool latency = true;
};

// Every combination, in the order: op, pattern, block, cache, buffer, sync,
// queue depth, method (methods vary fastest, so one table compares them).
// Suite "custom"; the experiment label names everything but the method and
// its queue depth. Throws UsageError for an unknown method, a zero size, or
// more than kMaxMatrixExperiments combinations (before building any).
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
