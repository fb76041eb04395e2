#include "iolab/report/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "iolab/base/error.h"
#include "iolab/io/publish.h"
#include "iolab/report/exporter.h"
#include "iolab/report/output_files.h"

namespace iolab::report {

namespace fs = std::filesystem;

results::Results read_results_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("read results", path.string(), errno);
  if (S_ISDIR(st.st_mode)) throw Error("read results", path.string(), EISDIR);
  if (!S_ISREG(st.st_mode)) throw Error("read results", path.string(), "not a regular file", EINVAL);
  return results::read_results(path);
}

namespace {
std::string lower_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}
}  // namespace

const Exporter& report_exporter(const fs::path& out) {
  return lower_extension(out) == ".md" ? markdown_exporter() : html_exporter();
}

void check_report_output(const fs::path& out, const std::vector<fs::path>& inputs) {
  const std::string ext = lower_extension(out);
  if (ext != ".html" && ext != ".md")
    throw UsageError("-o " + out.string(), "the report is an HTML page (.html) or a Markdown table (.md): give a path "
                                           "ending in one of them");
  std::error_code ec;
  for (const auto& in : inputs)
    if (fs::equivalent(out, in, ec))
      throw UsageError("-o " + out.string(), "is the results file " + in.string() + ": the report would overwrite its input");
  if (!fs::exists(fs::symlink_status(out, ec))) return;
  if (fs::is_directory(fs::status(out, ec))) throw UsageError("-o " + out.string(), "is a directory");
  if (!iolab_wrote(output_kind(report_exporter(out)), out))
    throw UsageError("-o " + out.string(), "exists and is not one iolab wrote; iolab replaces only its own reports "
                                           "(choose another name, or remove it)");
}

void write_file_atomically(const fs::path& path, std::string_view contents, const Exporter& kind) {
  const OutputKind k = output_kind(kind);
  io::publish_file(path, contents, [&](const fs::path& existing) { return iolab_wrote(k, existing); });
}

}  // namespace iolab::report
