#include "iolab/base/proc.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

#include <sys/sysmacros.h>
#include <unistd.h>

namespace iolab::proc {

std::optional<IoAccounting> read_io(IoScope scope) {
  // stdio: a few calls and no allocation, outside any timed region.
  FILE* f = std::fopen(scope == IoScope::Thread ? "/proc/thread-self/io" : "/proc/self/io", "re");
  if (f == nullptr) return std::nullopt;
  IoAccounting a;
  char key[64];
  unsigned long long v = 0;
  while (std::fscanf(f, "%63[^:]: %llu\n", key, &v) == 2) {
    if (!std::strcmp(key, "rchar")) a.rchar = v;
    else if (!std::strcmp(key, "wchar")) a.wchar = v;
    else if (!std::strcmp(key, "syscr")) a.syscr = v;
    else if (!std::strcmp(key, "syscw")) a.syscw = v;
    else if (!std::strcmp(key, "read_bytes")) a.read_bytes = v;
    else if (!std::strcmp(key, "write_bytes")) a.write_bytes = v;
    else if (!std::strcmp(key, "cancelled_write_bytes")) a.cancelled_write_bytes = v;
  }
  std::fclose(f);
  return a;
}

std::optional<BlockSectors> read_block_sectors(const std::filesystem::path& stat_file) {
  FILE* f = std::fopen(stat_file.c_str(), "re");
  if (f == nullptr) return std::nullopt;
  // Fields 3 and 7: sectors read and written.
  unsigned long long v[7] = {};
  const bool ok = std::fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) == 7;
  std::fclose(f);
  if (!ok) return std::nullopt;
  return BlockSectors{v[2], v[6]};
}

std::filesystem::path block_device_dir(dev_t dev) {
  return "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
}

std::string block_queue_attribute(dev_t dev, std::string_view attribute) {
  const std::filesystem::path base = block_device_dir(dev);
  for (const std::filesystem::path& queue : {base / "queue", base / ".." / "queue"}) {
    std::ifstream in(queue / attribute);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line;
  }
  return "";
}

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::map<std::string, std::int64_t> vm_dirty_settings() {
  std::map<std::string, std::int64_t> out;
  for (const char* knob : {"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
                           "dirty_expire_centisecs", "dirty_writeback_centisecs"}) {
    std::ifstream in(std::string("/proc/sys/vm/") + knob);
    std::int64_t v = 0;
    if (in >> v) out[knob] = v;
  }
  return out;
}

std::optional<unsigned> free_page_reporting_order(const std::filesystem::path& sys) {
  constexpr unsigned kReportingFeature = 5;  // VIRTIO_BALLOON_F_REPORTING
  auto first_line = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
  };
  std::error_code ec;
  bool reporting = false;
  for (std::filesystem::directory_iterator it(sys / "bus/virtio/devices", ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path d = it->path();
    if (first_line(d / "device") != "0x0005" || !std::filesystem::exists(d / "driver", ec)) continue;  // a bound balloon
    const std::string features = first_line(d / "features");  // one character per feature bit, bit 0 first
    if (features.size() > kReportingFeature && features[kReportingFeature] == '1') reporting = true;
  }
  if (!reporting) return std::nullopt;
  std::istringstream in(first_line(sys / "module/page_reporting/parameters/page_reporting_order"));
  unsigned order = 0;
  if (!(in >> order) || order > kLargestPageOrder) return std::nullopt;  // above it nothing is reported
  return order;
}

std::optional<std::uint64_t> tlb_shootdowns() {
  std::ifstream in("/proc/interrupts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (name != "TLB:") continue;
    std::uint64_t sum = 0, n = 0;
    while (words >> n) sum += n;
    return sum;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> keyed_value(const std::filesystem::path& file, std::string_view key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return std::nullopt;
}

CgroupMounts cgroup_mounts(const std::filesystem::path& mounts) {
  CgroupMounts out;
  std::ifstream in(mounts);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, dir, type, options;
    if (!(fields >> device >> dir >> type >> options)) continue;
    if (type == "cgroup2" && out.unified.empty()) out.unified = dir;
    if (type != "cgroup") continue;
    std::istringstream opts(options);
    for (std::string o; std::getline(opts, o, ',');)
      if (o == "memory" && out.memory_v1.empty()) out.memory_v1 = dir;
  }
  return out;
}

namespace {
// The CPU clock of thread `tid` of this process: the kernel's encoding of a
// per-thread CPU clock (CPUCLOCK_SCHED, per thread), which glibc's
// pthread_getcpuclockid returns for its own threads; here for any thread
// found in /proc/self/task, including those another library started.
clockid_t thread_cpu_clock(pid_t tid) noexcept { return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u); }
}  // namespace

std::map<std::string, double> thread_cpu_seconds_by_name() {
  std::map<std::string, double> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string tid_text = entry.path().filename();
    char* end = nullptr;
    const long tid = std::strtol(tid_text.c_str(), &end, 10);
    if (end == tid_text.c_str() || *end != '\0' || tid <= 0) continue;
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (!std::getline(comm, name)) continue;  // it ended meanwhile
    timespec ts{};
    if (::clock_gettime(thread_cpu_clock(static_cast<pid_t>(tid)), &ts) != 0) continue;
    out[name] += static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  return out;
}

}  // namespace iolab::proc
