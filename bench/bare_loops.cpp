// The yardsticks for iolab's engine: the loops a careful engineer would write
// by hand, with no iolab code, no abstraction, no per-call timing and no
// verification. bench/engine_vs_bare.sh runs each beside `iolab run` on the
// same kind of file; the goal (docs/performance.md) is iolab >= 0.95x per
// CPU second.
//
//   bare_loops pread FILE BLOCK [PASSES]       warm pread of the whole file
//   bare_loops mmap FILE BLOCK [PASSES]        mmap + memcpy out in BLOCK chunks (warm)
//   bare_loops fwrite DIR SIZE BLOCK [PASSES]  fwrite of BLOCK bytes into a 4 KiB stdio buffer, to a fresh file
//
// What each pass times matches iolab's timed region of the same experiment
// (docs/results-format.md): reads from the first call through the end of
// the mapping (made inside, as iolab's mmap method maps on its first read,
// and unmapped inside, as iolab's close() does in the timed region; the
// file is opened once, outside); writes from the first fwrite through fclose
// (the last buffered bytes reach the kernel there), the fresh file created
// before and removed after. FILE is read as it is when it exists (e.g. the
// file iolab's runner or fio made); otherwise it is created (O_EXCL), filled
// with 1 GiB of pseudo-random bytes, and removed at the end. Prints each pass
// and the medians: ops per second, GiB per second, ops per CPU second.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "bench_usage.h"

namespace {

[[noreturn]] void die(const char* what, const char* path) {
  std::fprintf(stderr, "bare_loops: %s %s: %s\n", what, path, std::strerror(errno));
  std::exit(1);
}


using iolab_bench::cpu_seconds;
using iolab_bench::median;

// Runs `passes` timed passes of `pass` (returning ops), with untimed `before`/`after`.
void measure(const char* what, std::size_t bytes, int passes, const std::function<void()>& before,
             const std::function<std::size_t()>& pass, const std::function<void()>& after) {
  std::vector<double> rates, gibs, cpu_rates;
  for (int r = 0; r < passes; ++r) {
    before();
    double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    std::size_t ops = pass();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double c = cpu_seconds() - c0;
    after();
    rates.push_back(static_cast<double>(ops) / s);
    gibs.push_back(static_cast<double>(bytes) / s / (1u << 30));
    cpu_rates.push_back(c > 0 ? static_cast<double>(ops) / c : 0);
    std::printf("pass %d: %zu ops in %.4f s (%.4f s CPU) = %.0f ops/s, %.2f GiB/s\n", r + 1, ops, s, c, rates.back(),
                gibs.back());
  }
  std::printf("median: %.0f ops/s, %.3f GiB/s, %.0f ops per CPU second (%s)\n", median(rates), median(gibs),
              median(cpu_rates), what);
}

// Opens FILE for reading, creating 1 GiB of random bytes when it does not exist.
int open_or_create(const char* path, bool& created) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    int w = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w < 0) die("create", path);
    created = true;
    std::vector<std::uint64_t> chunk((std::size_t{1} << 20) / 8);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 1024; ++i) {
      for (auto& x : chunk) x = rng();
      if (::write(w, chunk.data(), chunk.size() * 8) != static_cast<ssize_t>(chunk.size() * 8)) die("write", path);
    }
    ::fdatasync(w);
    ::close(w);
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) die("open", path);
  return fd;
}

// Warm as iolab makes a file warm: written back, evicted, read once (a file
// still holding the pages its writes made reads slower, and unevenly).
void warm(int fd, std::size_t size, const char* path) {
  if (::fdatasync(fd) != 0 || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) die("evict", path);
  std::vector<char> buf(1 << 20);
  for (off_t off = 0; static_cast<std::size_t>(off) < size;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("warm", path);
    off += n;
  }
}

int reads(bool mapped, const char* path, std::size_t block, int passes) {
  bool created = false;
  int fd = open_or_create(path, created);
  struct stat st {};
  ::fstat(fd, &st);
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  warm(fd, size, path);
  void* mem = nullptr;
  if (::posix_memalign(&mem, 4096, block) != 0) die("allocate for", path);
  char* buf = static_cast<char*>(mem);
  std::size_t checksum = 0;
  auto pread_pass = [&] {
    std::size_t ops = 0;
    for (off_t off = 0; static_cast<std::size_t>(off) < size;) {
      ssize_t n = ::pread(fd, buf, block, off);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("pread", path);
        break;
      }
      off += n;
      ++ops;
    }
    return ops;
  };
  auto mmap_pass = [&] {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) die("mmap", path);
    const char* base = static_cast<const char*>(map);
    std::size_t ops = 0;
    for (std::size_t off = 0; off < size; off += block, ++ops)
      std::memcpy(buf, base + off, std::min(block, size - off));
    ::munmap(map, size);  // the page-table teardown is the reading's cost, timed as iolab times it
    return ops;
  };
  auto use_copies = [&] {
    checksum += static_cast<unsigned char>(buf[0]);  // the copies are used: the loop cannot be dropped
  };
  std::string what = std::string(mapped ? "mmap + memcpy" : "pread") + ", block " + std::to_string(block) + ", file " +
                     std::to_string(size) + " bytes, warm";
  measure(what.c_str(), size, passes, [] {}, mapped ? std::function<std::size_t()>(mmap_pass) : pread_pass, use_copies);
  std::printf("checksum %zu\n", checksum);
  std::free(mem);
  ::close(fd);
  if (created) ::unlink(path);
  return 0;
}

int fwrites(const char* dir, std::size_t size, std::size_t block, int passes) {
  std::string path = std::string(dir) + "/bare-fwrite-" + std::to_string(::getpid());
  // Each offset's own bytes, from a ring of up to 8 MiB as iolab's write
  // source has (so that what is written can be checked): the same memory
  // traffic, where one block written again and again would stay in L1.
  const std::size_t period = std::max(block, std::min<std::size_t>(size, std::size_t{8} << 20) / block * block);
  std::vector<char> data(period + block);
  std::mt19937_64 rng(7);
  for (auto& c : data) c = static_cast<char>(rng());
  FILE* f = nullptr;
  std::vector<char> stdio_buffer(4096);
  auto before = [&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) die("create", path.c_str());
    f = ::fdopen(fd, "w");
    if (f == nullptr) die("fdopen", path.c_str());
    if (std::setvbuf(f, stdio_buffer.data(), _IOFBF, stdio_buffer.size()) != 0) die("setvbuf", path.c_str());
  };
  auto pass = [&] {
    std::size_t ops = 0;
    for (std::size_t done = 0; done < size; done += block, ++ops)
      if (std::fwrite(data.data() + done % period, 1, std::min(block, size - done), f) == 0) die("fwrite", path.c_str());
    if (std::fclose(f) != 0) die("fclose", path.c_str());
    return ops;
  };
  auto after = [&] { ::unlink(path.c_str()); };
  std::string what = "fwrite, block " + std::to_string(block) + " into a 4096-byte stdio buffer, " + std::to_string(size) +
                     " bytes to a fresh file";
  measure(what.c_str(), size, passes, before, pass, after);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The bare loops iolab's fast paths are held against (bench/engine_vs_bare.sh)"};
  app.require_subcommand(1);
  std::string path;
  std::size_t size = 0, block = 0;
  int passes = 5;
  CLI::App* read_cmds[2];
  for (int i = 0; i < 2; ++i) {
    auto* cmd = app.add_subcommand(i == 0 ? "pread" : "mmap", i == 0 ? "pread(2) of FILE in BLOCK calls" : "FILE mapped, BLOCK copies out");
    cmd->add_option("FILE", path, "The file to read")->required();
    iolab_bench::add_size(*cmd, "BLOCK", block, "Bytes per call")->required();
    cmd->add_option("PASSES", passes, "Timed passes (default 5)")->check(CLI::PositiveNumber);
    read_cmds[i] = cmd;
  }
  auto* fwrite_cmd = app.add_subcommand("fwrite", "fwrite(3) of SIZE bytes in BLOCK calls into a fresh file in DIR");
  fwrite_cmd->add_option("DIR", path, "Directory for the file")->required();
  iolab_bench::add_size(*fwrite_cmd, "SIZE", size, "Bytes per pass")->required();
  iolab_bench::add_size(*fwrite_cmd, "BLOCK", block, "Bytes per call")->required();
  fwrite_cmd->add_option("PASSES", passes, "Timed passes (default 5)")->check(CLI::PositiveNumber);
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  if (*fwrite_cmd) return fwrites(path.c_str(), size, block, passes);
  return reads(static_cast<bool>(*read_cmds[1]), path.c_str(), block, passes);
}
