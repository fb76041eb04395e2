// Internal: one accessor per method, defined in the method's own file; the
// registry lists them; the_method gives each method's one instance.
#pragma once

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

}  // namespace iolab::io
