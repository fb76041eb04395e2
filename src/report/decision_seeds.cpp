// The seeds' rules beside this machine's verdicts (decision_seeds.h).
#include "iolab/report/decision_seeds.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "common.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

// What a rule expects of its cell's verdict.
enum class SeedExpect {
  Wins,    // a method of the rule's kind is the winner (or in the tied set: partly)
  Loses,   // the winner is a method of another kind
};

// The kind of method a rule is about, by its traits (io::MethodTraits, as
// the records carry them), never by a candidate's label.
struct SeedKind {
  const char* name;
  bool (*is)(const io::MethodTraits&);
};
constexpr SeedKind kSeedMapped{"memory-mapped method", [](const io::MethodTraits& t) { return t.maps_file; }};
// FileChannel's read/write into a direct buffer: a kernel call per packet
// at its offset, through the page cache, no mapping, no user-space buffer,
// no queue (pread, preadv here).
constexpr SeedKind kSeedPositional{"method making a positional kernel call per packet", [](const io::MethodTraits& t) {
                                     return t.positional && !t.maps_file && !t.user_space_buffer && !t.queued &&
                                            !t.bypasses_page_cache && !t.library_calls;
                                   }};
constexpr SeedKind kSeedUserBuffer{"method buffering in user space", [](const io::MethodTraits& t) { return t.user_space_buffer; }};

struct SeedRule {
  const char* seed;
  const char* says;
  const char* op;
  const char* band;
  const char* flush;
  const char* column;
  SeedExpect expect;
  const SeedKind* kind;
};

// The seeds' reads used a fresh file per test (004) or a 1.73 GB file
// larger than the page cache kept (001): the cold column. Their writes went
// to the page cache: the buffered column. Java's FileChannel is a
// positional call per packet here (pread/pwrite, preadv/pwritev), a
// buffered stream a user-space buffer (stdio, iostream), MappedByteBuffer a
// mapping (mmap).
constexpr SeedRule kSeedRules[] = {
    {"004", "reads under 4 KiB: mmap wins clearly", "read", "< 64 B", "none", "cold", SeedExpect::Wins, &kSeedMapped},
    {"004", "reads under 4 KiB: mmap wins clearly", "read", "64 B..4 KiB", "none", "cold", SeedExpect::Wins, &kSeedMapped},
    {"004", "reads over 4 KiB: the others beat mmap", "read", "4 KiB..1 MiB", "none", "cold", SeedExpect::Loses,
     &kSeedMapped},
    {"004", "reads over 4 KiB: the others beat mmap", "read", ">= 1 MiB", "none", "cold", SeedExpect::Loses, &kSeedMapped},
    {"004", "writes under 64 B: mmap wins", "write", "< 64 B", "none", "buffered", SeedExpect::Wins, &kSeedMapped},
    {"004", "writes from 64 B up: FileChannel (pwrite) beats mmap", "write", "64 B..4 KiB", "none", "buffered",
     SeedExpect::Loses, &kSeedMapped},
    {"004", "writes from 64 B up: FileChannel (pwrite) beats mmap", "write", "4 KiB..1 MiB", "none", "buffered",
     SeedExpect::Loses, &kSeedMapped},
    {"004", "writes from 64 B up: FileChannel (pwrite) beats mmap", "write", ">= 1 MiB", "none", "buffered",
     SeedExpect::Loses, &kSeedMapped},
    {"004", "a flush every 16 KiB from another thread: avoid it with mmap", "write", "64 B..4 KiB", "async-16k",
     "buffered", SeedExpect::Loses, &kSeedMapped},
    {"004", "a flush every 16 KiB from another thread: avoid it with mmap", "write", "4 KiB..1 MiB", "async-16k",
     "buffered", SeedExpect::Loses, &kSeedMapped},
    {"001", "mmap for small sequential reads (1 KiB buffers)", "read", "64 B..4 KiB", "none", "cold", SeedExpect::Wins,
     &kSeedMapped},
    {"001", "at 1 MiB buffers FileChannel with a direct buffer (pread) beats mmap", "read", ">= 1 MiB", "none", "cold",
     SeedExpect::Wins, &kSeedPositional},
    {"002", "small (128 B) writes: buffer them (to at least 2x the write size)", "write", "64 B..4 KiB", "none",
     "buffered", SeedExpect::Wins, &kSeedUserBuffer},
    {"002", "mmap writes 1..2 KiB records fastest, FileChannel second", "write", "64 B..4 KiB", "none", "buffered",
     SeedExpect::Wins, &kSeedMapped},
    // Not a seed's: the published measurement issue 24 reproduces (random 4 KiB reads through mmap collapse once
    // the page cache is full, and never recover), asked by the larger-than-memory column.
    {"Crotty et al. (CIDR 2022)", "random reads past memory: not mmap (it collapses once the page cache is full)",
     "read", "4 KiB..1 MiB", "none", "larger than memory", SeedExpect::Loses, &kSeedMapped},
};

// Whether candidate `i` of the cell is of the rule's kind; nullopt when its records name no traits.
std::optional<bool> seed_is(const DesignedCell& c, std::size_t i, const SeedKind& kind) {
  if (i >= c.traits.size() || !c.traits[i]) return std::nullopt;
  return kind.is(*c.traits[i]);
}

// An undecided cell may still answer a rule size by size: a condition is
// judged on its own (harness::decide's beaten and settled), so a rule can be
// contradicted at one size, or hold at every size of a cell whose answer
// changes within the band. A rule claims its whole band: it holds ("yes")
// when it holds at every size, fails ("no") when it fails at some size and
// holds at none, "partly" when it holds at some and fails at others (or its
// kind is tied at the top where it should win), and "cannot say" when
// nothing contradicts it but some size is still open.
struct AtSizes {
  std::string agrees;
  std::string machine;  // "at 8 B: mmap wins; at 63 B: mmap beaten by stdio (1.2x, 1.17..1.23)"
};
AtSizes at_sizes(const DesignedCell& c, const SeedRule& rule) {
  const auto& v = c.verdict;
  bool yes = false, partly = false, no = false, open = false;
  std::string text;
  for (std::size_t k = 0; k < v.unbeaten.size() && k < v.beaten.size(); ++k) {
    const std::string at = k < c.conditions.size() ? exact_size(c.conditions[k]) : "size " + std::to_string(k + 1);
    std::vector<std::size_t> of_kind, beaten_of_kind;
    bool traits_known = true;
    for (std::size_t i = 0; i < c.candidates.size(); ++i) {
      const bool unbeaten = std::find(v.unbeaten[k].begin(), v.unbeaten[k].end(), i) != v.unbeaten[k].end();
      const bool beaten = i < v.beaten[k].size() && v.beaten[k][i].has_value();
      if (!unbeaten && !beaten) continue;  // did not run here
      auto is = seed_is(c, i, *rule.kind);
      if (!is) {
        traits_known = false;
      } else if (*is) {
        of_kind.push_back(i);
        if (beaten) beaten_of_kind.push_back(i);
      }
    }
    std::string here;
    enum { Holds, Partly, Fails, Open } said = Open;
    if (!traits_known) {
      here = "its records name no method traits";
    } else if (v.unbeaten[k].empty()) {
      here = "no figure";
    } else if (of_kind.empty()) {
      here = fmt::format("no {} ran", rule.kind->name);
    } else if (beaten_of_kind.size() == of_kind.size()) {
      for (auto i : beaten_of_kind) {
        const auto& b = *v.beaten[k][i];
        here += fmt::format("{}{} beaten by {} ({}x, {}..{})", here.empty() ? "" : ", ", c.candidates[i],
                            c.candidates[b.by], sig(b.interval.estimate, 3), sig(b.interval.lo, 3), sig(b.interval.hi, 3));
      }
      said = rule.expect == SeedExpect::Wins ? Fails : Holds;
    } else if (k < v.settled.size() && v.settled[k]) {
      std::string set;
      for (auto i : v.unbeaten[k]) set += (set.empty() ? "" : ", ") + c.candidates[i];
      const bool alone = of_kind.size() - beaten_of_kind.size() == v.unbeaten[k].size();
      here = v.unbeaten[k].size() == 1 ? set + " wins" : "a tie of " + set;
      // A tie of the rule's kind with others: partly where it should win, not where it should lose.
      said = rule.expect == SeedExpect::Wins ? (alone ? Holds : Partly) : Fails;
    } else {
      here = "unresolved";
    }
    text += fmt::format("{}at {}: {}", text.empty() ? "" : "; ", at, here);
    yes = yes || said == Holds, partly = partly || said == Partly, no = no || said == Fails, open = open || said == Open;
  }
  AtSizes out{"cannot say", text};
  if (no) out.agrees = yes || partly ? "partly" : "no";
  else if (!open && (yes || partly)) out.agrees = partly ? "partly" : "yes";
  return out;
}

}  // namespace

std::vector<SeedRuleRow> seed_rules(const DesignedTable& table) {
  std::vector<SeedRuleRow> out;
  for (const auto& rule : kSeedRules) {
    SeedRuleRow row{rule.seed, rule.says, fmt::format("{}|{}|{}|{}", rule.op, rule.band, rule.flush, rule.column), "", "",
                    rule.expect == SeedExpect::Wins ? fmt::format("a {} wins", rule.kind->name)
                                                    : fmt::format("the winner is not a {}", rule.kind->name)};
    auto it = std::find_if(table.cells.begin(), table.cells.end(), [&](const DesignedCell& c) {
      return c.op == rule.op && c.band == rule.band && c.flush == rule.flush && c.column == rule.column;
    });
    if (it == table.cells.end()) {
      row.machine = "not in this run";
      row.agrees = "cannot say";
    } else if (!it->unmeasurable.empty()) {
      row.machine = "not measured: " + it->unmeasurable;
      row.agrees = "cannot say";
    } else {
      const auto& v = it->verdict;
      const auto& names = it->candidates;
      switch (v.kind) {
        case harness::Verdict::Kind::Winner: {
          const std::string& w = names[v.chosen[0]];
          row.machine = fmt::format("{} wins ({:.3g}x over {}, interval {:.3g}..{:.3g})", w, v.interval.estimate,
                                    names[v.against], v.interval.lo, v.interval.hi);
          if (auto is = seed_is(*it, v.chosen[0], *rule.kind))
            row.agrees = (rule.expect == SeedExpect::Wins) == *is ? "yes" : "no";
          else
            row.agrees = "cannot say", row.machine += " (its records name no method traits)";
          break;
        }
        case harness::Verdict::Kind::Tie: {
          std::string set;
          bool in = false, known = true;
          for (auto i : v.chosen) {
            set += (set.empty() ? "" : ", ") + names[i];
            auto is = seed_is(*it, i, *rule.kind);
            known = known && is.has_value();
            in = in || is.value_or(false);
          }
          row.machine = "tie: " + set;
          // A winner of the rule's kind tied with others: partly; one the rule says loses, tied at the top: no.
          if (!known)
            row.agrees = "cannot say", row.machine += " (its records name no method traits)";
          else
            row.agrees = rule.expect == SeedExpect::Wins ? (in ? "partly" : "no") : (in ? "no" : "yes");
          break;
        }
        case harness::Verdict::Kind::Undecided: {
          AtSizes sizes = at_sizes(*it, rule);
          row.machine = fmt::format("undecided after {} rounds", it->rounds);
          if (!sizes.machine.empty()) row.machine += " (" + sizes.machine + ")";
          row.agrees = sizes.agrees;
          break;
        }
      }
    }
    out.push_back(std::move(row));
  }
  out.push_back({"002", "copies: zero copy (transferTo) beats a 4 KiB stream copy", "", "not in this table (iolab run: copy suite)", "not in this table", ""});
  out.push_back({"000", "a record store: nio + mmap 10x faster than per-field RandomAccessFile", "", "not in this table (iolab run: store suite)", "not in this table", ""});
  out.push_back({"003", "parallel writers of one file: raw bytes reach C speed, per-element streams do not", "", "not in this table (iolab-mpi)", "not in this table", ""});
  return out;
}

std::string format_text(const std::vector<SeedRuleRow>& rows) {
  std::string s = "\nThe seeds' rules beside this machine (seed says / this machine says / agrees?):\n";
  for (const auto& r : rows)
    s += fmt::format("  {} {}{}\n      {}{}: {} -> {}\n", r.seed, r.says, r.expects.empty() ? "" : " [" + r.expects + "]",
                     r.cell.empty() ? "" : "cell ", r.cell, visible(r.machine), r.agrees);  // labels come from the file
  return s;
}

nlohmann::json to_json(const std::vector<SeedRuleRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows)
    out.push_back({{"seed", r.seed},
                   {"says", r.says},
                   {"expects", r.expects.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.expects)},
                   {"cell", r.cell.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.cell)},
                   {"machine", r.machine},
                   {"agrees", r.agrees}});
  return out;
}

}  // namespace iolab::report
