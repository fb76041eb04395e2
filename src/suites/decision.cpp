// The decision table's design and its adaptive, interleaved run (decision.h).
#include "iolab/suites/decision.h"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/core.h>

#include "iolab/base/clock.h"
#include "iolab/base/units.h"
#include "iolab/harness/comparison.h"
#include "iolab/io/scratch.h"
#include "iolab/io/registry.h"
#include "decision_trials.h"

namespace iolab::suites {

namespace {

// A ratio in three significant digits, but whole above 100 ("956", "1016",
// not "1.02e+03": mmap past memory is beaten by three orders of magnitude).
std::string ratio_text(double x) { return x < 100 ? fmt::format("{:.3g}", x) : fmt::format("{:.0f}", x); }

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
// A write pass whose bytes must reach the device (a flush policy, or
// O_DIRECT) costs the device's time, not the method's: a flush took about
// 8.6 ms here (fdatasync of 16 KiB, virtio disk), so a 4 MiB file flushed
// every 16 KiB made one pass last 2.2 s, 40 times the repetition it was
// for, and one cell took minutes. Such a pass makes at most kMaxFlushes
// flushes, and its file holds at most kDeviceFile bytes, but always two
// packets. Not fewer flushes: a flush can also take 1 ms, and at 16 a
// pass the repetitions of one pass came out under the 50 ms a figure needs
// (too_short) in most records. Every candidate at a condition writes the
// same file size (the records state it).
constexpr std::uint64_t kMaxFlushes = 64;
constexpr std::uint64_t kDeviceFile = 1024 * 1024;
// The band of the larger-than-memory cell: packets from a page to about a
// MiB, where a random read's cost is the device's, not the call's.
constexpr std::string_view kLargerThanMemoryBand = "4 KiB..1 MiB";

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

std::vector<DecisionCell> decision_design(std::uint64_t max_file, std::uint64_t memory_room) {
  std::vector<DecisionCell> out;
  const std::vector<Variant> buffered_variants = variants(false), direct_variants = variants(true);
  // `inline_flush`: a flush between writes (every write, every N bytes), which a queued method
  // cannot make (writes are in flight at every point): such methods are not candidates there.
  auto fill = [&](DecisionCell c, const BandSpec& band, bool direct, bool inline_flush, auto&& shape) {
    std::vector<Variant> vs;
    for (const auto& v : direct ? direct_variants : buffered_variants)
      if (!inline_flush || !v.method->traits(v.options).queued) vs.push_back(v);
    c.band = band.name;
    c.conditions = {band.edges[0], band.edges[1]};
    for (const auto& v : vs) {
      c.candidates.push_back(v.label);
      c.traits.push_back(v.method->traits(v.options));
    }
    if (direct && (band.edges[0] % kDirectUnit || band.edges[1] % kDirectUnit))
      c.unmeasurable = "O_DIRECT needs packets in multiples of 512 B; this band's edges are " +
                       exact_size(band.edges[0]) + " and " + exact_size(band.edges[1]);
    else if (vs.size() < 2)
      c.unmeasurable = vs.empty() ? "no file method can do this here"
                                  : "only " + vs[0].label + " can do this" +
                                        (inline_flush ? " (queued methods keep several writes in flight: a flush after "
                                                        "every write or every N bytes has no single point to run at)"
                                                      : "");
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
      fill(c, band, cache == harness::CacheState::Direct, false, [&](harness::FileExperiment& e) {
        e.cache = cache;
        e.experiment = "read " + size_label(e.block_size) + " " + c.column;
      });
    }
    if (std::string_view(band.name) == kLargerThanMemoryBand) out.push_back(larger_than_memory_cell(memory_room));
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
        const bool inline_flush = policy.schedule == harness::FlushSchedule::EveryWrite ||
                                  policy.schedule == harness::FlushSchedule::EveryBytes ||
                                  policy.schedule == harness::FlushSchedule::EveryOps;
        c.device_bound = direct || policy.flushes();
        fill(c, band, direct, inline_flush, [&](harness::FileExperiment& e) {
          if (direct) e.cache = harness::CacheState::Direct;
          e.experiment = "write " + size_label(e.block_size) + " flush " + flush + (direct ? " O_DIRECT" : "");
          if (policy.flushes()) e.sync = policy;
          const std::uint64_t two = 2 * e.block_size;
          if (policy.flushes() || direct) e.file_size = std::min(e.file_size, std::max(kDeviceFile, two));
          if (policy.schedule == harness::FlushSchedule::EveryBytes || policy.schedule == harness::FlushSchedule::AsyncBytes)
            // A flush each `interval` bytes, or after each write when a packet is larger.
            e.file_size = std::min(e.file_size, std::max(kMaxFlushes * policy.interval, two)) / e.block_size * e.block_size;
          if (policy.schedule == harness::FlushSchedule::EveryWrite) {
            // A flush per call: bound the calls, not the file.
            e.ops = std::clamp<std::uint64_t>(e.file_size / e.block_size, 2, kMaxFlushes);
            e.file_size = e.ops * e.block_size;
          }
        });
      }
  return out;
}

DecisionCell larger_than_memory_cell(std::uint64_t memory_room) {
  // Reads of a file larger than memory: every read method in its default
  // form, through the page cache or O_DIRECT, at the edges of its band
  // where the other read cells have theirs; shaped and run by
  // decision_memory.cpp. In the design beside its band's other read
  // cells, so the table shows it there; run_decision runs it as the
  // fourth of its op and band's cells, about 7/8 into the run. Its setup
  // (a file four times the room, 26 candidates' warm-ups past memory)
  // weighs a little in the cost model of the cells after it.
  const BandSpec& band = *std::find_if(std::begin(kBands), std::end(kBands), [](const BandSpec& b) {
    return std::string_view(b.name) == kLargerThanMemoryBand;
  });
  std::vector<Variant> vs = variants(false);
  for (auto& v : variants(true)) vs.push_back(std::move(v));
  DecisionCell c;
  c.op = "read", c.band = band.name, c.flush = "none", c.column = kLargerThanMemory;
  c.conditions = {band.edges[0], band.edges[1]};
  for (const auto& v : vs) {
    c.candidates.push_back(v.label);
    c.traits.push_back(v.method->traits(v.options));
  }
  c.unmeasurable = larger_than_memory_problem();
  if (c.unmeasurable.empty())
    for (std::uint64_t block : c.conditions) {
      std::vector<harness::FileExperiment> row;
      for (std::size_t i = 0; i < vs.size(); ++i) {
        harness::FileExperiment e = experiment(vs[i], harness::Op::Read, block, kLargerThanMemoryRatio * memory_room);
        shape_larger_than_memory(e, memory_room, i);
        row.push_back(std::move(e));
      }
      c.experiments.push_back(std::move(row));
    }
  return c;
}

std::vector<CellOutcome> schedule_decision(std::vector<ScheduledCell>& cells, const DecisionSettings& settings,
                                           const std::function<double()>& now) {
  std::vector<CellOutcome> out(cells.size());
  const double t0 = now();
  const double deadline = t0 + settings.budget_s;
  const unsigned min_rounds = std::max(1u, settings.min_rounds);
  const double top = std::max(settings.min_time, 0.0), floor = std::min(settings.min_time_floor, top);
  // The cost model, calibrated on the cells run so far: a cell of T turns
  // at min_time m costs T x (setup + rounds x m x stretch), both from the
  // cells of its cost class when one has run (a flush after every write
  // costs several times a cached read), else from every cell. Before the
  // first cell: warm-up, verification and calibration passes of about 4
  // repetitions, and repetitions 30% over their floor.
  struct Costs {
    double setup_s = 0, setup_turns = 0, rep_s = 0, rep_min = 0;
  };
  Costs all;
  std::map<std::string, Costs> by_class;
  auto costs = [&](std::size_t j) -> const Costs& {
    auto it = by_class.find(cells[j].cost_class);
    return it != by_class.end() && it->second.setup_turns > 0 ? it->second : all;
  };
  auto setup_per_turn = [&](std::size_t j) {
    const Costs& c = costs(j);
    return c.setup_turns > 0 ? c.setup_s / c.setup_turns : 4 * top + 0.05;
  };
  auto stretch = [&](std::size_t j) {
    const Costs& c = costs(j);
    return c.rep_min > 0 ? std::max(1.0, c.rep_s / c.rep_min) : 1.3;
  };
  auto cost = [&](std::size_t j, double m, unsigned rounds) {
    return static_cast<double>(cells[j].turns) * (setup_per_turn(j) + rounds * m * stretch(j));
  };
  for (std::size_t i = 0; i < cells.size(); ++i) {
    CellOutcome& o = out[i];
    const double left = deadline - now();
    // The repetition time that fits every remaining cell's minimum into its share of what is left.
    double setups = 0, reps = 0;
    for (std::size_t j = i; j < cells.size(); ++j) {
      setups += static_cast<double>(cells[j].turns) * setup_per_turn(j);
      reps += static_cast<double>(cells[j].turns) * min_rounds * stretch(j);
    }
    double m = top;
    if (reps > 0 && top > 0) m = std::clamp((settings.minimum_share * left - setups) / reps, floor, top);
    o.min_time = m;
    o.start_s = now() - t0;
    const double minimum = cost(i, m, min_rounds);
    if (cells[i].turns == 0 || minimum > left) {
      o.stop = "not run: budget";
      o.end_s = o.start_s;
      if (cells[i].not_run)
        cells[i].not_run(fmt::format("not run: budget (its {} rounds need about {:.0f} s; {:.0f} s of the {:.0f} s budget "
                                     "were left)",
                                     min_rounds, minimum, std::max(0.0, left), settings.budget_s));
      continue;
    }
    // Beyond the minimum: an equal share of the time no remaining minimum is planned for.
    double planned = 0;
    for (std::size_t j = i; j < cells.size(); ++j) planned += cost(j, m, min_rounds);
    const double extra = std::max(0.0, left - planned) / static_cast<double>(cells.size() - i);
    std::unique_ptr<CellTrial> trial = cells[i].make(m);
    const double s0 = now();
    trial->start();
    const double s1 = now();
    // The hard bound: a repetition starts only if the last one's length still fits.
    double last = s1, longest = 0;
    auto more = [&] {
      const double t = now();
      longest = std::max(longest, t - last);
      last = t;
      return t + longest <= deadline;
    };
    std::string stop = "max_rounds";
    harness::Verdict verdict;
    unsigned rounds = 0;
    // Beyond its minimum a cell may take up to `borrow` times its equal
    // share of the spare time, while its hardest pair looks resolvable in
    // the rounds that buys: the time goes where it can still buy a verdict.
    const double allowance = std::max(1.0, settings.borrow) * extra;
    double extra_start = 0;
    for (; rounds < settings.max_rounds;) {
      if (rounds >= min_rounds) {
        // Another round only if it fits in the cell's allowance (judged by its rounds so far).
        const double per_round = (now() - s1) / rounds;
        if (extra_start == 0) extra_start = now();
        if (now() - extra_start + per_round > allowance) {
          stop = "budget";
          break;
        }
      }
      last = now();
      if (!trial->round(more)) {
        stop = "budget";
        break;
      }
      ++rounds;
      if (rounds < min_rounds) continue;
      verdict = trial->judge();
      if (verdict.final()) {
        stop = verdict.kind != harness::Verdict::Kind::Undecided ? "decided"
               : verdict.past_deciding                           ? "sizes_differ"
                                                                 : "settled";
        break;
      }
      // Hopeless here: a pair whose interval would still straddle the margin
      // after every round the cell may still take (its ratio sits near the
      // margin, or its rounds are that noisy). Judged once the estimate has
      // two rounds past the first interval; its time goes to the cells after it.
      const double per_round = (now() - s1) / rounds;
      const double can_take = std::min<double>(settings.max_rounds,
          rounds + std::max(0.0, allowance - (extra_start > 0 ? now() - extra_start : 0.0)) / per_round);
      if (rounds >= min_rounds + 2 && rounds < settings.max_rounds && verdict.rounds_needed > can_take) {
        stop = "futile";
        break;
      }
    }
    if (rounds < min_rounds || stop == "budget" || stop == "max_rounds") verdict = rounds > 0 ? trial->judge() : harness::Verdict{};
    const double s2 = now();
    trial->finish(stop);
    // Calibrate the model on what this cell cost.
    for (Costs* c : {&all, &by_class[cells[i].cost_class]}) {
      c->setup_s += s1 - s0;
      c->setup_turns += static_cast<double>(cells[i].turns);
      if (rounds > 0 && m > 0) {
        c->rep_s += s2 - s1;
        c->rep_min += static_cast<double>(cells[i].turns) * rounds * m;
      }
    }
    o.stop = stop;
    o.rounds = rounds;
    o.kind = verdict.kind;
    o.end_s = now() - t0;
  }
  return out;
}

namespace {

// A cell measured in interleaved rounds: one Rounds per condition, each
// round one repetition of every candidate at every condition.
class RoundsTrial final : public CellTrial {
 public:
  RoundsTrial(const harness::RunConfig& config, io::ScratchDir& scratch, const DecisionCell& cell, std::size_t index,
              const DecisionSettings& settings, double min_time, std::vector<harness::Result>& out)
      : min_time_(cell.device_bound ? kDeviceBoundMinTimeFactor * min_time : min_time),
        runner_(with_min_time(config, min_time_), scratch), cell_(cell), index_(index), settings_(settings), out_(out),
        begin_(steady_ns()) {
    for (auto b : cell.conditions) conditions_.push_back(exact_size(b));
  }
  ~RoundsTrial() override { remove_prepared(); }
  void start() override {
    const std::uint64_t t0 = steady_ns();
    for (std::size_t k = 0; k < cell_.experiments.size(); ++k) {
      // A seed per condition, from the run's seed and the cell's place: recorded in every record.
      std::uint64_t seed = settings_.seed * 1000003u + index_ * 16 + k;
      groups_.push_back(std::make_unique<harness::Rounds>(runner_, prepared(cell_.experiments[k]), seed,
                                                          settings_.min_rounds));
      groups_.back()->start();
    }
    setup_ns_ = steady_ns() - t0;
  }
  bool round(const std::function<bool()>& more) override {
    for (auto& g : groups_)
      if (g->active() && !g->round(more)) return false;
    return true;
  }
  harness::Verdict judge() override {
    std::vector<std::vector<std::vector<double>>> rates;
    // The rates the table will judge by: a candidate with a too-short repetition has none there.
    for (auto& g : groups_) rates.push_back(g->rates_long_enough());
    verdict_ = harness::decide(rates, cell_.candidates, conditions_, settings_.margin);
    // Candidates beaten at a condition take no more turns there: their
    // comparisons are settled, and the rounds go faster for the others.
    // A settled condition takes none at all.
    for (std::size_t k = 0; k < groups_.size() && k < verdict_.beaten.size(); ++k)
      for (std::size_t c = 0; c < cell_.candidates.size(); ++c) {
        const auto& beat = verdict_.beaten[k][c];
        if (beat)
          groups_[k]->retire(c, fmt::format("beaten by {} at {}: {}x, {}..{} ({:.1f}% interval)",
                                            cell_.candidates[beat->by], conditions_[k], ratio_text(beat->interval.estimate),
                                            ratio_text(beat->interval.lo), ratio_text(beat->interval.hi),
                                            100 * beat->interval.coverage));
        else if (verdict_.settled[k])
          groups_[k]->retire(c, "its size settled at " + conditions_[k]);
      }
    return verdict_;
  }
  void finish(const std::string& stop) override {
    for (std::size_t k = 0; k < groups_.size(); ++k) {
      std::vector<harness::Result> records = groups_[k]->finish();
      for (std::size_t i = 0; i < records.size(); ++i) {
        auto& r = records[i];
        r.extra["decision_cell"] = cell_.key();
        r.extra["decision_margin"] = settings_.margin;
        r.extra["decision_candidate"] = cell_.candidates[i];
        nlohmann::json traits = nlohmann::json::array();
        for (std::string_view t : io::trait_names(cell_.traits[i])) traits.push_back(std::string(t));
        r.extra["decision_traits"] = std::move(traits);
        r.extra["decision_condition"] = k;
        r.extra["decision_stop"] = stop;
        r.extra["decision_min_time"] = min_time_;
        out_.push_back(std::move(r));
      }
    }
    remove_prepared();
    if (settings_.progress)
      settings_.progress(fmt::format("{}: {} after {} rounds at min-time {:.3f} s ({:.1f} s: {:.1f} s setup, "
                                     "verification, warm-up and calibration of {} candidates x {} conditions)",
                                     cell_.key(), harness::to_string(verdict_.kind),
                                     groups_.empty() ? 0 : groups_[0]->rounds(), min_time_,
                                     static_cast<double>(steady_ns() - begin_) / 1e9,
                                     static_cast<double>(setup_ns_) / 1e9, cell_.candidates.size(),
                                     cell_.conditions.size()));
  }

 private:
  // The candidates' reads at one condition, all of one length: one file for
  // them all (the same bytes, made warm once for a warm cell), written once
  // instead of once per candidate. Each still proves its cache state before
  // every timed pass and verifies every byte in its verification pass.
  std::vector<harness::FileExperiment> prepared(std::vector<harness::FileExperiment> row) {
    if (row.empty() || row[0].op != harness::Op::Read) return row;
    if (!row[0].prepared_file.empty()) return row;  // the caller's (the larger-than-memory cell's child)
    const std::uint64_t length = harness::file_length(row[0]);
    for (const auto& e : row)
      if (e.op != harness::Op::Read || harness::file_length(e) != length) return row;
    if (harness::resource_problem(row[0], runner_.scratch().path())) return row;  // each candidate says why
    prepared_.push_back(runner_.scratch().create_unique_file("shared"));
    harness::write_pattern_file(prepared_.back(), length, runner_.config().seed);
    if (row[0].cache == harness::CacheState::Warm) harness::make_warm_from_disk(prepared_.back());
    for (auto& e : row) e.prepared_file = prepared_.back();
    return row;
  }
  void remove_prepared() noexcept {
    for (const auto& f : prepared_) {
      try {
        runner_.scratch().remove_file(f);
      } catch (...) {  // already gone
      }
    }
    prepared_.clear();
  }
  static harness::RunConfig with_min_time(harness::RunConfig c, double min_time) {
    c.min_time = min_time;
    return c;
  }
  double min_time_;  // the cell's repetition time (declared before runner_, which is made with it)
  harness::Runner runner_;
  const DecisionCell& cell_;
  std::size_t index_;
  const DecisionSettings& settings_;
  std::vector<harness::Result>& out_;
  std::uint64_t begin_, setup_ns_ = 0;
  std::vector<std::string> conditions_;
  std::vector<std::unique_ptr<harness::Rounds>> groups_;
  std::vector<std::filesystem::path> prepared_;  // the shared read files, this trial's to remove
  harness::Verdict verdict_;
};

}  // namespace

std::unique_ptr<CellTrial> make_rounds_trial(const harness::RunConfig& config, io::ScratchDir& scratch,
                                             const DecisionCell& cell, std::size_t index, const DecisionSettings& settings,
                                             double min_time, std::vector<harness::Result>& out) {
  return std::make_unique<RoundsTrial>(config, scratch, cell, index, settings, min_time, out);
}

std::vector<harness::Result> run_decision(harness::Runner& runner, const std::vector<DecisionCell>& design,
                                          const DecisionSettings& settings) {
  std::vector<harness::Result> out;
  auto skipped_record = [&](const DecisionCell& cell, const std::string& why, const char* stop) {
    harness::Result r;
    r.suite = "decision";
    r.experiment = cell.key();
    r.op = cell.op == "read" ? harness::Op::Read : harness::Op::Write;
    r.skipped = why;
    r.extra["decision_cell"] = cell.key();
    r.extra["decision_margin"] = settings.margin;
    r.extra["decision_candidates"] = cell.candidates;  // what it would have compared
    r.extra["decision_conditions"] = cell.conditions;
    if (stop) r.extra["decision_stop"] = stop;
    out.push_back(std::move(r));
  };
  // The cells run in an order that spreads each op and band over the run
  // (each cell keyed by its place within its op and band, as a fraction,
  // the places turned by the group's index so that no flush policy or
  // column comes last in every band): the budget's cost model, calibrated
  // per class on the cells run so far, then sees every kind early (a flush
  // after every write costs several times a cached read), and cells the
  // budget cannot pay for are not all of one kind.
  std::vector<std::size_t> order;
  {
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t ci = 0; ci < design.size(); ++ci)
      if (design[ci].unmeasurable.empty()) groups[design[ci].op + "|" + design[ci].band].push_back(ci);
    std::vector<std::pair<double, std::size_t>> keyed;
    std::size_t g = 0;
    for (const auto& [name, cells] : groups) {
      for (std::size_t r = 0; r < cells.size(); ++r)
        keyed.emplace_back((static_cast<double>((r + g) % cells.size()) + 0.5) / static_cast<double>(cells.size()),
                           cells[r]);
      ++g;
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    for (const auto& k : keyed) order.push_back(k.second);
  }
  std::vector<ScheduledCell> scheduled;
  for (std::size_t ci : order) {
    const DecisionCell& cell = design[ci];
    ScheduledCell s;
    for (const auto& row : cell.experiments) s.turns += row.size();
    s.cost_class = cell.op + "|" + cell.flush + "|" + cell.column;
    s.make = [&, ci](double min_time) -> std::unique_ptr<CellTrial> {
      if (design[ci].column == kLargerThanMemory)
        return make_memory_cell_trial(runner, design[ci], ci, settings, min_time, out);
      return std::make_unique<RoundsTrial>(runner.config(), runner.scratch(), design[ci], ci, settings, min_time, out);
    };
    s.not_run = [&, ci](const std::string& why) {
      skipped_record(design[ci], why, "not run: budget");
      if (settings.progress) settings.progress(design[ci].key() + ": " + why);
    };
    scheduled.push_back(std::move(s));
  }
  for (const auto& cell : design)
    if (!cell.unmeasurable.empty()) skipped_record(cell, cell.unmeasurable, nullptr);
  schedule_decision(scheduled, settings, [] { return static_cast<double>(steady_ns()) / 1e9; });
  // Records in the design's order, whichever cells ran.
  std::map<std::string, std::size_t> place;
  for (std::size_t ci = 0; ci < design.size(); ++ci) place.emplace(design[ci].key(), ci);
  std::stable_sort(out.begin(), out.end(), [&](const harness::Result& a, const harness::Result& b) {
    auto at = [&](const harness::Result& r) {
      auto it = r.extra.find("decision_cell");
      return it != r.extra.end() && it->is_string() ? place[it->get<std::string>()] : design.size();
    };
    return at(a) < at(b);
  });
  return out;
}

}  // namespace iolab::suites
