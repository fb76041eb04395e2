// Not a test program: a probe the layer rule must refuse. The record model
// is below the engine that fills it (src/CMakeLists.txt), so including an
// engine header from a target that links only results must not compile.
#include "iolab/harness/engine.h"
