// One interface for every form a results set takes: the results JSON (the
// record every other form is derived from), CSV, the HTML report, a Markdown
// table and the console's tables. Each exporter only renders; writing is
// report/output_files.h's (io::publish_file, the naming and refusal rules of
// `iolab run --out`), printing the command's.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report {

// What an export may say about where it belongs.
struct ExportContext {
  std::filesystem::path json;  // the results JSON the export goes beside (names the HTML page's source)
  std::string title;           // the HTML page's title (default "iolab run <json stem>")
  bool color = false;          // the console: ANSI colours
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual std::string_view name() const = 0;       // "json", "csv", "html", "markdown", "console"
  virtual std::string_view extension() const = 0;  // ".json", ".csv", ".html", ".md"; "" for the console
  virtual std::string render(const results::Results& results, const ExportContext& context) const = 0;
  // Whether a file that starts with `head` (its first 64 KiB) is this
  // exporter's output: the only kind an output name given by the user replaces.
  virtual bool wrote(std::string_view head) const = 0;
};

const Exporter& json_exporter();
const Exporter& csv_exporter();
const Exporter& html_exporter();
const Exporter& markdown_exporter();
const Exporter& console_exporter();

// What `iolab run` and `iolab-mpi` publish, in order: JSON first (a reader
// of the others can always find the record they came from), CSV, HTML.
std::vector<const Exporter*> results_exporters();

}  // namespace iolab::report
