// The decision's design (`iolab recommend`): the conditions a user asks
// about (an op, a packet size, a flush policy, a cache column) and, at
// each, the candidates measured side by side: every file method that can
// do the op there, in its default form, queued ones at depth 1 and 32.
//
// A row is (op, flush policy, column); its conditions are packet sizes on
// one grid, 8 B to 8 MiB every 4x, thinned to every 16x or 64x when the
// budget needs it (schedule.h). A user may name the conditions instead
// (--op, --bs, --flush, --cache): exactly those are measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/results/kinds.h"
#include "iolab/harness/runner.h"
#include "iolab/io/file.h"

namespace iolab::decision {

// Where a read starts, or where a write's bytes go. The two past-memory
// columns read random packets of a file four times the page cache a memory
// cgroup leaves it: through the page cache one request at a time (mmap
// against pread and mmap with MADV_RANDOM, its peers at depth 1), or by
// O_DIRECT, queued ones at depth 1 and 32: two regimes, never ranked together.
enum class Column { Warm, Cold, Direct, PastMemory, PastMemoryDirect, Buffered };
std::string_view to_string(Column c);   // "warm", "cold", "direct", "past-memory", "past-memory-direct", "buffered"
std::optional<Column> column_named(std::string_view name);
bool column_fits(results::Op op, Column c);  // reads: warm..past-memory-direct; writes: buffered, direct

// The flush policies of the write rows, by their names (io::parse_flush_policy).
inline constexpr std::string_view kFlushes[] = {"none", "end", "every-16k", "async-16k", "every"};

struct Row {
  results::Op op = results::Op::Read;
  std::string flush = "none";  // a kFlushes name; reads: "none"
  Column column = Column::Warm;
  std::string key() const;     // "read|none|warm"
  bool operator==(const Row&) const = default;
};

struct Condition {
  Row row;
  std::uint64_t size = 0;  // packet size, bytes
  std::string key() const; // "read|4096|none|warm": records carry it as extra.decision_condition
};

// The packet sizes of the grid, 8 B to 8 MiB every 4x.
inline constexpr std::uint64_t kGrid[] = {8,         32,         128,         512,         2048,         8192,
                                          32 * 1024, 128 * 1024, 512 * 1024, 2048 * 1024, 8192 * 1024};
// Every 4x, 16x or 64x: the grid, every second point, every third.
enum class Spacing { Every4x, Every16x, Every64x };
std::string_view to_string(Spacing s);  // "every 4x", ...
// The size each row is measured at first, on every spacing's grid: what
// the budget's plan learns a row's cost from.
inline constexpr std::uint64_t kAnchorSize = 32 * 1024;

struct Candidate {
  std::string label;        // "pread", "io_uring QD32", "io_uring O_DIRECT QD1", "mmap MADV_RANDOM"
  io::MethodTraits traits;  // in its form: what a reader decides by, not the label
};

struct DesignedCondition {
  Condition condition;
  std::vector<Candidate> candidates;
  std::vector<harness::FileExperiment> experiments;  // one per candidate
  std::string unmeasurable;  // why it cannot be measured here (empty: it can)
  // Its passes wait for the device (a flush policy, or O_DIRECT writes): its
  // repetitions get more headroom over the too-short bound.
  bool device_bound = false;
};

// What to measure.
struct DesignRequest {
  std::uint64_t max_file = 32ull << 20;
  std::uint64_t memory_room = 64ull << 20;  // the past-memory columns' page cache (a file 4x that)
  // Empty: every op, flush policy, column; the sizes of the plan's spacing.
  std::vector<results::Op> ops;
  std::vector<std::string> flushes;
  std::vector<Column> columns;
  std::vector<std::uint64_t> sizes;  // the user's own sizes (any, 1 B .. 1 GiB)
};

// Every row the request asks for (reads first, then writes, columns in the enum's order).
std::vector<Row> rows(const DesignRequest& request);
// A row's sizes at a spacing (the request's own when it names them): the
// grid thinned, O_DIRECT columns from 512 B, past-memory ones 4 KiB..1 MiB.
std::vector<std::uint64_t> sizes(const Row& row, Spacing spacing, const DesignRequest& request);
// The condition, its candidates and their experiments.
DesignedCondition design(const Condition& c, const DesignRequest& request);

inline constexpr unsigned kPastMemoryRatio = 4;               // the file over the page cache's room
inline constexpr std::uint64_t kMinMemoryRoom = 32ull << 20;  // `--memory-limit` at least
// Why the past-memory columns cannot be measured here (no memory cgroup can be made), or "".
std::string past_memory_problem();

}  // namespace iolab::decision
