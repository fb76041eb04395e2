// Not a test program: a probe the layer rule must refuse. The commit log may
// use io and base only (src/CMakeLists.txt), so including a harness header
// from a target that links only the commit log must not compile.
#include "iolab/harness/engine.h"
