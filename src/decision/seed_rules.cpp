// The seeds' rules judged size by size (seed_rules.h).
#include "iolab/decision/seed_rules.h"

#include <fmt/format.h>

#include <cstdint>

#include "iolab/base/units.h"

namespace iolab::decision {

namespace {

// The kind of method a rule is about, by its traits.
struct SeedKind {
  const char* name;
  bool (*is)(const io::MethodTraits&);
};
constexpr SeedKind kMapped{"memory-mapped method", [](const io::MethodTraits& t) { return t.maps_file; }};
// FileChannel's read/write into a direct buffer: a kernel call per packet
// at its offset, through the page cache, no mapping, no user-space buffer,
// no queue (pread, preadv here).
constexpr SeedKind kPositional{"method making a positional kernel call per packet", [](const io::MethodTraits& t) {
                                 return t.positional && !t.maps_file && !t.user_space_buffer && !t.queued &&
                                        !t.bypasses_page_cache && !t.library_calls;
                               }};
constexpr SeedKind kUserBuffer{"method buffering in user space", [](const io::MethodTraits& t) { return t.user_space_buffer; }};

enum class Expect { Picked, NotPicked };

struct SeedRule {
  const char* seed;
  const char* says;
  results::Op op;
  const char* flush;
  Column column;
  std::uint64_t from, to;  // sizes judged: from <= size <= to
  Expect expect;
  const SeedKind* kind;
};

constexpr std::uint64_t kMax = UINT64_MAX;
// The seeds' reads used a fresh file per test (004) or a file larger than
// the page cache kept (001): the cold column. Their writes went to the page
// cache: the buffered column.
constexpr SeedRule kRules[] = {
    {"004", "reads under 4 KiB: mmap wins clearly", results::Op::Read, "none", Column::Cold, 1, 4095, Expect::Picked, &kMapped},
    {"004", "reads over 4 KiB: the others beat mmap", results::Op::Read, "none", Column::Cold, 4097, kMax, Expect::NotPicked,
     &kMapped},
    {"004", "writes under 64 B: mmap wins", results::Op::Write, "none", Column::Buffered, 1, 63, Expect::Picked, &kMapped},
    {"004", "writes from 64 B up: FileChannel (pwrite) beats mmap", results::Op::Write, "none", Column::Buffered, 64, kMax,
     Expect::NotPicked, &kMapped},
    {"004", "a flush every 16 KiB from another thread: avoid it with mmap", results::Op::Write, "async-16k",
     Column::Buffered, 64, 1024 * 1024, Expect::NotPicked, &kMapped},
    {"001", "mmap for small sequential reads (1 KiB buffers)", results::Op::Read, "none", Column::Cold, 64, 4095,
     Expect::Picked, &kMapped},
    {"001", "at 1 MiB buffers FileChannel with a direct buffer (pread) beats mmap", results::Op::Read, "none",
     Column::Cold, 1024 * 1024, kMax, Expect::Picked, &kPositional},
    {"002", "small (128 B) writes: buffer them (to at least 2x the write size)", results::Op::Write, "none",
     Column::Buffered, 64, 1023, Expect::Picked, &kUserBuffer},
    {"002", "mmap writes 1..2 KiB records fastest, FileChannel second", results::Op::Write, "none", Column::Buffered, 1024,
     4095, Expect::Picked, &kMapped},
    // Not a seed's: the published measurement issue 24 reproduces (random reads through mmap collapse once the
    // page cache is full), asked by the past-memory column, mmap against its depth-1 peers.
    {"Crotty et al. (CIDR 2022)", "random reads past memory: not mmap (it collapses once the page cache is full)",
     results::Op::Read, "none", Column::PastMemory, 4096, 1024 * 1024, Expect::NotPicked, &kMapped},
};

std::string range_text(std::uint64_t from, std::uint64_t to) {
  if (to == kMax) return "from " + exact_size(from);
  if (from <= 1) return "under " + exact_size(to + 1);
  return exact_size(from) + ".." + exact_size(to);
}

}  // namespace

std::vector<SeedRuleRow> seed_rules(const Decision& d) {
  std::vector<SeedRuleRow> out;
  for (const SeedRule& rule : kRules) {
    const Row row{rule.op, rule.flush, rule.column};
    SeedRuleRow r{rule.seed, rule.says, row.key(), range_text(rule.from, rule.to),
                  rule.expect == Expect::Picked ? fmt::format("a {} is picked", rule.kind->name)
                                                : fmt::format("the pick is not a {}", rule.kind->name),
                  "", "cannot say"};
    bool holds = false, fails = false, partly = false, unknown = false;
    std::size_t judged = 0;
    for (const auto& c : d.conditions) {
      if (!(c.condition.row == row) || c.condition.size < rule.from || c.condition.size > rule.to) continue;
      std::string here;
      if (!c.measured() || !c.pick) {
        here = std::string(to_string(c.stop));
      } else {
        const auto& pick = c.candidates[*c.pick];
        if (!pick.traits) {
          unknown = true;
          here = pick.label + " (its records name no traits)";
        } else {
          ++judged;
          const bool pick_is = rule.kind->is(*pick.traits);
          bool kind_within = false;
          for (std::size_t i : c.within)
            if (i != *c.pick && c.candidates[i].traits && rule.kind->is(*c.candidates[i].traits)) kind_within = true;
          here = pick.label;
          if (c.within.size() > 1) here += fmt::format(" ({} within {:.2f}x)", c.within.size() - 1, c.indifference);
          if (c.stop == Stop::Budget) here += " [budget]";
          if (rule.expect == Expect::Picked) {
            if (pick_is) holds = true;
            else if (kind_within) partly = true;
            else fails = true;
          } else {
            if (!pick_is && !kind_within) holds = true;
            else if (!pick_is) partly = true;
            else fails = true;
          }
        }
      }
      r.machine += fmt::format("{}at {}: {}", r.machine.empty() ? "" : "; ", exact_size(c.condition.size), here);
    }
    if (r.machine.empty()) {
      r.machine = "no size of this range in this run";
      r.agrees = "not in this table";
    } else if (judged > 0 && !unknown) {
      r.agrees = fails && !holds && !partly ? "no" : !fails && !partly ? "yes" : "partly";
    }
    out.push_back(std::move(r));
  }
  out.push_back({"002", "copies: zero copy (transferTo) beats a 4 KiB stream copy", "", "", "", "iolab run: the copy suite",
                 "not in this table"});
  out.push_back({"000", "a record store: nio + mmap 10x faster than per-field RandomAccessFile", "", "", "",
                 "iolab run: the store suite", "not in this table"});
  out.push_back({"003", "parallel writers of one file: raw bytes reach C speed, per-element streams do not", "", "", "",
                 "iolab-mpi", "not in this table"});
  return out;
}

nlohmann::json to_json(const std::vector<SeedRuleRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  auto opt = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  for (const auto& r : rows)
    out.push_back({{"seed", r.seed}, {"says", r.says}, {"row", opt(r.row)}, {"sizes", opt(r.sizes)},
                   {"expects", opt(r.expects)}, {"machine", r.machine}, {"agrees", r.agrees}});
  return out;
}

}  // namespace iolab::decision
