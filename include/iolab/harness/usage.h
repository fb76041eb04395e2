// What one timed region cost: wall time, CPU, faults, context switches, and
// the kernel's own count of read/write system calls and storage bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <sys/resource.h>

namespace iolab::harness {

struct Usage {
  double seconds = 0;  // steady-clock wall time
  double user_s = 0, sys_s = 0;
  std::int64_t minor_faults = 0, major_faults = 0;
  std::int64_t voluntary_ctx = 0, involuntary_ctx = 0;
  // From /proc/<self or thread>/io: read-like and write-like system calls,
  // and bytes that really went to or came from storage (0 for a warm read).
  std::uint64_t syscalls_read = 0, syscalls_write = 0;
  std::uint64_t storage_read_bytes = 0, storage_write_bytes = 0;
  bool have_proc_io = false;

  Usage& operator+=(const Usage& o);
};

// Measures the region between start() and stop(). Scope::Thread counts only
// the calling thread (RUSAGE_THREAD, /proc/thread-self/io); Scope::Process
// the whole process. Reading the counters is outside the timed interval.
class UsageMeter {
 public:
  enum class Scope { Thread, Process };
  explicit UsageMeter(Scope scope = Scope::Process) : scope_(scope) {}
  void start();
  Usage stop();

 private:
  struct Snapshot {
    rusage ru{};
    std::uint64_t syscr = 0, syscw = 0, read_bytes = 0, write_bytes = 0;
    bool have_io = false;
  };
  Snapshot snapshot() const;
  static std::uint64_t self_overhead(Scope scope);
  Scope scope_;
  Snapshot before_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace iolab::harness
