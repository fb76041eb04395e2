#include "iolab/report/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "iolab/base/error.h"
#include "iolab/io/publish.h"

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
  if (ext != ".html" && ext != ".md")
    throw UsageError("-o " + out.string(), "the report is an HTML page (.html) or a Markdown table (.md): give a path "
                                           "ending in one of them");
  std::error_code ec;
  for (const auto& in : inputs)
    if (fs::equivalent(out, in, ec))
      throw UsageError("-o " + out.string(), "is the results file " + in.string() + ": the report would overwrite its input");
}

void write_file_atomically(const fs::path& path, std::string_view contents) {
  io::publish_file(path, contents, io::IfExists::Replace);
}

}  // namespace iolab::report
