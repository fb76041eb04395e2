// Moved to iolab/base/crc32c.h (the base layer); this forwarder goes once every
// branch that includes the old path has been merged.
#pragma once
#include "iolab/base/crc32c.h"
namespace iolab::store {
using iolab::crc32c;
}
