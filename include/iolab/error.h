// Moved to iolab/base/error.h (the base layer); this forwarder goes once every
// branch that includes the old path has been merged.
#pragma once
#include "iolab/base/error.h"
