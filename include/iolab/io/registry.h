// The list of access methods and copy methods, by name.
#pragma once

#include <span>
#include <string_view>

#include "iolab/io/copy.h"
#include "iolab/io/file.h"

namespace iolab::io {

// In a fixed, documented order: iostream, stdio, syscall, pread, vectored,
// mmap, direct, io_uring.
std::span<const Method* const> file_methods();
// readwrite, sendfile, copy_file_range, splice, mmap_write.
std::span<const CopyMethod* const> copy_methods();

// Throws UsageError naming the unknown method and listing the known ones.
const Method& find_file_method(std::string_view name);
const CopyMethod& find_copy_method(std::string_view name);

}  // namespace iolab::io
