// Internal to the CLI: what `iolab replay` and `recommend --trace` share:
// the methods a --method list names, a trace's one-line summary, and the
// per-kind latency table of replay records.
#pragma once

#include <string>
#include <vector>

#include "iolab/io/registry.h"
#include "iolab/replay/replay.h"
#include "iolab/results/record.h"

namespace iolab::cli {

// The methods of a comma-separated list ("" : every file method, in the
// registry's order); UsageError naming --method for an unknown or repeated one.
std::vector<const io::Method*> methods_named(const std::string& list);

// "replaying t.iotrace: 12,345 operations (read 3,000, write 9,000, fsync 40) on 3 files of 4.1 MiB at the start,
// 2 threads recorded, through 9 methods".
std::string trace_summary(const replay::Trace& t, std::size_t methods);

// p50 / p99 per operation kind for each replay record that has them (its
// latency pass), one row per method; "" when none has.
std::string latency_by_kind_text(const std::vector<results::Result>& records);

}  // namespace iolab::cli
