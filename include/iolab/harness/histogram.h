// Moved to iolab/base/histogram.h (the base layer); this forwarder goes once
// every branch that includes the old path has been merged.
#pragma once
#include "iolab/base/histogram.h"
namespace iolab::harness {
using iolab::LatencyHistogram;
}
