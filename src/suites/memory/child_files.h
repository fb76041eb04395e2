// What the children that run experiments inside a memory cgroup share (the
// memory suite's, the decision table's larger-than-memory cell's): a
// directory of their own for their files, and a run configuration that
// leaves the reporting to the parent.
#pragma once

#include <filesystem>

#include "iolab/harness/runner.h"

namespace iolab::suites::memory {

// A child's files go in a directory of their own inside the scratch
// directory: every file in it is the child's, so it can be emptied when the
// child is killed (a signal, the group's OOM killer) before its own cleanup
// ran. The parent's ScratchDir cannot do it: the files were made in the
// child's copy of it.
void remove_child_files(const std::filesystem::path& dir) noexcept;
// remove_child_files, then the directory itself: a signal's cleanup, before
// the scratch directory holding it is removed.
void remove_child_dir(const std::filesystem::path& dir) noexcept;

// `config` without the callbacks that report results, experiments and
// passes: the parent reports the records the child sends back.
harness::RunConfig unreported(harness::RunConfig config);

}  // namespace iolab::suites::memory
