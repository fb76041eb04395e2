// Internal: the methods' name for the system-call helper, which is public
// now (include/iolab/io/syscall.h: the one EINTR loop, full transfers, the
// fault-injection hook). posix::x is sys::x.
#pragma once

#include "iolab/io/syscall.h"

namespace iolab::io {
namespace posix = sys;
}  // namespace iolab::io

namespace iolab::io::sys {
// Call sites that do not name their call yet (the injector sees an empty
// name and can fail them, not shorten them). Prefer retry(call, f).
template <typename F>
auto retry_eintr(F&& f) {
  return retry(std::string_view{}, std::forward<F>(f));
}
}  // namespace iolab::io::sys
