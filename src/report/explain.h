// Internal: the sentences printed beneath each chart. Every number in them
// is taken from the family's records (rates, calls, faults, CPU).
#pragma once

#include <string>
#include <vector>

#include "families.h"

namespace iolab::report {

// Two or three plain-text sentences (not escaped) about one family.
std::vector<std::string> explain(const Family& family);

}  // namespace iolab::report
