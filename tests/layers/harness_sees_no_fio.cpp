// Not a test program: a probe the layer rule must refuse. fio interop sits
// above the engine (src/CMakeLists.txt), so including a fio header from a
// target that links only the harness must not compile.
#include "iolab/fio/job.h"
