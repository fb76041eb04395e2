// Internal: the copy methods share CopyEnds (include/iolab/io/copy.h).
#pragma once

#include "iolab/io/copy.h"
#include "iolab/io/syscall.h"
