// Internal: one accessor per method, defined in the method's own file; the
// registry lists them. An access method is its facts and the File type it
// opens (FileMethod); the_method gives each method's one instance.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "iolab/io/copy.h"
#include "iolab/io/file.h"

namespace iolab::io {

const Method& iostream_method();
const Method& stdio_method();
const Method& syscall_method();
const Method& pread_method();
const Method& vectored_method();
const Method& mmap_method();
const Method& direct_method();
const Method& io_uring_method();
const Method& libaio_method();

const CopyMethod& readwrite_copy();
const CopyMethod& sendfile_copy();
const CopyMethod& copy_file_range_copy();
const CopyMethod& splice_copy();
const CopyMethod& mmap_write_copy();

// Methods with no requirement beyond POSIX on a regular file.
Availability always_available();

// The one instance of method type M, made from `facts` on first use (the
// registry's lists are statics too, so no order of initialisation is assumed).
template <typename M, typename Facts>
const M& the_method(const Facts& facts) {
  static const M method(facts);
  return method;
}

// What an access method is, for `iolab methods` and the experiments.
struct MethodFacts {
  std::string_view name;
  std::string_view description;
  MethodTraits traits;  // for every FileOptions, unless the method says otherwise
};

// An access method that opens FileT(path, access, options) and runs wherever
// POSIX does. A method with a probe, option checks or traits that depend on
// the options derives from it and overrides those.
template <typename FileT>
class FileMethod : public Method {
 public:
  explicit FileMethod(const MethodFacts& facts) : facts_(facts) {}
  std::string_view name() const override { return facts_.name; }
  std::string_view description() const override { return facts_.description; }
  MethodTraits traits(const FileOptions&) const override { return facts_.traits; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  std::unique_ptr<File> open(const std::filesystem::path& p, Access a, const FileOptions& o) const override {
    return std::make_unique<FileT>(p, a, o);
  }

 private:
  MethodFacts facts_;
};

}  // namespace iolab::io
