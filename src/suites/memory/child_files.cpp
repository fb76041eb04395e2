#include "child_files.h"

#include <unistd.h>

namespace iolab::suites::memory {

void remove_child_files(const std::filesystem::path& dir) noexcept {
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec)) ::unlink(f.path().c_str());
}

void remove_child_dir(const std::filesystem::path& dir) noexcept {
  remove_child_files(dir);
  ::rmdir(dir.c_str());
}

harness::RunConfig unreported(harness::RunConfig config) {
  config.on_result = nullptr;
  config.on_experiment = nullptr;
  config.on_pass = nullptr;
  return config;
}

}  // namespace iolab::suites::memory
