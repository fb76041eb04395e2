// Shared pieces of the seed suites (seeds 001, 002, 004): sizes per scale,
// the seeds' published figures as references, and small helpers to run a
// table of experiments and to write and verify pattern files outside the
// runner's FileExperiment path (custom workloads).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/results/record.h"
#include "iolab/harness/runner.h"
#include "iolab/io/buffer.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/io/syscall.h"
#include "iolab/suites/suite.h"
#include "iolab/base/units.h"

namespace iolab::suites::seeds {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;
// How the suites make a file cold: write it back and drop its own pages
// (fdatasync + posix_fadvise(DONTNEED)), measured with mincore before every
// repetition. Cheaper than sync + drop_caches (which flushes and empties the
// whole machine's cache, hundreds of times per run) and as cold for our file.
inline constexpr results::Eviction kEviction = results::Eviction::PerFile;
// Pattern seed of the files custom workloads write and verify themselves.
inline constexpr std::uint64_t kCustomSeed = 0x5EED5;
// The label of stdio with no buffer (stream_buffer 0: a read(2) or write(2)
// per call; Java's unbuffered FileInputStream and FileOutputStream), one in
// every suite: the cost model fits a method's records together by it.
inline constexpr const char* kStdioUnbuffered = "stdio-unbuffered";

// One value per scale, in the order tiny, quick, default, full.
template <typename T>
T by_scale(Scale s, T tiny, T quick, T normal, T full) {
  switch (s) {
    case Scale::Tiny: return tiny;
    case Scale::Quick: return quick;
    case Scale::Default: return normal;
    case Scale::Full: return full;
  }
  return normal;
}

// A seed's published time for `bytes` as a throughput, so it can stand beside
// ours at any scale; `source` keeps the original figure in words.
inline results::Reference published(std::string source, double bytes, double ms) {
  double rate = bytes / static_cast<double>(MiB) / (ms / 1000.0);
  return results::Reference{std::move(source), static_cast<double>(static_cast<long long>(rate + 0.5)), "MiB/s"};
}

// "1k", "4m", "1g", or the byte count when not a round binary multiple.
inline std::string label(std::uint64_t bytes) { return size_label(bytes); }

// Counts as people write them: 100000 -> "100k" (decimal, as the seeds wrote them).
inline std::string count_label(std::uint64_t n) {
  if (n >= 1000000 && n % 1000000 == 0) return std::to_string(n / 1000000) + "M";
  if (n >= 1000 && n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

// Runs a table's experiments, each kind in interleaved rounds
// (harness::run_interleaved), and collects the results in table order.
inline void run_all(harness::Runner& runner, const std::vector<harness::FileExperiment>& table,
                    std::vector<results::Result>& out) {
  for (auto& r : harness::run_interleaved(runner, table)) out.push_back(std::move(r));
}

// A suite that is only a table of file experiments, made from the options
// and run in order (each row labelled with the suite's name here).
class TableSuite final : public Suite {
 public:
  using Experiments = std::vector<harness::FileExperiment> (*)(const SuiteOptions&);
  TableSuite(const SuiteInfo& info, Experiments experiments) : Suite(info), experiments_(experiments) {}
  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    std::vector<harness::FileExperiment> table = experiments_(options);
    for (harness::FileExperiment& e : table) e.suite = std::string(name());
    std::vector<results::Result> out;
    run_all(runner, table, out);
    return out;
  }

 private:
  Experiments experiments_;
};

// A result for a custom experiment that cannot run here, reported like the
// runner reports its own skips (never silently dropped).
inline results::Result skipped(harness::Runner& runner, results::Result labels, std::string reason) {
  labels.skipped = std::move(reason);
  labels.reps = 0;
  if (runner.config().on_result) runner.config().on_result(labels);
  return labels;
}

// A custom workload and what to do once it has run: remove its files, add
// what only it knows to the result. (On an exception the files are left to
// the ScratchDir, which removes everything it created.)
struct Custom {
  harness::CustomExperiment experiment;
  std::function<void(results::Result&)> finish;
};

inline results::Result run_custom(harness::Runner& runner, const Custom& c) {
  results::Result r = runner.run(c.experiment);
  if (c.finish) c.finish(r);
  return r;
}

// The custom workloads bypass io::File on purpose (what they time is exactly
// the system calls they make), through the io layer's syscall helper: its
// descriptor, its EINTR loop and its full transfers.
class Fd {
 public:
  Fd(const std::filesystem::path& p, int flags) : fd_(io::sys::open(p, flags)) {}
  int get() const noexcept { return fd_.get(); }
  void close(const std::filesystem::path& p) { fd_.close(p); }

 private:
  io::sys::Fd fd_;
};

inline void write_all(int fd, const std::byte* data, std::size_t n, const std::filesystem::path& p) {
  io::IoCounters unused;
  io::sys::write_full(fd, {data, n}, p, unused);
}

// Writes `size` bytes of the pattern `seed` to an existing (empty) file.
inline void write_pattern_file(const std::filesystem::path& p, std::uint64_t size, std::uint64_t seed) {
  Fd fd(p, O_WRONLY | O_TRUNC);
  io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(size, 8 * MiB)), io::BufferKind::Aligned);
  for (std::uint64_t off = 0; off < size;) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off));
    io::fill_pattern(seed, off, chunk.span().first(n));
    write_all(fd.get(), chunk.data(), n, p);
    off += n;
  }
  fd.close(p);
}

// True when the file holds exactly `size` bytes and they are the pattern
// `seed` repeated every `period` bytes (period 0 = not repeated); with
// DataCheck::Tail, the length and the last 4 KiB are checked.
inline bool file_matches_pattern(const std::filesystem::path& p, std::uint64_t size, std::uint64_t seed,
                                 std::uint64_t period = 0, harness::DataCheck check = harness::DataCheck::Full) {
  std::error_code ec;
  if (std::filesystem::file_size(p, ec) != size || ec) return false;
  Fd fd(p, O_RDONLY);
  // 1 MiB at a time: this checks every pass's file, and fresh zeroed pages
  // for a larger buffer cost more than reading the file.
  const std::uint64_t start = harness::check_start(check, size, 4096);
  io::Buffer chunk(static_cast<std::size_t>(std::clamp<std::uint64_t>(size - start, 1, MiB)), io::BufferKind::Aligned);
  for (std::uint64_t off = start; off < size;) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off));
    if (period != 0) want = static_cast<std::size_t>(std::min<std::uint64_t>(want, period - off % period));
    io::IoCounters unused;
    std::size_t r = io::sys::pread_full(fd.get(), chunk.span().first(want), off, p, unused);
    if (r != want) return false;  // the file ended early
    std::uint64_t at = period != 0 ? off % period : off;
    if (!io::matches_pattern(seed, at, chunk.span().first(r))) return false;
    off += r;
  }
  return true;
}

}  // namespace iolab::suites::seeds
