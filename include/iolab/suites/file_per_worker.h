// A file experiment on several threads, each worker with a file of its own
// (fio's numjobs without a shared filename; IOR's -F): the parallel suite's
// region workload (parallel.h) run on the experiment's method, op, pattern,
// block size, file size (per worker), queue depth and end-of-pass flush.
#pragma once

#include "iolab/results/record.h"
#include "iolab/harness/runner.h"

namespace iolab::suites {

// Measures `e` with `workers` threads released together, each reading or
// writing its own file of e.file_size bytes; one record for all (threads,
// first done and last done). Reads: warm (each file written, flushed and
// read once) or O_DIRECT; writes: fresh files every pass, preallocated
// untimed. Throws UsageError for what the workload cannot do (a cold cache,
// a flush policy other than none or end, an ops count instead of a size).
results::Result run_file_per_worker(harness::Runner& runner, const harness::FileExperiment& e, unsigned workers);

}  // namespace iolab::suites
