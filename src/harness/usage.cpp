#include "iolab/harness/usage.h"

#include <cstdio>
#include <cstring>

namespace iolab::harness {
namespace {
double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }
}  // namespace

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
  storage_write_bytes += o.storage_write_bytes;
  have_proc_io = have_proc_io || o.have_proc_io;
  return *this;
}

UsageMeter::Snapshot UsageMeter::snapshot() const {
  Snapshot s;
  ::getrusage(scope_ == Scope::Thread ? RUSAGE_THREAD : RUSAGE_SELF, &s.ru);
  // stdio here is fine: this runs outside the timed interval.
  if (FILE* f = std::fopen(scope_ == Scope::Thread ? "/proc/thread-self/io" : "/proc/self/io", "re")) {
    char key[64];
    unsigned long long v = 0;
    while (std::fscanf(f, "%63[^:]: %llu\n", key, &v) == 2) {
      if (!std::strcmp(key, "syscr")) s.syscr = v;
      else if (!std::strcmp(key, "syscw")) s.syscw = v;
      else if (!std::strcmp(key, "read_bytes")) s.read_bytes = v;
      else if (!std::strcmp(key, "write_bytes")) s.write_bytes = v;
    }
    s.have_io = true;
    std::fclose(f);
  }
  return s;
}

std::uint64_t UsageMeter::self_overhead(Scope scope) {
  UsageMeter m(scope);
  Snapshot a = m.snapshot();
  Snapshot b = m.snapshot();
  return b.syscr - a.syscr;
}

void UsageMeter::start() {
  before_ = snapshot();
  t0_ = std::chrono::steady_clock::now();
}

Usage UsageMeter::stop() {
  auto t1 = std::chrono::steady_clock::now();
  Snapshot after = snapshot();
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
    // Reading /proc/.../io is itself a read call or two; an empty region
    // measured once tells how many, and they are not charged to the region.
    static const std::uint64_t overhead[2] = {self_overhead(Scope::Thread), self_overhead(Scope::Process)};
    std::uint64_t own = overhead[scope_ == Scope::Thread ? 0 : 1];
    std::uint64_t reads = after.syscr - before_.syscr;
    u.syscalls_read = reads > own ? reads - own : 0;
    u.syscalls_write = after.syscw - before_.syscw;
    u.storage_read_bytes = after.read_bytes - before_.read_bytes;
    u.storage_write_bytes = after.write_bytes - before_.write_bytes;
  }
  return u;
}

}  // namespace iolab::harness
