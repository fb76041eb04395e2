// Where a command's results go, by one set of rules for every command that
// writes them (`iolab run --out`, `iolab-mpi --out`, `recommend --save`,
// `crosscheck --out`):
//
// - A name given: checked before any work. It ends in .json (the first
//   kind's extension: `trace --out` names a .iotrace); none of the
//   set's files (NAME.json and, say, NAME.csv and NAME.html beside it) is a
//   directory or an input, and an existing one is replaced only if iolab
//   wrote it. The rule holds again when the set is published, atomically: a
//   file that appeared at the name during the run, or was changed by hand,
//   is kept, and the set goes beside it under a default name (`problem`
//   says where, in one line). The name is locked while the command runs, so a second
//   command given the same name is refused instead of losing one's results.
// - No name: results/<program>-<UTC time to the ms>Z-<pid>.json; a taken
//   name gets a suffix, nothing is ever replaced.
// - The directory is proven to take files before any work (io::check_publishable).
// - Each file is published whole or not at all (io::publish_file). When the
//   JSON, the record the others derive from, cannot be written where asked
//   (the filesystem filled, the directory went away), the set goes to a
//   fallback directory under a default name and the caller is told where
//   and why; the user's path, never a temporary one, is named.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/report/exporter.h"

namespace iolab::io {
class InterruptHook;
}

namespace iolab::report {

// A kind of file in a set: its extension and how to tell one iolab wrote.
struct OutputKind {
  std::string extension;  // the first kind of a set is ".json": it names the set
  std::function<bool(std::string_view head)> wrote;
};
OutputKind output_kind(const Exporter& exporter);
// The ownership rule of every file iolab writes outside its scratch
// directory (results, `report -o`): the file at `existing` may be replaced
// only when it is a regular file (a link is never followed) of `kind` that
// iolab wrote, by what its first bytes say.
bool iolab_wrote(const OutputKind& kind, const std::filesystem::path& existing);
std::vector<OutputKind> output_kinds(const std::vector<const Exporter*>& exporters);

struct OutputRequest {
  std::string option = "--out";  // the option that names the set, for messages
  std::string given;             // the name given; empty: a default name
  std::string program = "iolab";  // default names: results/<program>-<time>-<pid>.json
  std::vector<OutputKind> kinds;  // ".json" first (or the one kind of a set that is not results: ".iotrace")
  std::vector<std::filesystem::path> inputs;  // files the set must never replace
  std::string input_kind = "an input";       // what they are, for messages ("the job file")
};

// A results set's request: `given` (empty: a default name) as FILE.json with
// the results exporters' kinds beside it, never replacing `input` (when
// named), which is `input_kind` in messages.
OutputRequest results_request(const std::string& given, const std::string& input = "",
                              const std::string& input_kind = "an input");

class OutputFiles {
 public:
  // Checks a given name (UsageError naming the option and the cause).
  explicit OutputFiles(OutputRequest request);
  ~OutputFiles();
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Before any work: the directory takes files (created when missing), and a
  // given name is locked against another iolab publishing it (Error EBUSY).
  // The lock file goes when the lock is dropped: by release(), the
  // destructor, or a signal that ends the process (io::InterruptHook), so
  // no ".NAME.json.lock" outlives the command.
  void prepare();
  // Drops the lock (the destructor and a signal's cleanup do too); safe to
  // call from the signal cleanup thread and the main thread at once.
  void release();

  // The set's files as they would be published first (kinds' order).
  std::vector<std::filesystem::path> files() const;
  bool named() const { return !request_.given.empty(); }

  struct Published {
    std::vector<std::filesystem::path> files;  // written, in kinds' order (fewer when one failed)
    std::optional<std::string> problem;        // what could not be written where asked, and where the results went
  };
  // Renders kind `index` for a set whose JSON is `json`.
  using Render = std::function<std::string(std::size_t index, const std::filesystem::path& json)>;
  // Publishes the set. A failure after the JSON is written is `problem`
  // (the JSON stays); a failure of the JSON moves the set to the first of
  // `fallback_dirs` that takes it. Throws Error naming the asked path when
  // the JSON could be written nowhere.
  Published publish(const Render& render, const std::vector<std::filesystem::path>& fallback_dirs);

 private:
  std::vector<std::filesystem::path> set_for(const std::filesystem::path& json) const;
  bool replaceable(std::size_t kind, const std::filesystem::path& existing) const;
  void write_set(const std::filesystem::path& json, bool replace, const Render& render,
                 std::vector<std::filesystem::path>& written) const;
  std::vector<std::filesystem::path> write_default(const std::filesystem::path& dir, const Render& render) const;

  OutputRequest request_;
  std::filesystem::path json_;  // the given name, or results/<default>
  std::atomic<int> lock_fd_{-1};
  std::filesystem::path lock_path_;
  std::unique_ptr<io::InterruptHook> release_on_signal_;  // last: destroyed first
};

// The places results go when they cannot go where asked: the scratch
// directory's parent, then $TMPDIR (or /tmp).
std::vector<std::filesystem::path> fallback_dirs(const std::filesystem::path& scratch_parent);

// `results` published as `out`'s set, kind i rendered by exporters[i] (the
// kinds' order, as output_kinds made them), falling back to
// fallback_dirs(scratch_parent); then the set's lock is dropped. The HTML
// page is titled "<program> <the JSON's stem>".
OutputFiles::Published publish_results(OutputFiles& out, const results::Results& results,
                                       const std::vector<const Exporter*>& exporters,
                                       const std::filesystem::path& scratch_parent,
                                       std::string_view program = "iolab run");

}  // namespace iolab::report
