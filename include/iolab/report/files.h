// The files the report commands read and write: results files in, a report
// out, with failures as one line naming the path and the cause.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report {
class Exporter;
}

namespace iolab::report {

// results::read_results, after refusing what is not a regular file with a
// one-line Error ("read results DIR: Is a directory"; a FIFO would block).
results::Results read_results_file(const std::filesystem::path& path);

// Throws UsageError when `out` does not end in .html or .md, names one of the
// `inputs` (the report would overwrite the results it was made from), or
// names a file iolab did not write (output_files.h's ownership rule, as for
// `run --out`: a user's own page, a link, a device is never replaced).
void check_report_output(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs);
// The exporter of a report output by its extension: HTML (.html) or Markdown (.md).
const Exporter& report_exporter(const std::filesystem::path& out);

// Replaces `path` with `contents` or leaves it as it was (io::publish_file,
// the tree's one atomic writer): the bytes go to a
// new temporary file in the same directory (O_EXCL, never through a
// symlink), are synced, and the file is renamed over `path`, then the
// directory is synced. On any failure (ENOSPC, EIO...) the temporary file is
// removed and Error names `path` and the cause. Parent directories are created.
// A file at `path` is replaced only when iolab wrote it as `kind` (judged as
// it is published: one that appeared meanwhile is kept, Error EEXIST).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents, const Exporter& kind);

}  // namespace iolab::report
