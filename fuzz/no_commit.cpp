// The fuzz build's stand-in for the generated git_commit.cpp (CMake writes
// that one from cmake/git_commit.cpp.in; this Makefile does not run CMake).
#include "iolab/version.h"

namespace iolab {
const char* git_commit() { return "fuzz build"; }
}  // namespace iolab
