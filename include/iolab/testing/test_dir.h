#pragma once
// A directory a test owns outright: made fresh under $TMPDIR (or /tmp) and
// removed with everything in it when the test ends, whoever wrote the files.
// io::ScratchDir is not that: it removes only the files iolab created through
// it (never someone else's), so a test that lets a program write results into
// one leaves the directory behind.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace iolab::testing {

class TestDir {
 public:
  TestDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/iolab-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace iolab::testing
