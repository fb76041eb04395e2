// The decision's conditions and candidates (design.h).
#include "iolab/decision/design.h"

#include <algorithm>

#include "iolab/base/names.h"
#include "iolab/base/splitmix.h"
#include "iolab/base/units.h"
#include "iolab/harness/memory_cgroup.h"
#include "iolab/io/registry.h"

namespace iolab::decision {

namespace {

constexpr NameTable<Column, 6> kColumns{
    {{Column::Warm, "warm"}, {Column::Cold, "cold"}, {Column::Direct, "direct"}, {Column::PastMemory, "past-memory"},
     {Column::PastMemoryDirect, "past-memory-direct"}, {Column::Buffered, "buffered"}}};
constexpr NameTable<Spacing, 3> kSpacings{
    {{Spacing::Every4x, "every 4x"}, {Spacing::Every16x, "every 16x"}, {Spacing::Every64x, "every 64x"}}};

constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * 1024;
// O_DIRECT needs buffer, offset and length in multiples of the device's
// logical block (512 B at least).
constexpr std::uint64_t kDirectUnit = 512;
// A file is this many packets, within [kSmallestFile, max_file]: enough
// calls that a pass of small packets outlasts its own setup, few enough
// that a pass of large ones stays short.
constexpr std::uint64_t kCallsPerFile = 4096;
constexpr std::uint64_t kSmallestFile = 256 * kKiB;
// A write pass whose bytes must reach the device (a flush policy, or
// O_DIRECT) costs the device's time, not the method's: such a pass makes at
// most kMaxFlushes flushes and its file holds at most kDeviceFile bytes, but
// always two packets. Every candidate at a condition writes the same file
// size (the records state it).
constexpr std::uint64_t kMaxFlushes = 64;
constexpr std::uint64_t kDeviceFile = 1 * kMiB;
// The past-memory columns' packets: from a page to about a MiB, where a
// random read's cost is the device's, not the call's.
constexpr std::uint64_t kPastMemoryFrom = 4 * kKiB, kPastMemoryTo = 1 * kMiB;
// A past-memory pass reads at least this many blocks (mmap reads a few
// hundred random blocks a second past memory: a pass of ~0.1 s), a queued
// one at least this many queue-fulls, so its queue runs full for most of it.
constexpr std::uint64_t kPassBlocks = 16, kPassQueueFulls = 4;
// Its verification pass checks this many blocks of the candidate's
// permutation, every byte: a bounded sample the record states.
constexpr std::uint64_t kVerifyBlocks = 32;

struct Variant {
  const io::Method* method;
  io::FileOptions options;
  std::string label;
};

// Every file method in its default form; a queued one at QD 1 and QD 32;
// one that can open O_DIRECT or not, both ways. `direct` picks the variants
// that bypass the page cache, else those that do not.
std::vector<Variant> variants(bool direct) {
  std::vector<Variant> out;
  for (const io::Method* m : io::file_methods()) {
    std::vector<io::FileOptions> forms{io::FileOptions{}};
    if (m->traits(io::FileOptions{}).direct_optional) {
      io::FileOptions d;
      d.direct = true;
      forms.push_back(d);
    }
    for (const auto& form : forms) {
      const io::MethodTraits t = m->traits(form);
      if (t.bypasses_page_cache != direct) continue;
      std::string label(m->name());
      if (form.direct && !m->traits(io::FileOptions{}).bypasses_page_cache) label += " O_DIRECT";
      if (!t.queued) {
        out.push_back({m, form, label});
        continue;
      }
      for (unsigned qd : {1u, 32u}) {
        io::FileOptions q = form;
        q.queue_depth = qd;
        out.push_back({m, q, label + " QD" + std::to_string(qd)});
      }
    }
  }
  return out;
}

// The candidates of a row: the column's variants, less those that cannot
// do its flush policy or read one request at a time where the column asks.
std::vector<Variant> row_variants(const Row& row) {
  const io::FlushPolicy policy = io::parse_flush_policy(row.flush);
  // A flush between writes (every write, every N bytes) has no single
  // point to run at while a queue keeps several writes in flight.
  const bool inline_flush = policy.schedule == io::FlushSchedule::EveryWrite ||
                            policy.schedule == io::FlushSchedule::EveryBytes ||
                            policy.schedule == io::FlushSchedule::EveryOps;
  const bool direct = row.column == Column::Direct || row.column == Column::PastMemoryDirect;
  std::vector<Variant> out;
  for (auto& v : variants(direct)) {
    const io::MethodTraits t = v.method->traits(v.options);
    if (inline_flush && t.queued) continue;
    // Past memory through the page cache: the methods that read one request at a time.
    if (row.column == Column::PastMemory && t.queued && v.options.queue_depth != 1) continue;
    out.push_back(v);
    if (row.column == Column::PastMemory && t.maps_file) {
      io::FileOptions random = v.options;
      random.mmap_advice = io::Advice::Random;
      out.push_back({v.method, random, v.label + " MADV_RANDOM"});
    }
  }
  return out;
}

std::uint64_t file_for(std::uint64_t packet, std::uint64_t max_file) {
  const std::uint64_t calls = packet > UINT64_MAX / kCallsPerFile ? UINT64_MAX : packet * kCallsPerFile;
  const std::uint64_t file = std::min(std::max(calls, kSmallestFile), std::max(max_file, 2 * packet));
  return std::max(file / packet, std::uint64_t{2}) * packet;
}

}  // namespace

std::string_view to_string(Column c) { return name_of(kColumns, c); }
std::optional<Column> column_named(std::string_view name) { return value_of(kColumns, name); }
std::string_view to_string(Spacing s) { return name_of(kSpacings, s); }

bool column_fits(results::Op op, Column c) {
  if (op == results::Op::Write) return c == Column::Buffered || c == Column::Direct;
  return c != Column::Buffered;
}

std::string Row::key() const {
  return std::string(results::to_string(op)) + "|" + flush + "|" + std::string(to_string(column));
}

std::string Condition::key() const {
  return std::string(results::to_string(row.op)) + "|" + std::to_string(size) + "|" + row.flush + "|" +
         std::string(to_string(row.column));
}

std::vector<Row> rows(const DesignRequest& request) {
  std::vector<Row> out;
  auto asked = [](const auto& list, const auto& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  for (results::Op op : {results::Op::Read, results::Op::Write}) {
    if (!asked(request.ops, op)) continue;
    for (std::string_view flush : kFlushes) {
      // A read row's flush policy is "none": asked for with the writes' "none" or no --flush.
      if (op == results::Op::Read && flush != "none") continue;
      if (!asked(request.flushes, std::string(flush))) continue;
      for (const auto& [column, name] : kColumns) {
        if (!column_fits(op, column) || !asked(request.columns, column)) continue;
        out.push_back({op, std::string(flush), column});
      }
    }
  }
  return out;
}

std::vector<std::uint64_t> sizes(const Row& row, Spacing spacing, const DesignRequest& request) {
  if (!request.sizes.empty()) return request.sizes;
  const std::size_t step = spacing == Spacing::Every4x ? 1 : spacing == Spacing::Every16x ? 2 : 3;
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < std::size(kGrid); i += step) {
    const std::uint64_t s = kGrid[i];
    if ((row.column == Column::Direct || row.column == Column::PastMemoryDirect) && s < kDirectUnit) continue;
    if ((row.column == Column::PastMemory || row.column == Column::PastMemoryDirect) &&
        (s < kPastMemoryFrom || s > kPastMemoryTo))
      continue;
    out.push_back(s);
  }
  // The past-memory rows start at a page, the size of the published random-read figures.
  if (row.column == Column::PastMemory || row.column == Column::PastMemoryDirect)
    if (std::find(out.begin(), out.end(), kPastMemoryFrom) == out.end()) out.insert(out.begin(), kPastMemoryFrom);
  return out;
}

std::string past_memory_problem() {
  const harness::CgroupPlace place = harness::find_memory_cgroup();
  return place.root ? "" : place.why;
}

DesignedCondition design(const Condition& c, const DesignRequest& request) {
  DesignedCondition d;
  d.condition = c;
  const Row& row = c.row;
  const std::vector<Variant> vs = row_variants(row);
  for (const auto& v : vs) d.candidates.push_back({v.label, v.method->traits(v.options)});
  const bool direct = row.column == Column::Direct || row.column == Column::PastMemoryDirect;
  const bool past_memory = row.column == Column::PastMemory || row.column == Column::PastMemoryDirect;
  const io::FlushPolicy policy = io::parse_flush_policy(row.flush);
  const std::uint64_t block = c.size;
  if (block == 0) {
    d.unmeasurable = "a packet of 0 bytes moves nothing";
  } else if (direct && block % kDirectUnit) {
    d.unmeasurable = "O_DIRECT needs packets in multiples of 512 B; this one is " + exact_size(block);
  } else if (vs.size() < 2) {
    d.unmeasurable = vs.empty() ? "no file method can do this here"
                                : "only " + vs[0].label + " can do this" +
                                      (row.op == results::Op::Write && policy.flushes() && !direct
                                           ? " (queued methods keep several writes in flight: a flush after every "
                                             "write or every N bytes has no single point to run at)"
                                           : "");
  } else if (past_memory) {
    d.unmeasurable = past_memory_problem();
  }
  if (!d.unmeasurable.empty()) return d;
  d.device_bound = row.op == results::Op::Write && (direct || policy.flushes());
  const std::string column(to_string(row.column));
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const Variant& v = vs[i];
    harness::FileExperiment e;
    e.suite = "decision";
    e.method = std::string(v.method->name());
    e.method_label = v.label == e.method ? "" : v.label;
    e.options = v.options;
    e.op = row.op;
    e.block_size = block;
    e.latency = false;  // the decision rests on throughput; latency is `iolab run`'s
    e.file_size = file_for(block, request.max_file);
    if (row.op == results::Op::Read) {
      e.experiment = "read " + size_label(block) + " " + column;
      if (row.column == Column::Warm) e.cache = results::CacheState::Warm;
      if (row.column == Column::Cold) e.cache = results::CacheState::Cold;
      if (row.column == Column::Direct) e.cache = results::CacheState::Direct;
      if (past_memory) {
        // Random packets of a file 4x the room, from a full cache: a pass
        // reads a window of the candidate's own permutation of the blocks.
        e.file_size = kPastMemoryRatio * request.memory_room / block * block;
        e.pattern = results::AccessPattern::Rand;
        e.cache = results::CacheState::Full;
        e.cache_room = request.memory_room;
        e.pass_blocks = std::max(kPassBlocks, v.method->traits(v.options).queued
                                                  ? kPassQueueFulls * std::max(1u, e.options.queue_depth)
                                                  : 0);
        e.verify_blocks = kVerifyBlocks;
        // Independent streams: no candidate reads the blocks another just brought in.
        e.order_seed = splitmix64(0, i);
        e.experiment = "random read " + size_label(block) + ", file " + std::to_string(kPastMemoryRatio) + "x a " +
                       size_label(request.memory_room) + " page cache";
      }
    } else {
      e.experiment = "write " + size_label(block) + " flush " + row.flush + (direct ? " O_DIRECT" : "");
      if (direct) e.cache = results::CacheState::Direct;
      if (policy.flushes()) e.sync = policy;
      const std::uint64_t two = 2 * block;
      if (d.device_bound) e.file_size = std::min(e.file_size, std::max(kDeviceFile, two));
      if (policy.schedule == io::FlushSchedule::EveryBytes || policy.schedule == io::FlushSchedule::AsyncBytes)
        // A flush each `interval` bytes, or after each write when a packet is larger.
        e.file_size = std::max(std::min(e.file_size, std::max(kMaxFlushes * policy.interval, two)) / block, std::uint64_t{2}) * block;
      if (policy.schedule == io::FlushSchedule::EveryWrite) {
        // A flush per call: bound the calls, not the file.
        e.ops = std::clamp<std::uint64_t>(e.file_size / block, 2, kMaxFlushes);
        e.file_size = e.ops * block;
      }
    }
    d.experiments.push_back(std::move(e));
  }
  return d;
}

}  // namespace iolab::decision
