#include "iolab/report/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <random>
#include <span>

#include "iolab/error.h"
#include "iolab/io/registry.h"

namespace iolab::report {

namespace fs = std::filesystem;

harness::Results read_results_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("read results", path.string(), errno);
  if (S_ISDIR(st.st_mode)) throw Error("read results", path.string(), EISDIR);
  if (!S_ISREG(st.st_mode)) throw Error("read results", path.string(), "not a regular file", EINVAL);
  return harness::read_results(path);
}

void check_report_output(const fs::path& out, const std::vector<fs::path>& inputs) {
  std::string ext = out.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".html") throw UsageError("-o " + out.string(), "the report is an HTML page: give a path ending in .html");
  std::error_code ec;
  for (const auto& in : inputs)
    if (fs::equivalent(out, in, ec))
      throw UsageError("-o " + out.string(), "is the results file " + in.string() + ": the report would overwrite its input");
}

namespace {

// "<dir>/.<name>.tmp-XXXXXXXX", created empty with O_EXCL: ours alone.
fs::path create_temporary(const fs::path& dir, const fs::path& name) {
  std::random_device rd;
  const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0;; ++attempt) {
    std::string file = ".";
    file += name.string();
    file += ".tmp-";
    for (int i = 0; i < 8; ++i) file += alphabet[rd() % 36];
    fs::path tmp = dir / file;
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return tmp;
    }
    if (errno != EEXIST || attempt >= 100) throw Error("create", tmp.string(), errno);
  }
}

void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error("open directory", dir.string(), errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw Error("fsync directory", dir.string(), err);
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view contents) {
  if (path.filename().empty()) throw Error("write", path.string(), EISDIR);
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("create directory", dir.string(), ec.value());
  // In the same directory: a rename is atomic only within one filesystem.
  fs::path tmp = create_temporary(dir, path.filename());
  try {
    // The io layer's positional writes: short writes completed, EINTR retried, errors named.
    auto file = io::find_file_method("pread").open(tmp, io::Access::ReadWrite);
    file->write_at(0, std::as_bytes(std::span(contents.data(), contents.size())));
    file->sync(io::Durability::Fdatasync);
    file->close();
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw Error("rename", tmp.string() + " -> " + path.string(), errno);
  } catch (const Error& e) {
    ::unlink(tmp.c_str());
    if (e.error_number() != 0) throw Error("write", path.string(), e.error_number());
    throw;
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  sync_directory(dir);
}

}  // namespace iolab::report
