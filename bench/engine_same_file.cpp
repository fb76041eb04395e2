// iolab's engine against a bare loop on the very same file, pass by pass.
//
//   engine_same_file pread|mmap|fwrite BLOCK SIZE [REPS] [SCRATCH_PARENT]
//
// Warm reads differ from file to file by more than the engine's cost (4 KiB
// preads of a 1 GiB file read 0.86-1.17 M/s here depending on the pages the
// page cache got), so comparing iolab's file with another file the bare
// loop made measures the files. Here iolab runs its default experiment (as
// `iolab run --method M --op read --bs BLOCK --size SIZE --cache warm`, with
// pread into an aligned buffer, mmap into a heap one), and after each of its
// passes, untimed by iolab, a bare loop (no iolab code in it: a plain pread
// or mmap + memcpy loop, timed by itself) reads the same file in the same
// page-cache state into a buffer at the same place in its page. Prints
// both medians per wall and per CPU second and their ratio. A control: each
// bare pass is made twice in a row, and the second's median over the
// first's says how much a pass's place in the sequence moves it (for mmap
// at 1 KiB here, 1.01-1.20x: the ratio against iolab carries that much).
//
// fwrite: a write has no file to share (both sides write a fresh one each
// pass), so the pairing is in time: iolab runs `iolab run --method stdio
// --op write --bs BLOCK --size SIZE`, and after each of its passes the bare
// loop of bare_loops.cpp (fwrite of BLOCK bytes from an 8 MiB ring of data
// into a 4 KiB stdio buffer, fclose timed, open and unlink not) writes its
// own fresh file beside it, so a drift in the machine reaches both sides.
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "bench_usage.h"
#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/buffer.h"
#include "iolab/io/scratch.h"
#include "iolab/base/units.h"

namespace {

using iolab_bench::cpu_seconds;
using iolab_bench::median;
using iolab_bench::minor_faults;

struct BarePass {
  double ops_per_s, ops_per_cpu_s;
  long minor_faults;
};


// One bare pass over `path`: the loop bare_loops.cpp times, on this file.
BarePass bare_pass(bool mapped, const std::filesystem::path& path, std::size_t size, std::byte* buf, std::size_t block) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw iolab::Error("open", path.string(), errno);
  std::size_t ops = 0;
  void* map = nullptr;
  double c0 = cpu_seconds();
  long f0 = minor_faults();
  auto t0 = std::chrono::steady_clock::now();
  if (mapped) {
    map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) throw iolab::Error("mmap", path.string(), errno);
    const auto* base = static_cast<const std::byte*>(map);
    for (std::size_t off = 0; off < size; off += block, ++ops) std::memcpy(buf, base + off, std::min(block, size - off));
  } else {
    for (std::size_t off = 0; off < size; ++ops) {
      ssize_t n = ::pread(fd, buf, block, static_cast<off_t>(off));
      if (n <= 0) throw iolab::Error("pread", path.string(), n < 0 ? errno : EIO);
      off += static_cast<std::size_t>(n);
    }
  }
  // The unmap and close are timed, as iolab's read pass times its close() (which unmaps).
  if (map != nullptr) ::munmap(map, size);
  ::close(fd);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double c = cpu_seconds() - c0;
  long faults = minor_faults() - f0;
  return {static_cast<double>(ops) / s, c > 0 ? static_cast<double>(ops) / c : 0, faults};
}

// One bare fwrite pass: a fresh file in `dir`, written in `block`-byte
// fwrites from `data` (a ring of `period` bytes, as bare_loops.cpp's), closed.
BarePass bare_fwrite_pass(const std::filesystem::path& dir, std::size_t size, const std::vector<char>& data,
                          std::size_t period, std::size_t block) {
  const std::filesystem::path path = dir / "bare-fwrite";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw iolab::Error("create", path.string(), errno);
  FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) throw iolab::Error("fdopen", path.string(), errno);
  static std::vector<char> stdio_buffer(4096);
  if (std::setvbuf(f, stdio_buffer.data(), _IOFBF, stdio_buffer.size()) != 0)
    throw iolab::Error("setvbuf", path.string(), EINVAL);
  std::size_t ops = 0;
  double c0 = cpu_seconds();
  long f0 = minor_faults();
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t done = 0; done < size; done += block, ++ops)
    if (std::fwrite(data.data() + done % period, 1, std::min(block, size - done), f) == 0)
      throw iolab::Error("fwrite", path.string(), errno);
  if (std::fclose(f) != 0) throw iolab::Error("fclose", path.string(), errno);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double c = cpu_seconds() - c0;
  long faults = minor_faults() - f0;
  std::filesystem::remove(path);
  return {static_cast<double>(ops) / s, c > 0 ? static_cast<double>(ops) / c : 0, faults};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iolab;
  std::string method, scratch_parent = "/tmp";
  std::uint64_t block = 0, size = 0;
  unsigned reps = 5;
  CLI::App app{"The engine against a bare loop on the same file, pass by pass (docs/performance.md)"};
  app.add_option("METHOD", method, "pread, mmap or fwrite")->required()->check(CLI::IsMember({"pread", "mmap", "fwrite"}));
  iolab_bench::add_size(app, "BLOCK", block, "Bytes per call")->required();
  iolab_bench::add_size(app, "SIZE", size, "File size")->required();
  app.add_option("REPS", reps, "Timed repetitions (default 5)")->check(CLI::Range(1u, 100000u));
  app.add_option("SCRATCH_PARENT", scratch_parent, "Where the scratch directories go (default /tmp)");
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  try {
    const bool mapped = method == "mmap", writes = method == "fwrite";
    io::ScratchDir scratch(scratch_parent);
    io::ScratchDir bare_dir(scratch_parent);  // the bare writes' files, out of iolab's way

    harness::FileExperiment e;
    e.suite = "bench";
    e.experiment = writes ? "engine against a bare loop, passes interleaved" : "engine against a bare loop, same file";
    e.method = writes ? "stdio" : method;
    e.op = writes ? results::Op::Write : results::Op::Read;
    e.block_size = block;
    e.file_size = size;
    e.cache = results::CacheState::Warm;
    if (!writes) e.buffer = mapped ? io::BufferKind::Heap : io::BufferKind::Aligned;  // as engine_vs_bare.sh runs iolab

    // The bare writes' data: an 8 MiB ring of random bytes, as bare_loops.cpp's.
    const std::size_t period = std::max<std::size_t>(
        block, std::min<std::size_t>(size, std::size_t{8} << 20) / block * block);
    std::vector<char> data;
    if (writes) {
      data.resize(period + block);
      std::mt19937_64 rng(7);
      for (auto& c : data) c = static_cast<char>(rng());
    }

    // The bare loop's buffer where iolab's is: the same kind, so the same place in its page.
    io::Buffer buf(static_cast<std::size_t>(block), e.buffer.value_or(io::BufferKind::Heap));
    std::vector<BarePass> bare, again;  // each pass's bare loop, and the same loop once more right after it
    harness::RunConfig config;
    config.reps = reps;
    config.on_pass = [&](unsigned, unsigned) {
      if (writes) {
        for (auto* into : {&bare, &again})
          into->push_back(bare_fwrite_pass(bare_dir.path(), static_cast<std::size_t>(size), data, period,
                                           static_cast<std::size_t>(block)));
        return;
      }
      // The experiment's file is the one file in the scratch directory.
      for (const auto& entry : std::filesystem::directory_iterator(scratch.path()))
        if (entry.is_regular_file() && entry.file_size() == size) {
          for (auto* into : {&bare, &again})
            into->push_back(bare_pass(mapped, entry.path(), static_cast<std::size_t>(size), buf.data(),
                                      static_cast<std::size_t>(block)));
          return;
        }
    };
    harness::Runner runner(config, scratch);
    results::Result r = runner.run(e);
    if (r.skipped) throw Error("run", method, *r.skipped, EINVAL);
    const double iolab_wall = static_cast<double>(r.ops) / median(r.samples_s);
    const double iolab_cpu = r.user_s + r.sys_s > 0 ? static_cast<double>(r.ops) / (r.user_s + r.sys_s) : 0;
    std::vector<double> wall, cpu, faults;
    for (const BarePass& b : bare) {
      wall.push_back(b.ops_per_s);
      cpu.push_back(b.ops_per_cpu_s);
      faults.push_back(static_cast<double>(b.minor_faults));
    }
    const double bare_wall = median(wall), bare_cpu = median(cpu);
    std::printf("%s %s, %s file, %s: iolab %.0f ops/s, %.0f ops/CPU s (%u reps x %u passes); "
                "bare %.0f ops/s, %.0f ops/CPU s (%zu passes); iolab/bare %.3fx per CPU s, %.3fx per s\n",
                method.c_str(), argv[2], argv[3], writes ? "fresh files, passes interleaved" : "warm, same file", iolab_wall, iolab_cpu, r.reps, r.passes, bare_wall, bare_cpu,
                bare.size(), iolab_cpu / bare_cpu, iolab_wall / bare_wall);
    std::vector<double> again_cpu;
    for (const BarePass& b : again) again_cpu.push_back(b.ops_per_cpu_s);
    std::printf("control: the bare loop again right after itself %.3fx per CPU s\n", median(again_cpu) / bare_cpu);
    std::printf("minor faults per pass: iolab %lld (median repetition of %u passes), bare %.0f\n",
                static_cast<long long>(r.minor_faults), r.passes, median(faults));
    std::printf("%s %.0f %.0f %.0f %.0f\n", "data", bare_wall, bare_cpu, iolab_wall, iolab_cpu);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "engine_same_file: %s\n", ex.what());
    return 1;
  }
  return 0;
}
