// A recorded program's file I/O (a trace, trace/trace.h) played back
// through one access method, as an engine workload (issue 41, docs/replay.md).
// Every pass starts from fresh files at the trace's initial sizes, holding
// the write pattern; writes put the pattern bytes of their offset, so the
// bytes every read must see and every file must end with are known.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "iolab/harness/engine.h"
#include "iolab/harness/runner.h"
#include "iolab/io/file.h"
#include "iolab/io/scratch.h"
#include "iolab/trace/trace.h"

namespace iolab::replay {

// Most bytes one read or write of a replayed trace may move: its buffer is
// allocated once, before any pass.
inline constexpr std::uint64_t kMaxCallBytes = std::uint64_t{256} << 20;

// A trace held in memory: what the engine replays, pass after pass.
struct Trace {
  std::string name;  // what errors call it
  trace::Header header;
  std::vector<trace::Op> ops;
};

// Most operations a replayed trace may hold: its operations are kept in
// memory (48 bytes each, and 5 per method replaying it, 9 for a queued
// method at a depth above 1, 16 more while its waves are planned), so a
// 2 M-operation trace replayed through 12 methods takes about 220-240 MB.
inline constexpr std::size_t kMaxOps = 2'000'000;

// The trace in `file`, read whole (streamed, stopping at max_ops + 1
// operations). UsageError naming the file: missing, not a regular file,
// unreadable, malformed (trace::Reader's message), or longer than max_ops.
Trace read_trace(const std::filesystem::path& file, std::size_t max_ops = kMaxOps);

// Checks a trace as trace::Reader checks one it reads, and what a replay
// needs besides: every file id declared once, every op's file declared,
// offset + length below trace::kMaxEnd, calls of at most kMaxCallBytes.
// Throws UsageError naming the trace and the op ("trace t op 3: file 7 was
// never declared"); ops are numbered from 1.
void check(const Trace& t);

// Most requests a queued method keeps in flight replaying a trace.
inline constexpr unsigned kMaxDepth = 64;

// The depth the trace's threads reached: how many threads (or processes)
// made reads or writes, at most kMaxDepth, at least 1. A trace records when
// each call started, not when it ended, so which calls overlapped is not
// known: each thread that issued I/O is taken as one request in flight.
// Queued methods (io_uring, libaio) replay with up to this many requests
// in flight (docs/replay.md).
unsigned trace_depth(const Trace& t);

struct Settings {
  std::uint64_t seed = 0x10AB;  // the write pattern
  bool timing = false;          // sleep until each op's time_ns from the pass's start (the gaps are timed)
  io::FileOptions options;
};

// The workload replaying `t` (checked here: UsageError) through `method`.
// `t` and `record` outlive it; its files live in `scratch`.
std::unique_ptr<harness::Workload> make_workload(const Trace& t, const io::Method& method, const Settings& settings,
                                                 io::ScratchDir& scratch, results::Result& record);

// `t` through each of `methods`, as candidates of interleaved rounds
// (harness::Rounds) whose files live in `scratch`; `t` outlives them.
std::vector<harness::WorkloadCandidate> candidates(const Trace& t, const std::vector<const io::Method*>& methods,
                                                   const Settings& settings, io::ScratchDir& scratch);

// The trace's operations over its run, for the report's timeline (every
// replay record carries it as extra.trace_timeline): {"by": "time" (or
// "operation" for a trace without times), "span": ns (or operations),
// "buckets": n, "kinds": {kind: {"ops": [n], "bytes": [n]}}, "sizes": {kind:
// {"4096": count, ...}}}, sizes of reads and writes by the power of two at or
// above them. Opens, closes and mappings are left out.
nlohmann::json timeline(const Trace& t, std::size_t buckets = 100);

// The labels of a replay's record: suite "replay", the trace's name as the
// experiment, op "replay", the method.
results::Result labels(const Trace& t, std::string_view method);

// `t` replayed through each of `methods` in interleaved rounds on the
// common engine (harness::Rounds: one repetition of each per round, in a
// seeded order), `rounds` rounds; one record per method, in order, a
// method that cannot replay the trace skipped with the reason.
std::vector<results::Result> replay_methods(harness::Runner& runner, const Trace& t,
                                            const std::vector<const io::Method*>& methods, const Settings& settings,
                                            unsigned rounds);

}  // namespace iolab::replay
