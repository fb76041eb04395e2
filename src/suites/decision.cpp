// The decision table's design and its adaptive, interleaved run (decision.h).
#include "iolab/suites/decision.h"

#include <algorithm>

#include "iolab/base/clock.h"
#include "iolab/base/units.h"
#include "iolab/harness/comparison.h"
#include "iolab/io/registry.h"

namespace iolab::suites {

namespace {

// A packet size exactly: "63 B", "4095 B", "4 KiB", "1020 KiB", "8 MiB".
std::string exact_size(std::uint64_t b) {
  if (b % (1024 * 1024) == 0) return std::to_string(b >> 20) + " MiB";
  if (b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}


struct BandSpec {
  const char* name;
  std::uint64_t edges[2];  // the conditions: packet sizes at the band's edges
  std::uint64_t file;      // file per condition, so 8 B calls stay short
};
constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr BandSpec kBands[] = {
    {"< 64 B", {8, 63}, 256 * kKiB},
    {"64 B..4 KiB", {64, 4095}, 4 * kMiB},
    {"4 KiB..1 MiB", {4 * kKiB, 1020 * kKiB}, 16 * kMiB},
    {">= 1 MiB", {1 * kMiB, 8 * kMiB}, 32 * kMiB},
};
// "end" (one flush after the last write) is a row of its own: the data is
// durable when the timed region ends, which "none" does not promise.
constexpr const char* kFlushes[] = {"none", "end", "every-16k", "async-16k", "every"};
// O_DIRECT needs buffer, offset and length in multiples of the device's
// logical block (512 B at least).
constexpr std::uint64_t kDirectUnit = 512;

struct Variant {
  const io::Method* method;
  io::FileOptions options;
  std::string label;
};

// Every file method in its default form; a queued one at QD 1 and QD 32;
// a method that can open O_DIRECT or not, both ways. `direct` picks the
// variants that bypass the page cache, else those that do not.
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
      io::MethodTraits t = m->traits(form);
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

harness::FileExperiment experiment(const Variant& v, harness::Op op, std::uint64_t block, std::uint64_t file) {
  harness::FileExperiment e;
  e.suite = "decision";
  e.method = std::string(v.method->name());
  e.method_label = v.label == e.method ? "" : v.label;
  e.options = v.options;
  e.op = op;
  e.block_size = block;
  e.file_size = std::max(file / block * block, block);
  e.latency = false;  // the decision rests on throughput; latency is `iolab run`'s
  return e;
}

}  // namespace

std::string DecisionCell::key() const { return op + "|" + band + "|" + flush + "|" + column; }

std::vector<DecisionCell> decision_design(std::uint64_t max_file) {
  std::vector<DecisionCell> out;
  const std::vector<Variant> buffered_variants = variants(false), direct_variants = variants(true);
  auto fill = [&](DecisionCell c, const BandSpec& band, bool direct, auto&& shape) {
    const std::vector<Variant>& vs = direct ? direct_variants : buffered_variants;
    c.band = band.name;
    c.conditions = {band.edges[0], band.edges[1]};
    for (const auto& v : vs) c.candidates.push_back(v.label);
    if (direct && (band.edges[0] % kDirectUnit || band.edges[1] % kDirectUnit))
      c.unmeasurable = "O_DIRECT needs packets in multiples of 512 B; this band's edges are " +
                       exact_size(band.edges[0]) + " and " + exact_size(band.edges[1]);
    else if (vs.size() < 2)
      c.unmeasurable = vs.empty() ? "no file method can do this here" : "only " + vs[0].label + " can do this";
    if (c.unmeasurable.empty())
      for (std::uint64_t block : c.conditions) {
        std::vector<harness::FileExperiment> row;
        for (const auto& v : vs) {
          harness::FileExperiment e = experiment(v, c.op == "read" ? harness::Op::Read : harness::Op::Write, block,
                                                 std::min(std::max(band.file, 2 * block), std::max(max_file, block)));
          shape(e);
          row.push_back(std::move(e));
        }
        c.experiments.push_back(std::move(row));
      }
    out.push_back(std::move(c));
  };
  // A read column is the cache state the reads start from.
  for (const auto& band : kBands) {
    for (harness::CacheState cache : {harness::CacheState::Warm, harness::CacheState::Cold, harness::CacheState::Direct}) {
      DecisionCell c;
      c.op = "read";
      c.flush = "none";
      c.column = std::string(harness::to_string(cache));
      fill(c, band, cache == harness::CacheState::Direct, [&](harness::FileExperiment& e) {
        e.cache = cache;
        e.experiment = "read " + size_label(e.block_size) + " " + c.column;
      });
    }
  }
  for (const auto& band : kBands)
    for (const char* flush : kFlushes)
      for (bool direct : {false, true}) {
        DecisionCell c;
        c.op = "write";
        c.flush = flush;
        c.column = direct ? "direct" : "buffered";
        // The flush is each method's own data sync (MethodTraits::data_sync).
        const harness::SyncPolicy policy = harness::parse_sync_policy(flush);
        fill(c, band, direct, [&](harness::FileExperiment& e) {
          if (direct) e.cache = harness::CacheState::Direct;
          e.experiment = "write " + size_label(e.block_size) + " flush " + flush + (direct ? " O_DIRECT" : "");
          if (policy.flushes()) e.sync = policy;
          if (policy.schedule == harness::FlushSchedule::EveryWrite) {
            // A flush per call costs 0.1..5 ms: bound the calls, not the file.
            e.ops = std::clamp<std::uint64_t>(e.file_size / e.block_size, 1, 64);
            e.file_size = e.ops * e.block_size;
          }
        });
      }
  return out;
}

std::vector<harness::Result> run_decision(harness::Runner& runner, const std::vector<DecisionCell>& design,
                                          const DecisionSettings& settings) {
  std::vector<harness::Result> out;
  const std::uint64_t begin = steady_ns();
  auto elapsed = [&](std::uint64_t since) { return static_cast<double>(steady_ns() - since) / 1e9; };
  std::size_t measurable = 0;
  for (const auto& c : design) measurable += c.unmeasurable.empty();
  std::size_t left = measurable;
  for (std::size_t ci = 0; ci < design.size(); ++ci) {
    const DecisionCell& cell = design[ci];
    auto tag = [&](harness::Result& r) {
      r.extra["decision_cell"] = cell.key();
      r.extra["decision_margin"] = settings.margin;
    };
    if (!cell.unmeasurable.empty()) {
      harness::Result r;
      r.suite = "decision";
      r.experiment = cell.key();
      r.op = cell.op == "read" ? harness::Op::Read : harness::Op::Write;
      r.skipped = cell.unmeasurable;
      tag(r);
      r.extra["decision_candidates"] = cell.candidates;  // what it would have compared
      r.extra["decision_conditions"] = cell.conditions;
      out.push_back(std::move(r));
      continue;
    }
    // An equal share of what is left; cells decided early leave time to the others.
    const double share = std::max(0.0, settings.budget_s - elapsed(begin)) / static_cast<double>(left--);
    const std::uint64_t cell_start = steady_ns();
    std::vector<std::unique_ptr<harness::Rounds>> groups;
    for (std::size_t k = 0; k < cell.experiments.size(); ++k) {
      // A seed per condition, from the run's seed and the cell's place: recorded in every record.
      std::uint64_t seed = settings.seed * 1000003u + ci * 16 + k;
      groups.push_back(std::make_unique<harness::Rounds>(runner, cell.experiments[k], seed, settings.min_rounds));
      groups.back()->start();
    }
    std::vector<std::string> conditions;
    for (auto b : cell.conditions) conditions.push_back(exact_size(b));
    std::string stop = "max_rounds";
    harness::Verdict verdict;
    for (unsigned round = 0; round < settings.max_rounds; ++round) {
      for (auto& g : groups) g->round();
      if (round + 1 < settings.min_rounds) continue;
      std::vector<std::vector<std::vector<double>>> rates;
      for (auto& g : groups) rates.push_back(g->rates());
      verdict = harness::decide(rates, cell.candidates, conditions, settings.margin);
      if (verdict.kind != harness::Verdict::Kind::Undecided) {
        stop = "decided";
        break;
      }
      if (elapsed(cell_start) >= share) {
        stop = "budget";
        break;
      }
    }
    for (std::size_t k = 0; k < groups.size(); ++k) {
      std::vector<harness::Result> records = groups[k]->finish();
      for (std::size_t i = 0; i < records.size(); ++i) {
        auto& r = records[i];
        tag(r);
        r.extra["decision_candidate"] = cell.candidates[i];
        r.extra["decision_condition"] = k;
        r.extra["decision_stop"] = stop;
        out.push_back(std::move(r));
      }
    }
    if (settings.progress)
      settings.progress(cell.key() + ": " + std::string(harness::to_string(verdict.kind)) + " after " +
                        std::to_string(groups.empty() ? 0 : groups[0]->rounds()) + " rounds (" +
                        std::to_string(static_cast<int>(elapsed(cell_start))) + " s)");
  }
  return out;
}

}  // namespace iolab::suites
