// What the cost model reads from a record (cost_model.cpp, docs/model.md):
// its cache column, its counts per pass of each term, and the share of a
// core it had. Internal to the report layer.
#pragma once

#include <string>

#include "iolab/report/cost_model.h"
#include "iolab/results/record.h"

namespace iolab::report::costfit {

inline constexpr double kFaultsPerMiB = 1.0;  // below this in every record, faults are noise

// "warm", "cold", "direct", ...; a write to a fresh file through the page cache is "buffered".
std::string column_of(const results::Result& r);
// The page-cache folios `writes` sequential writes of `write` bytes each,
// from offset 0 of a fresh file, allocate (the folio term's count).
double folios_of_writes(double write, double writes);
// Calls, bytes, faults, flushes, system calls and folios per pass.
TermCounts counts_of(const results::Result& r);
// Measured, read or write, one worker, sequential: a record a sweep's fit can take.
bool sweepable(const results::Result& r);
// The share of a repetition's time the process had a core (1 for a record that slept).
double own_core_share(const results::Result& r);

}  // namespace iolab::report::costfit
