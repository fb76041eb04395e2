// Internal: opening a commit log on a chosen file layer (tests run it on a
// fault-injecting one).
#pragma once

#include <filesystem>
#include <memory>

#include "files.h"
#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog::detail {

std::unique_ptr<CommitLog> open_commit_log(LogFs& fs, const std::filesystem::path& dir, const Options& options);
void remove_log_files(LogFs& fs, const std::filesystem::path& dir);

}  // namespace iolab::commitlog::detail
