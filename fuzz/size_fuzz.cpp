// libFuzzer target for the size parser (--bs 4k, --size 1.5g, job files):
// any text is either refused with a UsageError or parsed to a value that
// its decimal text and its compact label ("4k") parse back to, and that
// the formatters print.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"

using iolab::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::uint64_t v = 0;
  try {
    v = iolab::parse_size(text);
  } catch (const iolab::UsageError&) {
    return 0;
  }
  require(iolab::parse_size(std::to_string(v)) == v);
  require(iolab::parse_size(iolab::size_label(v)) == v);
  require(!iolab::format_bytes(static_cast<double>(v)).empty());
  return 0;
}
