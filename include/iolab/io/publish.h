// Files iolab writes outside its scratch directory: results and reports, at
// a path the user named or a default one.
//
// A file is published whole or not at all: its content goes to a new
// temporary file beside the final one (O_EXCL, never following a link), is
// fsynced, then renamed onto the final name, and the directory is fsynced.
// A reader sees the old file or the new one, never half of one; a failure
// leaves no temporary file behind; a link at the final name is replaced,
// never followed.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

namespace iolab::io {

enum class IfExists {
  Refuse,   // the final name must be free: Error(EEXIST) otherwise, nothing replaced
  Replace,  // an existing file at the final name is replaced atomically
};

// Publishes `content` at `path`, creating missing parent directories.
// Throws Error naming the path and the cause (EEXIST, ENOSPC, EROFS, ...).
void publish_file(const std::filesystem::path& path, std::string_view content, IfExists if_exists);

// Whether the file now at a path (judged at the path given, a regular file,
// a link or anything else: lstat it) may be replaced.
using Replaceable = std::function<bool(const std::filesystem::path& existing)>;
// As above, with the decision taken at the moment of publishing: a free name
// is taken without replacing anything that appears there meanwhile
// (RENAME_NOREPLACE, or link(2)); a taken one is replaced only when
// `replaceable` accepts the file there, judged atomically where the
// filesystem can swap two names (RENAME_EXCHANGE; swapped back when not
// replaceable). Throws Error(EEXIST) naming `path` when it holds a file
// `replaceable` refuses: that file is kept as it was.
void publish_file(const std::filesystem::path& path, std::string_view content, const Replaceable& replaceable);

// Proves, before any work, that files can be published in `dir`: creates it
// (and its parents) when missing, then writes, fsyncs and removes a small
// temporary file there. Throws Error naming dir and the cause.
void check_publishable(const std::filesystem::path& dir);

}  // namespace iolab::io
