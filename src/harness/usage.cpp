#include "iolab/harness/usage.h"

#include <sys/stat.h>

#include "iolab/base/proc.h"

namespace iolab::harness {
namespace {
double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

// The stat file of the watched device ("" = none); set once, before measuring.
std::string& device_stat() {
  static std::string path;
  return path;
}
}  // namespace

std::string watch_device(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";
  const std::string base = proc::block_device_dir(st.st_dev).string();
  std::error_code ec;
  if (!std::filesystem::exists(base + "/stat", ec)) return "";  // not a block device (tmpfs, overlay, ...)
  device_stat() = base + "/stat";
  auto target = std::filesystem::read_symlink(base, ec);
  return ec ? base : target.filename().string();
}

Usage& Usage::operator+=(const Usage& o) {
  seconds += o.seconds;
  user_s += o.user_s;
  sys_s += o.sys_s;
  minor_faults += o.minor_faults;
  major_faults += o.major_faults;
  voluntary_ctx += o.voluntary_ctx;
  involuntary_ctx += o.involuntary_ctx;
  syscalls_read += o.syscalls_read;
  syscalls_write += o.syscalls_write;
  storage_read_bytes += o.storage_read_bytes;
  dirtied_bytes += o.dirtied_bytes;
  have_proc_io = have_proc_io || o.have_proc_io;
  device_read_bytes += o.device_read_bytes;
  device_write_bytes += o.device_write_bytes;
  have_device = have_device || o.have_device;
  return *this;
}

void UsageMeter::read_rusage(Snapshot& s) const { ::getrusage(scope_ == Scope::Thread ? RUSAGE_THREAD : RUSAGE_SELF, &s.ru); }

void UsageMeter::read_counters(Snapshot& s) const {
  if (auto io = proc::read_io(scope_ == Scope::Thread ? proc::IoScope::Thread : proc::IoScope::Process)) {
    s.syscr = io->syscr;
    s.syscw = io->syscw;
    s.read_bytes = io->read_bytes;
    s.write_bytes = io->write_bytes;
    s.cancelled = io->cancelled_write_bytes;
    s.have_io = true;
  }
  if (!device_stat().empty())
    if (auto sectors = proc::read_block_sectors(device_stat())) {
      s.device_read_sectors = sectors->read;
      s.device_write_sectors = sectors->written;
      s.have_device = true;
    }
}

std::uint64_t UsageMeter::self_overhead(Scope scope) {
  // Counted for the current set of files a snapshot reads (the device's stat may be added later).
  // An empty region, its counters read in the order start() and stop() read them.
  UsageMeter m(scope);
  Snapshot a, b;
  m.read_counters(a);
  m.read_rusage(a);
  m.read_rusage(b);
  m.read_counters(b);
  return b.syscr - a.syscr;
}

// The CPU and the clock are read closest to the region, the /proc and sysfs
// files (several system calls and a parse) farther out, so the region's CPU
// holds none of iolab's own bookkeeping.
void UsageMeter::start() {
  before_ = Snapshot{};
  read_counters(before_);
  read_rusage(before_);
  t0_ = std::chrono::steady_clock::now();
}

Usage UsageMeter::stop() {
  auto t1 = std::chrono::steady_clock::now();
  Snapshot after;
  read_rusage(after);
  read_counters(after);
  Usage u;
  u.seconds = std::chrono::duration<double>(t1 - t0_).count();
  u.user_s = seconds(after.ru.ru_utime) - seconds(before_.ru.ru_utime);
  u.sys_s = seconds(after.ru.ru_stime) - seconds(before_.ru.ru_stime);
  u.minor_faults = after.ru.ru_minflt - before_.ru.ru_minflt;
  u.major_faults = after.ru.ru_majflt - before_.ru.ru_majflt;
  u.voluntary_ctx = after.ru.ru_nvcsw - before_.ru.ru_nvcsw;
  u.involuntary_ctx = after.ru.ru_nivcsw - before_.ru.ru_nivcsw;
  u.have_proc_io = before_.have_io && after.have_io;
  if (u.have_proc_io) {
    // Reading /proc/.../io (and the device's stat) is itself a read call or
    // two; an empty region measured once tells how many, and they are not
    // charged to the region.
    static std::uint64_t overhead[2][2] = {{~0ull, ~0ull}, {~0ull, ~0ull}};
    std::uint64_t& own = overhead[scope_ == Scope::Thread ? 0 : 1][device_stat().empty() ? 0 : 1];
    if (own == ~0ull) own = self_overhead(scope_);
    std::uint64_t reads = after.syscr - before_.syscr;
    u.syscalls_read = reads > own ? reads - own : 0;
    u.syscalls_write = after.syscw - before_.syscw;
    u.storage_read_bytes = after.read_bytes - before_.read_bytes;
    std::uint64_t dirtied = after.write_bytes - before_.write_bytes, cancelled = after.cancelled - before_.cancelled;
    u.dirtied_bytes = dirtied > cancelled ? dirtied - cancelled : 0;
  }
  u.have_device = before_.have_device && after.have_device;
  if (u.have_device) {
    u.device_read_bytes = (after.device_read_sectors - before_.device_read_sectors) * 512;
    u.device_write_bytes = (after.device_write_sectors - before_.device_write_sectors) * 512;
  }
  return u;
}

}  // namespace iolab::harness
