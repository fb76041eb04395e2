#pragma once
// The one temporary directory type of the tests: a directory a test owns
// outright, made fresh (mkdtemp) under a parent (default $TMPDIR or /tmp) and
// removed with everything in it when the test ends, whoever wrote the files.
// io::ScratchDir is not that: it removes only the files iolab created through
// it (never someone else's), so a test uses a ScratchDir only where the code
// under test takes one (Runner, run_fio, the suites' workloads) or where the
// ScratchDir's own behaviour is under test.
#include <filesystem>
#include <string>

namespace iolab::testing {

class TestDir {
 public:
  // "<parent>/iolab-test-XXXXXX"; an empty parent means $TMPDIR or /tmp.
  // Throws std::runtime_error when mkdtemp fails.
  explicit TestDir(const std::filesystem::path& parent = {});
  ~TestDir();
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A RAM-backed parent for tests that rewrite or sync small files thousands of
// times (ext4 flushes a file rewritten after truncation; fsync costs real
// time): /dev/shm when it is a writable directory, else empty (the default).
std::filesystem::path fast_scratch_parent();

}  // namespace iolab::testing
