// The commit-log floors (commitlog_floors.h): plain loops, no iolab code but
// the CRC32C function and the error type.
#include "commitlog_floors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "iolab/base/crc32c.h"
#include "iolab/base/error.h"

namespace iolab_bench {
namespace {

using iolab::Error;
constexpr std::size_t kHeader = 16, kPage = 4096;

double thread_cpu() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double seconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// The bodies: 1 MiB of pseudo-random bytes, message i at (i * size) mod the
// period, so the copies read memory as a producer's messages would.
struct Bodies {
  std::vector<std::byte> bytes;
  std::size_t size, count;
  explicit Bodies(std::size_t message_size) : size(message_size), count(std::max<std::size_t>(1, (1u << 20) / message_size)) {
    bytes.resize(size * count);
    std::mt19937_64 rng(11);
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
  }
  const std::byte* at(std::uint64_t i) const { return bytes.data() + (i % count) * size; }
};

// A record at `out`: length, CRC32C of the body, sequence, body.
inline void put_record(std::byte* out, const std::byte* body, std::size_t size, std::uint64_t seq) {
  std::uint32_t len = static_cast<std::uint32_t>(size);
  std::uint32_t crc = iolab::crc32c({body, size});
  std::memcpy(out, &len, 4);
  std::memcpy(out + 4, &crc, 4);
  std::memcpy(out + 8, &seq, 8);
  std::memcpy(out + kHeader, body, size);
}

// The timed region's clocks: wall, the process's rusage, the producer's CPU.
struct Timed {
  rusage r0{};
  std::chrono::steady_clock::time_point t0;
  double cpu0 = 0;
  void start() {
    ::getrusage(RUSAGE_SELF, &r0);
    cpu0 = thread_cpu();
    t0 = std::chrono::steady_clock::now();
  }
  void stop(FloorResult& out) {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.producer_cpu_s = thread_cpu() - cpu0;
    rusage r1{};
    ::getrusage(RUSAGE_SELF, &r1);
    out.user_s = seconds_of(r1.ru_utime) - seconds_of(r0.ru_utime);
    out.system_s = seconds_of(r1.ru_stime) - seconds_of(r0.ru_stime);
    out.minor_faults = r1.ru_minflt - r0.ru_minflt;
  }
};

struct FreshFile {
  std::filesystem::path path;
  int fd = -1;
  FreshFile(const std::filesystem::path& dir, std::string_view name) : path(dir / name) {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("create", path.string(), errno);
  }
  ~FreshFile() {
    ::close(fd);
    ::unlink(path.c_str());
  }
  void allocate(std::uint64_t bytes) {
    if (int e = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); e != 0) throw Error("fallocate", path.string(), e);
  }
  void pwrite_all(const std::byte* p, std::size_t n, std::uint64_t off) {
    while (n > 0) {
      ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw Error("pwrite", path.string(), errno);
      p += w, n -= static_cast<std::size_t>(w), off += static_cast<std::uint64_t>(w);
    }
  }
};

// A helper thread that runs `round` every `interval_ms`, or sooner when woken, until stopped.
class Helper {
 public:
  template <typename F>
  void start(double interval_ms, F round) {
    interval_ = std::chrono::microseconds(static_cast<long>(interval_ms * 1000));
    thread_ = std::thread([this, round] {
      std::unique_lock lock(mu_);
      for (;;) {
        cv_.wait_for(lock, interval_, [&] { return stop_ || woken_; });
        bool stopping = stop_;
        woken_ = false;
        lock.unlock();
        round();
        cpu_.store(thread_cpu(), std::memory_order_relaxed);
        lock.lock();
        if (stopping) return;
      }
    });
  }
  void wake() {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_one();
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }
  ~Helper() { stop(); }
  double cpu() const { return cpu_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, woken_ = false;
  std::chrono::microseconds interval_{};
  std::atomic<double> cpu_{0};
  std::thread thread_;
};

FloorResult pwrite_floor(const FloorConfig& c, const std::filesystem::path& dir, const Bodies& bodies) {
  FreshFile f(dir, "floor-pwrite");
  const std::size_t rec = kHeader + c.message_size;
  std::vector<std::byte> batch(std::max(c.batch, rec));
  FloorResult r;
  Timed t;
  t.start();
  std::size_t fill = 0;
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < c.messages; ++i) {
    if (fill + rec > batch.size()) {
      f.pwrite_all(batch.data(), fill, off);
      ++r.syscalls;
      off += fill, fill = 0;
    }
    put_record(batch.data() + fill, bodies.at(i), c.message_size, i + 1);
    fill += rec;
  }
  f.pwrite_all(batch.data(), fill, off);
  ++r.syscalls;
  t.stop(r);
  r.messages = c.messages;
  return r;
}

FloorResult mmap_floor(const FloorConfig& c, const std::filesystem::path& dir, const Bodies& bodies, bool warm) {
  const std::size_t rec = kHeader + c.message_size;
  const std::uint64_t need = c.messages * rec;
  if (need > c.segment) throw Error("mmap floor", dir.string(), "the run is larger than one segment", EINVAL);
  FreshFile f(dir, "floor-mmap");
  f.allocate(c.segment);
  void* m = ::mmap(nullptr, c.segment, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd, 0);
  if (m == MAP_FAILED) throw Error("mmap", f.path.string(), errno);
  auto* base = static_cast<std::byte*>(m);
  if (warm) {
#ifdef MADV_POPULATE_WRITE
    if (::madvise(base, c.segment, MADV_POPULATE_WRITE) != 0)
#endif
      for (std::uint64_t p = 0; p < c.segment; p += kPage) base[p] = std::byte{0};
  }
  std::atomic<std::uint64_t> written{0};
  std::uint64_t synced = 0;
  FloorResult r;
  Helper flusher;
  if (c.msync_ms > 0)
    flusher.start(c.msync_ms, [&] {
      std::uint64_t w = written.load(std::memory_order_acquire);
      if (w - synced < 4 * kPage) return;
      std::uint64_t from = synced / kPage * kPage;
      if (::msync(base + from, w - from, MS_SYNC) != 0) {  // a helper thread cannot throw to the run
        std::fprintf(stderr, "commitlog_bench: msync %s: %s\n", f.path.c_str(), std::strerror(errno));
        std::_Exit(1);
      }
      ++r.msyncs;
      synced = w;
    });
  Timed t;
  t.start();
  std::uint64_t at = 0;
  for (std::uint64_t i = 0; i < c.messages; ++i) {
    put_record(base + at, bodies.at(i), c.message_size, i + 1);
    at += rec;
    written.store(at, std::memory_order_release);
  }
  t.stop(r);
  r.helper_cpu_s = flusher.cpu();
  flusher.stop();
  r.syscalls = r.msyncs;
  ::munmap(m, c.segment);
  r.messages = c.messages;
  return r;
}

FloorResult ring_floor(const FloorConfig& c, const std::filesystem::path& dir, const Bodies& bodies) {
  const std::size_t rec = kHeader + c.message_size, cap = c.ring;
  if (2 * rec > cap) throw Error("ring floor", dir.string(), "a record larger than half the ring", EINVAL);
  FreshFile f(dir, "floor-ring");
  f.allocate(std::max<std::uint64_t>(c.segment, c.messages * rec));
  auto* ring = static_cast<std::byte*>(std::aligned_alloc(kPage, (cap + kPage - 1) / kPage * kPage));
  std::memset(ring, 0, cap);  // faulted in before, as the design's buffer is
  std::atomic<std::uint64_t> written{0}, committed{0};
  std::atomic<bool> producer_waits{false};
  std::mutex room_mu;
  std::condition_variable room_cv;
  FloorResult r;
  Helper committer;
  committer.start(c.commit_interval_ms, [&] {
    std::uint64_t w = written.load(std::memory_order_acquire), from = committed.load(std::memory_order_relaxed);
    while (from < w) {
      std::uint64_t at = from % cap, n = std::min(w - from, cap - at);
      f.pwrite_all(ring + at, n, from);
      ++r.syscalls;
      from += n;
    }
    committed.store(w, std::memory_order_release);
    if (producer_waits.load(std::memory_order_acquire)) {
      std::lock_guard lock(room_mu);
      room_cv.notify_one();
    }
  });
  Timed t;
  t.start();
  std::uint64_t w = 0, woke_for = UINT64_MAX;
  std::vector<std::byte> one(rec);
  for (std::uint64_t i = 0; i < c.messages; ++i) {
    std::uint64_t done = committed.load(std::memory_order_acquire);
    if (w + rec - done > cap) {
      committer.wake();
      std::unique_lock lock(room_mu);
      producer_waits.store(true, std::memory_order_release);
      room_cv.wait(lock, [&] { return w + rec - committed.load(std::memory_order_acquire) <= cap; });
      producer_waits.store(false, std::memory_order_relaxed);
      done = committed.load(std::memory_order_acquire);
    }
    std::uint64_t at = w % cap;
    if (at + rec <= cap) {
      put_record(ring + at, bodies.at(i), c.message_size, i + 1);
    } else {  // the record wraps: built aside, copied in two pieces
      put_record(one.data(), bodies.at(i), c.message_size, i + 1);
      std::memcpy(ring + at, one.data(), cap - at);
      std::memcpy(ring, one.data() + (cap - at), rec - (cap - at));
    }
    w += rec;
    written.store(w, std::memory_order_release);
    // Half full: wake the committer once per committed position, not per record.
    if (w - done >= cap / 2 && done != woke_for) {
      woke_for = done;
      committer.wake();
    }
  }
  t.stop(r);
  r.helper_cpu_s = committer.cpu();
  committer.stop();
  std::free(ring);
  r.messages = c.messages;
  return r;
}

}  // namespace

std::string_view to_string(Floor f) noexcept {
  switch (f) {
    case Floor::Pwrite: return "floor-pwrite";
    case Floor::Mmap: return "floor-mmap";
    case Floor::MmapWarm: return "floor-mmap-warm";
    case Floor::Ring: return "floor-ring";
  }
  return "?";
}

Floor parse_floor(std::string_view name) {
  for (Floor f : kAllFloors)
    if (to_string(f) == name || to_string(f).substr(6) == name) return f;
  throw iolab::UsageError("floor '" + std::string(name) + "'", "one of pwrite, mmap, mmap-warm, ring");
}

FloorResult run_floor(Floor f, const FloorConfig& c, const std::filesystem::path& dir) {
  const Bodies bodies(c.message_size);
  switch (f) {
    case Floor::Pwrite: return pwrite_floor(c, dir, bodies);
    case Floor::Mmap: return mmap_floor(c, dir, bodies, false);
    case Floor::MmapWarm: return mmap_floor(c, dir, bodies, true);
    case Floor::Ring: return ring_floor(c, dir, bodies);
  }
  return {};
}

}  // namespace iolab_bench
