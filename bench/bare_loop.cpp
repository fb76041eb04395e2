// The yardstick for iolab's own overhead: a bare C++ warm sequential pread
// loop, aligned buffer, no per-call timing, no verification, no abstraction.
// iolab's `run --method pread --op read` should reach >= 85% of its ops/s at
// 4 KiB and >= 95% at 1 MiB (docs/performance.md, "Harness overhead").
//
//   bare_loop FILE BLOCK [REPS]
//
// FILE: read as it is when it exists (e.g. the file fio uses); otherwise
// created (O_EXCL), filled with 1 GiB of pseudo-random bytes, and removed at
// the end. The file is read once untimed (warm), then REPS timed passes
// (default 5); prints each pass and the median ops/s and GiB/s.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const char* what, const char* path) {
  std::fprintf(stderr, "bare_loop: %s %s: %s\n", what, path, std::strerror(errno));
  std::exit(1);
}

std::size_t parse_size(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  std::size_t mult = 1;
  switch (end && *end ? *end : ' ') {
    case 'k': case 'K': mult = std::size_t{1} << 10; break;
    case 'm': case 'M': mult = std::size_t{1} << 20; break;
    case 'g': case 'G': mult = std::size_t{1} << 30; break;
    default: break;
  }
  return static_cast<std::size_t>(v * static_cast<double>(mult));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bare_loop FILE BLOCK [REPS]\n");
    return 2;
  }
  const char* path = argv[1];
  const std::size_t block = parse_size(argv[2]);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  if (block == 0 || reps < 1) {
    std::fprintf(stderr, "bare_loop: BLOCK and REPS must be positive\n");
    return 2;
  }
  bool created = false;
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
  struct stat st {};
  ::fstat(fd, &st);
  const off_t size = st.st_size;

  void* mem = nullptr;
  if (::posix_memalign(&mem, 4096, block) != 0) die("allocate for", path);
  char* buf = static_cast<char*>(mem);
  auto pass = [&] {
    std::size_t ops = 0;
    for (off_t off = 0; off < size;) {
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
  // CPU seconds (user + system) of the process: on a shared machine, ops per
  // CPU second is steadier than ops per wall second.
  auto cpu = [] {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto sec = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; };
    return sec(ru.ru_utime) + sec(ru.ru_stime);
  };
  pass();  // warm: the whole file into the page cache
  std::vector<double> rates, gibs, cpu_rates;
  for (int r = 0; r < reps; ++r) {
    double c0 = cpu();
    auto t0 = std::chrono::steady_clock::now();
    std::size_t ops = pass();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double c = cpu() - c0;
    rates.push_back(static_cast<double>(ops) / s);
    gibs.push_back(static_cast<double>(size) / s / (1u << 30));
    cpu_rates.push_back(c > 0 ? static_cast<double>(ops) / c : 0);
    std::printf("pass %d: %zu ops in %.4f s (%.4f s CPU) = %.0f ops/s, %.2f GiB/s\n", r + 1, ops, s, c, rates.back(),
                gibs.back());
  }
  std::sort(rates.begin(), rates.end());
  std::sort(gibs.begin(), gibs.end());
  std::sort(cpu_rates.begin(), cpu_rates.end());
  std::printf("median: %.0f ops/s, %.2f GiB/s, %.0f ops per CPU second (block %zu, file %lld bytes, warm, aligned buffer)\n",
              rates[rates.size() / 2], gibs[gibs.size() / 2], cpu_rates[cpu_rates.size() / 2], block,
              static_cast<long long>(size));
  std::free(mem);
  ::close(fd);
  if (created) ::unlink(path);
  return 0;
}
