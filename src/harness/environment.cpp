// The environment block of a results file: enough to tell two machines, two
// filesystems or two builds apart when comparing runs.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "iolab/base/proc.h"
#include "iolab/harness/environment.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/usage.h"
#include "iolab/version.h"

namespace iolab::harness {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

// The mount holding `dir`: the mountinfo entry whose mount point is the longest prefix.
struct Mount {
  std::string point, fs_type, options, source;
  unsigned major = 0, minor = 0;
};

Mount mount_of(const std::filesystem::path& dir) {
  std::error_code ec;
  std::string target = std::filesystem::weakly_canonical(dir, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  Mount best;
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream ss(line);
    std::string id, parent, majmin, root, point, options, field;
    ss >> id >> parent >> majmin >> root >> point >> options;
    while (ss >> field && field != "-") {}
    std::string fstype, source, super;
    ss >> fstype >> source >> super;
    bool prefix = target == point || point == "/" ||
                  (target.rfind(point, 0) == 0 && target.size() > point.size() && target[point.size()] == '/');
    if (prefix && point.size() >= best.point.size()) {
      best.point = point;
      best.fs_type = fstype;
      best.options = options + (super.empty() ? "" : "," + super);
      best.source = source;
      std::sscanf(majmin.c_str(), "%u:%u", &best.major, &best.minor);
    }
  }
  return best;
}

}  // namespace

results::Environment collect_environment(const std::filesystem::path& scratch_dir) {
  results::Environment e;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  e.hostname = host;
  e.cpu_model = cpu_model();
  e.cores = std::thread::hardware_concurrency();
  e.ram_bytes = proc::physical_memory_bytes();
  utsname u{};
  if (::uname(&u) == 0) e.kernel = std::string(u.sysname) + " " + u.release;
  e.scratch_dir = scratch_dir.string();
  Mount m = mount_of(scratch_dir);
  e.fs_type = m.fs_type;
  e.mount_options = m.options;
  e.device = m.source;
  const dev_t dev = makedev(m.major, m.minor);
  std::string rot = proc::block_queue_attribute(dev, "rotational");
  if (!rot.empty()) e.rotational = rot == "1";
  // "noop [mq-deadline] kyber": the bracketed one is in use.
  std::string sched = proc::block_queue_attribute(dev, "scheduler");
  auto l = sched.find('['), r = sched.find(']');
  e.scheduler = l != std::string::npos && r != std::string::npos ? sched.substr(l + 1, r - l - 1) : sched;
  e.iolab_version = kVersion;
  e.git_commit = iolab::git_commit();
  e.compiler = kCompiler;
  e.build_type = kBuildType;
  e.root = ::geteuid() == 0;
  e.can_drop_caches = can_drop_caches();  // the check the cold runs make (cache.cpp)
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  e.created = buf;
  e.block_device = watch_device(scratch_dir);
  // How much written data may sit dirty in the page cache, and for how long,
  // before the kernel writes it back: what makes "page cache only" last.
  e.vm_dirty = proc::vm_dirty_settings();
  // Whether memory a run frees goes back to the host, whose next first touch then faults there.
  e.free_page_reporting_order = proc::free_page_reporting_order();
  for (const char* attr : {"read_ahead_kb", "nr_requests", "max_sectors_kb", "logical_block_size", "physical_block_size",
                           "write_cache"})
    if (std::string v = proc::block_queue_attribute(dev, attr); !v.empty()) e.block_queue[attr] = v;
  return e;
}

}  // namespace iolab::harness
