// The vocabulary of an experiment, as types: what it does (Op), in what
// order (AccessPattern), from which cache state (CacheState), how a cold
// state is made (Eviction). How written data is flushed is io's
// (io::FlushPolicy, beside the durability calls).
// Strings exist only at the edges: command line, job files, results files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "iolab/io/file.h"

namespace iolab::results {

// The measured operation. Read and Write are file experiments (the ones a
// user can ask for with --op); the rest are the custom workloads' operations.
// Replay: a recorded program's operations played back through one method
// (`iolab replay`, docs/replay.md): reads, writes and syncs mixed.
enum class Op { Read, Write, Copy, Alloc, Insert, Get, Remove, Reinsert, Reopen, Append, CatchUp, Replay };
std::string_view to_string(Op);
// Any operation by its results name; throws UsageError.
Op parse_op_name(std::string_view);
// A file experiment's operation (--op): read or write; throws UsageError.
Op parse_op(std::string_view);
// True for operations that move bytes into files (durability applies).
bool writes_data(Op);
// True for operations that are one event per op, each a whole piece of work
// (reopen: open a store): tables show the time each takes, not a rate.
bool reported_as_time(Op);

enum class AccessPattern { Seq, Rand };
std::string_view to_string(AccessPattern);
AccessPattern parse_pattern(std::string_view);

// Warm: resident in the page cache (read once, proven by mincore). Cold:
// evicted before every pass (proven by mincore). Direct: O_DIRECT bypasses
// the page cache, so the file's residency does not matter. Full: the file
// is larger than the page cache it may use (a room in a memory cgroup
// iolab made for the experiment: before every pass the group's limit is
// set to the room plus the group's other memory) and that room is full
// before every pass (the group's page-cache bytes, proven from its
// memory.stat at least thresholds::kFullCacheMin of the room; the file's
// resident share, by mincore, says how little of it fits): reads evict as
// they go, the steady state of a data set that outgrew memory. Nothing is
// evicted between passes. Only a caller that runs the experiment in such a
// group can ask for it (the decision table's "larger than memory" column).
enum class CacheState { Warm, Cold, Direct, Full };
std::string_view to_string(CacheState);  // "warm", "cold", "direct", "full"
// What a user may ask for (--cache, job files): warm, cold or direct;
// "full" is refused with the reason (it needs a memory cgroup). Throws UsageError.
CacheState parse_cache(std::string_view);
// Any state by its results name ("full" too); throws UsageError.
CacheState parse_cache_name(std::string_view);

// How a Cold state is made. PerFile (the default): write the file back and
// drop its own pages (fdatasync + posix_fadvise(DONTNEED)), proven by
// mincore; a fresh copy of the file when that does not evict it. DropCaches
// (only on request, as root): sync + /proc/sys/vm/drop_caches, which empties
// the page cache of the whole machine.
enum class Eviction { PerFile, DropCaches };
std::string_view to_string(Eviction);  // "per-file", "drop_caches"
Eviction parse_eviction(std::string_view);  // also accepts "fadvise" (= per-file)

}  // namespace iolab::results
