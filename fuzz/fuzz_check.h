// What every fuzz target uses to report a broken invariant: abort, which
// libFuzzer records as a finding with the input that caused it.
#pragma once

#include <cstdlib>

namespace iolab::fuzz {
inline void require(bool ok) {
  if (!ok) std::abort();
}
}  // namespace iolab::fuzz
