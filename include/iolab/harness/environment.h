// The machine a run measures on, gathered when the run starts.
#pragma once

#include <filesystem>

#include "iolab/results/record.h"

namespace iolab::harness {

// Facts of this machine and of the filesystem holding `scratch_dir`. Also
// starts counting the block device under it (usage.h, watch_device): the
// reason this lives with the engine and not with the record model.
results::Environment collect_environment(const std::filesystem::path& scratch_dir);

}  // namespace iolab::harness
