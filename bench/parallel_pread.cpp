// The anchor for `iolab run parallel` (issue 40 item 7): warm 1 MiB preads of
// one shared file by one thread, and by two threads each reading its half,
// with no iolab code. Three ways to run the two threads, interleaved pass by
// pass so the machine's load falls on each alike:
//
//   one     the calling thread reads the whole file
//   spawn   a thread created for every pass beside the calling thread, both
//           released by a std::barrier whose completion reads the clock
//           (what iolab's team did before issue 40)
//   pool    one thread made once beside the calling thread, woken for every
//           pass, both meeting at a start gate they spin at (up to 500 µs),
//           each reading the same half through its own descriptor (what
//           iolab's team does since issue 40)
//
//   parallel_pread [--dir DIR] [--size 64m] [--block 1m] [--passes 200] [--rounds 5]
//
// A pass is timed from the release to the last thread's end (one's: around
// its loop); every pass reads every byte of the file once. Prints each
// round's median GB/s (10^9 bytes per second) per way, and the medians.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.h"
#include "iolab/base/units.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string dir = "/tmp";
  std::uint64_t size = 64ull << 20, block = 1ull << 20;
  unsigned passes = 200, rounds = 5;
};

void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

// Reads [offset, offset + length) in `block` calls into `buf`.
void read_range(int fd, std::uint64_t offset, std::uint64_t length, std::uint64_t block, char* buf) {
  for (std::uint64_t at = offset; at < offset + length; at += block) {
    std::uint64_t n = std::min(block, offset + length - at);
    if (::pread(fd, buf, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) die("pread");
  }
}

double process_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

char* aligned_buffer(std::uint64_t bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, 4096, bytes) != 0) die("posix_memalign");
  std::memset(p, 0, bytes);
  return static_cast<char*>(p);
}

// A thread made once beside the caller (worker 0), as iolab's team since
// issue 40: released for every pass by a counter it sleeps on (futex), the
// two meeting at a start gate they spin at; each always reads the same half
// through its own descriptor. pass() returns the pass's seconds.
class Pool {
 public:
  Pool(const std::string& path, const Args& a) : a_(a) {
    for (unsigned w = 0; w < 2; ++w) {
      buf_[w] = aligned_buffer(a.block);
      fd_[w] = ::open(path.c_str(), O_RDONLY);
      if (fd_[w] < 0) die("open");
    }
    thread_ = std::thread([this] { loop(); });
  }
  ~Pool() {
    quit_ = true;
    generation_.fetch_add(1);
    generation_.notify_all();
    thread_.join();
    for (int fd : fd_) ::close(fd);
  }
  double pass() {
    arrived_.store(0);
    open_.store(false);
    done_.store(false);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    gate();
    read_half(0);
    while (!done_.load(std::memory_order_acquire)) done_.wait(false);
    return std::chrono::duration<double>(std::max(end_[0], end_[1]) - start_).count();
  }

 private:
  void gate() {
    if (arrived_.fetch_add(1) == 1) {
      start_ = Clock::now();
      open_.store(true, std::memory_order_release);
      open_.notify_all();
      return;
    }
    const auto until = Clock::now() + std::chrono::microseconds(500);
    for (unsigned spins = 0; !open_.load(std::memory_order_acquire); ++spins) {
      __builtin_ia32_pause();
      if (spins % 256 == 255 && Clock::now() >= until) break;
    }
    while (!open_.load(std::memory_order_acquire)) open_.wait(false);
  }
  void read_half(unsigned w) {
    const std::uint64_t half = a_.size / 2;
    read_range(fd_[w], w * half, half, a_.block, buf_[w]);
    end_[w] = Clock::now();
  }
  void loop() {
    std::uint64_t seen = 0;
    for (;;) {
      generation_.wait(seen, std::memory_order_acquire);
      seen = generation_.load(std::memory_order_acquire);
      if (quit_) return;
      gate();
      read_half(1);
      done_.store(true, std::memory_order_release);
      done_.notify_all();
    }
  }
  const Args& a_;
  int fd_[2]{};
  char* buf_[2]{};
  std::thread thread_;
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  alignas(64) std::atomic<unsigned> arrived_{0};
  alignas(64) std::atomic<bool> open_{false};
  alignas(64) std::atomic<bool> done_{false};
  alignas(64) Clock::time_point end_[2];
  Clock::time_point start_;
  std::atomic<bool> quit_{false};
};

// A thread per pass beside the caller, a barrier to start: iolab's team before issue 40.
double spawn_pass(int fd, const Args& a, char* bufs[2]) {
  Clock::time_point start, end[2];
  std::barrier begin(2, [&]() noexcept { start = Clock::now(); });
  auto worker = [&](unsigned w) {
    begin.arrive_and_wait();
    const std::uint64_t half = a.size / 2;
    read_range(fd, w * half, half, a.block, bufs[w]);
    end[w] = Clock::now();
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  return std::chrono::duration<double>(std::max(end[0], end[1]) - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Warm preads of one shared file by one thread and by two (issue 40 item 7's anchor)"};
  app.add_option("--dir", a.dir, "Where the scratch file goes (default /tmp)");
  iolab_bench::add_size(app, "--size", a.size, "File size (default 64m)");
  iolab_bench::add_size(app, "--block", a.block, "Bytes per pread (default 1m)");
  app.add_option("--passes", a.passes, "Passes of each way per round")->check(CLI::PositiveNumber);
  app.add_option("--rounds", a.rounds, "Rounds, the ways interleaved pass by pass")->check(CLI::PositiveNumber);
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  if (a.size % (2 * a.block) != 0) {
    std::fprintf(stderr, "parallel_pread: --size must be a multiple of twice --block\n");
    return 2;
  }

  std::string path = a.dir + "/parallel_pread." + std::to_string(::getpid());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) die("open");
  {
    std::vector<char> chunk(a.block);
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>(i * 131 + 7);
    for (std::uint64_t at = 0; at < a.size; at += a.block)
      if (::pwrite(fd, chunk.data(), a.block, static_cast<off_t>(at)) != static_cast<ssize_t>(a.block)) die("pwrite");
    if (::fdatasync(fd) != 0) die("fdatasync");
  }
  char* one_buf = aligned_buffer(a.block);
  char* spawn_bufs[2] = {aligned_buffer(a.block), aligned_buffer(a.block)};
  read_range(fd, 0, a.size, a.block, one_buf);  // warm
  Pool pool(path, a);

  const double bytes = static_cast<double>(a.size);
  std::vector<double> all_one, all_spawn, all_pool;
  std::printf("%u rounds of %u passes each, interleaved; %s file, %s preads; GB/s of the median pass (GB per "
              "process-CPU-second over the round)\n",
              a.rounds, a.passes, iolab::format_bytes(bytes).c_str(), iolab::format_bytes(static_cast<double>(a.block)).c_str());
  for (unsigned round = 0; round < a.rounds; ++round) {
    std::vector<double> one, spawn, pooled;
    double cpu[3] = {0, 0, 0};
    for (unsigned p = 0; p < a.passes; ++p) {
      double c0 = process_cpu_s();
      auto t0 = Clock::now();
      read_range(fd, 0, a.size, a.block, one_buf);
      one.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      double c1 = process_cpu_s();
      spawn.push_back(spawn_pass(fd, a, spawn_bufs));
      double c2 = process_cpu_s();
      pooled.push_back(pool.pass());
      double c3 = process_cpu_s();
      cpu[0] += c1 - c0;
      cpu[1] += c2 - c1;
      cpu[2] += c3 - c2;
    }
    const double all = bytes * a.passes / 1e9;
    double o = bytes / median(one) / 1e9, s = bytes / median(spawn) / 1e9, q = bytes / median(pooled) / 1e9;
    std::printf("round %u: one %.1f (%.1f)  spawn %.1f (%.1f) %.2fx  pool %.1f (%.1f) %.2fx\n", round + 1, o, all / cpu[0], s,
                all / cpu[1], s / o, q, all / cpu[2], q / o);
    all_one.push_back(o);
    all_spawn.push_back(s);
    all_pool.push_back(q);
  }
  double o = median(all_one), s = median(all_spawn), q = median(all_pool);
  std::printf("median of rounds: one %.1f GB/s, spawn %.1f GB/s (%.2fx), pool %.1f GB/s (%.2fx)\n", o, s, s / o, q, q / o);
  ::close(fd);
  ::unlink(path.c_str());
  return 0;
}
