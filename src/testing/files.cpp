#include "iolab/testing/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/testing/test_dir.h"

namespace iolab::testing {

namespace {

// Appends the file's bytes to `out` (a std::string or a vector of std::byte).
template <typename Out>
void append_file(const std::filesystem::path& p, Out& out) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("open", p.string(), errno);
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error("read", p.string(), err);
    }
    if (n == 0) break;
    const auto* first = reinterpret_cast<const typename Out::value_type*>(chunk);
    out.insert(out.end(), first, first + n);
  }
  ::close(fd);
}

void write_all(const std::filesystem::path& p, const char* data, std::size_t size) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("open", p.string(), errno);
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error("write", p.string(), err);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw Error("close", p.string(), errno);
}

}  // namespace

std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::vector<std::byte> out;
  append_file(p, out);
  return out;
}

std::string read_file(const std::filesystem::path& p) {
  std::string out;
  append_file(p, out);
  return out;
}

void write_bytes(const std::filesystem::path& p, std::span<const std::byte> bytes) {
  write_all(p, reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void write_file(const std::filesystem::path& p, std::string_view text) { write_all(p, text.data(), text.size()); }

TestDir::TestDir(const std::filesystem::path& parent) {
  std::filesystem::path where = parent;
  if (where.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    where = tmp && *tmp ? tmp : "/tmp";
  }
  std::string tmpl = (where / "iolab-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
}

TestDir::~TestDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path fast_scratch_parent() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return {};
}

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.path().filename() != io::kScratchListName) names.push_back(e.path().lexically_relative(dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace iolab::testing
