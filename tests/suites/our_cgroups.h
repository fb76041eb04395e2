// How many memory cgroups this test process made are still there: iolab
// names its groups "iolab-<pid>-..." under the controller's root.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "iolab/harness/memory_cgroup.h"

namespace iolab::testing {

inline unsigned groups_of_this_process(const harness::CgroupPlace& place) {
  if (!place.root) return 0;
  unsigned n = 0;
  const std::string ours = "iolab-" + std::to_string(::getpid()) + "-";
  for (const auto& e : std::filesystem::directory_iterator(place.root->dir))
    n += e.path().filename().string().starts_with(ours);
  return n;
}

}  // namespace iolab::testing
