// The fuzz build's stand-in for src/report/bundles.cpp: the chart bundles
// (830 KB of JavaScript copied into every page) are constant, not input,
// and would only slow each execution down.
#include "iolab/report/html.h"

namespace iolab::report {
std::vector<ChartBundle> chart_bundles() { return {}; }
}  // namespace iolab::report
