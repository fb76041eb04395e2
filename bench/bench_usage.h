// What the bench programs read about themselves, with no iolab code (so
// bare_loops stays a bare loop): CPU seconds and minor faults of the process,
// and the median of a sample.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <vector>

namespace iolab_bench {

// CPU seconds (user + system) of the process: on a shared machine, ops per
// CPU second is steadier than ops per wall second.
inline double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

inline long minor_faults() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace iolab_bench
