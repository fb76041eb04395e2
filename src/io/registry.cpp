#include "iolab/io/registry.h"

#include <array>
#include <string>

#include "iolab/base/error.h"
#include "methods.h"

namespace iolab::io {

Availability always_available() { return {}; }

std::span<const Method* const> file_methods() {
  static const std::array<const Method*, 9> all = {&iostream_method(), &stdio_method(),    &syscall_method(),
                                                   &pread_method(),    &vectored_method(), &mmap_method(),
                                                   &direct_method(),   &io_uring_method(), &libaio_method()};
  return all;
}

std::span<const CopyMethod* const> copy_methods() {
  static const std::array<const CopyMethod*, 5> all = {&readwrite_copy(), &sendfile_copy(), &copy_file_range_copy(),
                                                       &splice_copy(), &mmap_write_copy()};
  return all;
}

namespace {
template <typename List>
const auto& find(List list, std::string_view name, const char* kind) {
  std::string known;
  for (const auto* m : list) {
    if (m->name() == name) return *m;
    known += (known.empty() ? "" : ", ") + std::string(m->name());
  }
  throw UsageError(std::string(kind) + " '" + std::string(name) + "'", "unknown; known: " + known);
}
}  // namespace

const Method& find_file_method(std::string_view name) { return find(file_methods(), name, "method"); }
const CopyMethod& find_copy_method(std::string_view name) { return find(copy_methods(), name, "copy method"); }

}  // namespace iolab::io
