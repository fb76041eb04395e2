// Internal: parsing the name of an enumerator (designs, read paths).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "iolab/error.h"

namespace iolab::commitlog::detail {

// The value in `all` whose to_string() is `name`; a UsageError naming the
// text and the choices otherwise.
template <typename E, std::size_t N>
E parse_name(std::string_view name, const E (&all)[N], std::string_view what) {
  std::string choices;
  for (E e : all) {
    if (name == to_string(e)) return e;
    choices += (choices.empty() ? "" : ", ") + std::string(to_string(e));
  }
  throw UsageError(std::string(what) + " '" + std::string(name) + "'", "expected one of " + choices);
}

}  // namespace iolab::commitlog::detail
