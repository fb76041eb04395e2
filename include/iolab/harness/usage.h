// What one timed region cost: wall time, CPU, faults, context switches, and
// the kernel's own count of read/write system calls and storage bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/resource.h>

namespace iolab::harness {

struct Usage {
  double seconds = 0;  // steady-clock wall time
  double user_s = 0, sys_s = 0;
  std::int64_t minor_faults = 0, major_faults = 0;
  std::int64_t voluntary_ctx = 0, involuntary_ctx = 0;
  // From /proc/<self or thread>/io: read-like and write-like system calls;
  // bytes the process had fetched from storage (0 for a warm read); and
  // page-cache bytes it dirtied (write_bytes - cancelled_write_bytes), which
  // Linux charges when a page is dirtied, NOT when it reaches the device.
  std::uint64_t syscalls_read = 0, syscalls_write = 0;
  std::uint64_t storage_read_bytes = 0, dirtied_bytes = 0;
  bool have_proc_io = false;
  // The watched block device (watch_device): bytes it really read and wrote
  // in the interval, for every process on the machine.
  std::uint64_t device_read_bytes = 0, device_write_bytes = 0;
  bool have_device = false;

  Usage& operator+=(const Usage& o);
};

// From now on, every UsageMeter also counts what the block device holding
// `dir` read and wrote (/sys/dev/block/<major>:<minor>/stat). Returns the
// device's name, or "" when there is none (tmpfs, overlay): then nothing is
// counted.
std::string watch_device(const std::filesystem::path& dir);

// Measures the region between start() and stop(). Scope::Thread counts only
// the calling thread (RUSAGE_THREAD, /proc/thread-self/io); Scope::Process
// the whole process. Reading the counters is outside the timed interval, and
// outside the CPU interval too: getrusage is the last read at start() and
// the first at stop().
class UsageMeter {
 public:
  enum class Scope { Thread, Process };
  explicit UsageMeter(Scope scope = Scope::Process) : scope_(scope) {}
  virtual ~UsageMeter() = default;
  void start();
  Usage stop();

 protected:
  struct Snapshot {
    rusage ru{};
    std::uint64_t syscr = 0, syscw = 0, read_bytes = 0, write_bytes = 0, cancelled = 0;
    bool have_io = false;
    std::uint64_t device_read_sectors = 0, device_write_sectors = 0;
    bool have_device = false;
  };
  // The two readings, virtual so a test can see the order they come in.
  virtual void read_rusage(Snapshot& s) const;    // getrusage: CPU, faults, context switches
  virtual void read_counters(Snapshot& s) const;  // /proc/<self|thread-self>/io and the watched device's stat

 private:
  static std::uint64_t self_overhead(Scope scope);
  Scope scope_;
  Snapshot before_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace iolab::harness
