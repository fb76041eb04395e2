// Is the warm file iolab prepares in the state a normally read file is in
// (issue 25 item 14)? How pages got into the page cache (the folios the
// writes made, or the ones readahead made) changes how fast they are read,
// so three files of the same size and data are compared by the same bare
// loop, round by round in rotating order:
//
//   iolab    iolab's preparation of a warm read file: write_pattern_file
//            (1 MiB pwrites, fdatasync), then make_warm_from_disk
//            (fdatasync, POSIX_FADV_DONTNEED, one pass of 1 MiB preads);
//   cat      the same writes, fsync, POSIX_FADV_DONTNEED, then read once
//            the way cat(1) reads a file (128 KiB read() calls);
//   written  the same writes and fdatasync, never evicted: the pages the
//            writes made (what iolab read before commit 269f663).
//
//   warm_file_state [SIZE] [ROUNDS] [BLOCK] [SCRATCH_PARENT]   (1g 3 4k /tmp)
//
// Each pass is a bare pread loop of BLOCK bytes over the whole file into a
// page-aligned buffer (bare_loops.cpp's loop), timed by itself; per file the
// median ops per wall and CPU second, and each file's ratio to iolab's per
// round. After the rounds, a census of each file's page-cache folios (the
// file mapped and touched, /proc/self/pagemap to find each page,
// /proc/kpageflags for compound head/tail; root only): bytes by folio size.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_usage.h"
#include "bench_cli.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/runner.h"
#include "iolab/io/buffer.h"
#include "iolab/io/scratch.h"

namespace {

using iolab_bench::cpu_seconds;
using iolab_bench::median;

constexpr std::uint64_t kSeed = 1;

struct Pass {
  double ops_per_s, ops_per_cpu_s;
};

Pass bare_pread_pass(const std::filesystem::path& path, std::size_t size, std::byte* buf, std::size_t block) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw iolab::Error("open", path.string(), errno);
  std::size_t ops = 0;
  double c0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t off = 0; off < size; ++ops) {
    ssize_t n = ::pread(fd, buf, block, static_cast<off_t>(off));
    if (n <= 0) throw iolab::Error("pread", path.string(), n < 0 ? errno : EIO);
    off += static_cast<std::size_t>(n);
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = cpu_seconds() - c0;
  ::close(fd);
  return {static_cast<double>(ops) / wall, static_cast<double>(ops) / (cpu > 0 ? cpu : 1e-9)};
}

// fsync, drop the file's clean pages, then read it once with 128 KiB read()s as cat does.
void evict_and_cat(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw iolab::Error("open", path.string(), errno);
  if (::fsync(fd) != 0) throw iolab::Error("fsync", path.string(), errno);
  if (int r = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); r != 0) throw iolab::Error("posix_fadvise", path.string(), r);
  std::vector<char> buf(128 * 1024);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) throw iolab::Error("read", path.string(), errno);
    if (n == 0) break;
  }
  ::close(fd);
}

// Bytes of the file's resident pages by the size of the folio holding them
// ("4 KiB", "64 KiB", ...), or an empty map when pagemap/kpageflags cannot be read.
std::map<std::uint64_t, std::uint64_t> folio_census(const std::filesystem::path& path, std::size_t size) {
  std::map<std::uint64_t, std::uint64_t> bytes_by_folio;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int pm = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  int kf = ::open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  void* map = fd < 0 ? MAP_FAILED : ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (fd >= 0 && pm >= 0 && kf >= 0 && map != MAP_FAILED) {
    const auto* base = static_cast<const volatile unsigned char*>(map);
    const std::size_t pages = size / page;
    std::vector<std::uint64_t> entries(pages);
    for (std::size_t i = 0; i < pages; ++i) (void)base[i * page];  // map every page (all resident: no I/O)
    const off_t first = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(map) / page * 8);
    if (::pread(pm, entries.data(), pages * 8, first) == static_cast<ssize_t>(pages * 8)) {
      constexpr std::uint64_t kHead = 1ull << 15, kTail = 1ull << 16;
      std::uint64_t run = 0;  // pages of the folio being counted
      auto close_run = [&] {
        if (run) bytes_by_folio[run * page] += run * page;
        run = 0;
      };
      for (std::uint64_t e : entries) {
        const std::uint64_t pfn = e & ((1ull << 55) - 1);
        std::uint64_t flags = 0;
        if (!(e >> 63) || pfn == 0 || ::pread(kf, &flags, 8, static_cast<off_t>(pfn * 8)) != 8) {
          close_run();
          continue;
        }
        if (flags & kTail) {
          ++run;
          continue;
        }
        close_run();
        run = 1;
        if (!(flags & kHead)) close_run();  // an order-0 folio
      }
      close_run();
    }
  }
  if (map != MAP_FAILED) ::munmap(map, size);
  for (int f : {fd, pm, kf})
    if (f >= 0) ::close(f);
  return bytes_by_folio;
}

std::string census_text(const std::map<std::uint64_t, std::uint64_t>& c, std::size_t size) {
  if (c.empty()) return "(no census: needs root for /proc/kpageflags)";
  std::string s;
  for (auto [folio, bytes] : c) {
    char part[80];
    std::snprintf(part, sizeof part, "%s%llu KiB folios %.1f%%", s.empty() ? "" : ", ",
                  static_cast<unsigned long long>(folio / 1024), 100.0 * static_cast<double>(bytes) / static_cast<double>(size));
    s += part;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  namespace io = iolab::io;
  std::uint64_t size = std::uint64_t{1} << 30;
  unsigned rounds = 3;
  std::size_t block = 4096;
  std::string scratch_parent = "/tmp";
  CLI::App app{"iolab's prepared warm file against one read once by cat and one left as written (issue 25 item 14)"};
  iolab_bench::add_size(app, "SIZE", size, "File size (default 1g)");
  app.add_option("ROUNDS", rounds, "Rounds, each reading every file once in a rotating order (default 3)")
      ->check(CLI::PositiveNumber);
  iolab_bench::add_size(app, "BLOCK", block, "Bytes per pread (default 4k)");
  app.add_option("SCRATCH_PARENT", scratch_parent, "Where the files go (default /tmp)");
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  try {
    io::ScratchDir scratch(scratch_parent);
    const std::array<const char*, 3> names{"iolab", "cat", "written"};
    std::array<std::filesystem::path, 3> files;
    for (std::size_t i = 0; i < files.size(); ++i) {
      files[i] = scratch.create_file(names[i]);
      iolab::harness::write_pattern_file(files[i], size, kSeed);
    }
    iolab::harness::make_warm_from_disk(files[0]);
    evict_and_cat(files[1]);
    for (const auto& f : files)
      if (double r = iolab::harness::resident_fraction(f); r < 0.99)
        std::fprintf(stderr, "warm_file_state: %s only %.0f%% resident\n", f.c_str(), 100 * r);

    io::Buffer buf(block, io::BufferKind::Aligned);
    std::array<std::vector<double>, 3> wall, cpu;
    std::array<std::vector<double>, 3> ratio;  // per round, against iolab's file
    std::printf("round file: ops/s ops/CPU-s (bare %zu-byte pread loop over %llu bytes)\n", block,
                static_cast<unsigned long long>(size));
    for (unsigned round = 0; round < rounds; ++round) {
      std::array<Pass, 3> got{};
      for (std::size_t k = 0; k < files.size(); ++k) {
        const std::size_t i = (round + k) % files.size();  // rotate who goes first
        got[i] = bare_pread_pass(files[i], size, buf.data(), block);
        wall[i].push_back(got[i].ops_per_s);
        cpu[i].push_back(got[i].ops_per_cpu_s);
        std::printf("%u %s: %.0f %.0f\n", round + 1, names[i], got[i].ops_per_s, got[i].ops_per_cpu_s);
      }
      for (std::size_t i = 0; i < files.size(); ++i) ratio[i].push_back(got[i].ops_per_s / got[0].ops_per_s);
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
      std::string rounds_text;
      for (double r : ratio[i]) rounds_text += (rounds_text.empty() ? "" : ", ") + std::to_string(r).substr(0, 4);
      std::printf("%-8s median %.0f ops/s, %.0f ops/CPU-s; vs iolab's file %.2fx (rounds %s); %s\n", names[i],
                  median(wall[i]), median(cpu[i]), median(ratio[i]), rounds_text.c_str(),
                  census_text(folio_census(files[i], size), size).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warm_file_state: %s\n", e.what());
    return 1;
  }
  return 0;
}
