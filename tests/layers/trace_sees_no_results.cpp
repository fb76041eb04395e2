// Not a test program: a probe the layer rule must refuse. Traces may use io
// and base only (src/CMakeLists.txt), so including the record model from a
// target that links only the trace layer must not compile.
#include "iolab/results/record.h"
