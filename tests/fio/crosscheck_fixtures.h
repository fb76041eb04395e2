// What the cross-check tests share: whether any line of a row's
// differences (or output) mentions a text.
#pragma once

#include <string>
#include <vector>

namespace iolab::testing {

inline bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace iolab::testing
