#include "store/crash_explorer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "iolab/base/error.h"
#include "iolab/store/journal.h"
#include "store/test_records.h"

namespace iolab::store::crash {
namespace {

const std::filesystem::path kDir = "/crash";
const std::filesystem::path kJournal = kDir / "journal";

std::uint64_t mix(std::uint64_t x) { return testing::SplitMix{x}(); }  // seeds for sub-streams

std::string key_of(std::size_t i) { return "Key" + std::to_string(i); }

// A record whose size varies widely (some span several sectors and pages).
Employee employee(const std::string& key, std::uint64_t version, std::mt19937_64& rng) {
  return testing::random_employee(key, version, rng, 6, 600, 5000, 200);
}

enum class Kind { Open, Put, Remove, Commit, Compact, Reopen };

// One store operation of a run and where it lies in the env's trace.
struct Step {
  Kind kind;
  std::size_t trace_begin = 0, trace_end = 0;
  std::uint64_t mutations_after = 0;  // mutations done once it returned (all stores of the run)
  std::uint64_t durable_after = 0;    // ... of which acknowledged durable
};

// The values each key took, by mutation number (1-based); nullopt: removed.
struct History {
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::optional<Employee>>>> by_key;
  void record(std::uint64_t mutation, const std::string& key, std::optional<Employee> v) {
    by_key[key].emplace_back(mutation, std::move(v));
  }
};

struct Run {
  io::FaultEnv env;
  std::vector<Step> steps;
  History history;
  std::size_t keys = 0;
};

StoreOptions options_for(const Setting& s, io::Env* env) {
  StoreOptions o;
  o.backend = s.backend;
  o.sync = s.sync;
  o.mmap_grow_step = 4096;  // growth (fallocate + remap) happens often
  o.stage_buffer = 4096;    // the staging buffer fills and flushes often
  o.env = env;
  return o;
}

void run_workload(const Setting& setting, const Options& options, std::uint64_t seed, Run& run) {
  std::mt19937_64 rng(seed);
  run.keys = options.keys;
  StoreOptions o = options_for(setting, &run.env);
  std::uint64_t mutations = 0, durable = 0, base = 0;  // base: mutations before the current store opened
  std::map<std::string, std::uint64_t> version;
  std::unique_ptr<RecordStore> store;
  auto step = [&](Kind kind, auto&& body) {
    Step st{kind};
    st.trace_begin = run.env.operations();
    body();
    run.env.settle();  // stores through a mapping become a crash point of their own
    st.trace_end = run.env.operations();
    StoreStats stats = store->stats();
    if (store->durable())
      durable = mutations;
    else if (stats.durable_mutations > 0)
      durable = std::max(durable, base + stats.durable_mutations);
    st.mutations_after = mutations;
    st.durable_after = durable;
    run.steps.push_back(st);
  };
  step(Kind::Open, [&] { store = std::make_unique<RecordStore>(kJournal, o); });
  for (std::size_t i = 0; i < options.operations; ++i) {
    std::string key = key_of(rng() % options.keys);
    unsigned what = rng() % 100;
    if (what < 52) {
      Employee e = employee(key, ++version[key], rng);
      step(Kind::Put, [&] {
        store->put(e);
        run.history.record(++mutations, key, e);
      });
    } else if (what < 80) {
      step(Kind::Remove, [&] {
        if (store->remove(key)) run.history.record(++mutations, key, std::nullopt);
      });
    } else if (what < 88) {
      step(Kind::Commit, [&] { store->commit(); });
    } else if (what < 93) {
      step(Kind::Compact, [&] { store->compact(); });
    } else {
      step(Kind::Reopen, [&] {
        store->close();
        store.reset();
        base = mutations;
        store = std::make_unique<RecordStore>(kJournal, o);
      });
    }
  }
  store->close();
}

// What a crash at a point may show for each key.
struct Allowed {
  std::uint64_t durable = 0;  // mutations acknowledged durable
  std::uint64_t done = 0;     // mutations done or in flight
};

Allowed allowed_at(const Run& run, std::size_t point) {
  Allowed a;
  for (const Step& st : run.steps) {
    if (st.trace_end <= point) {
      a.durable = st.durable_after;
      a.done = st.mutations_after;
      continue;
    }
    if (st.trace_begin < point) {  // in flight: its mutation may or may not be there
      if (st.kind == Kind::Put || st.kind == Kind::Remove) a.done = st.mutations_after;
    }
    break;
  }
  return a;
}

std::string describe(const std::optional<Employee>& v) {
  if (!v) return "absent";
  std::string out = "version ";  // the comments end with " vN"
  out.append(v->comments, v->comments.rfind(' ') + 2);
  return out;
}

struct Checker {
  const Setting& setting;
  const Options& options;
  const Run& run;
  Tally& tally;

  std::size_t point = 0;                     // of the state being checked, for trace_first_problem
  const io::CrashState* checked = nullptr;    // ... and the state

  void problem(std::uint64_t& counter, const std::string& what) {
    ++counter;
    if (options.trace_first_problem && tally.examples.empty()) {
      std::printf("first problem: %s\n", what.c_str());
      for (std::size_t i = 0; i < point; ++i) std::printf("  %4zu %s\n", i, run.env.describe(i).c_str());
      if (checked != nullptr && checked->files.count(kJournal) != 0) {
        const auto& bytes = checked->files.at(kJournal);
        std::printf("  journal of the state: %zu bytes\n", bytes.size());
        try {
          ScanResult r = scan_journal(bytes, "state");
          std::printf("  checkpoint %d unordered %d sequence %llu end %llu\n", r.has_checkpoint, r.checkpoint.unordered,
                      static_cast<unsigned long long>(r.checkpoint.sequence),
                      static_cast<unsigned long long>(r.checkpoint.end));
          for (const ScannedRecord& rec : r.records) {
            std::string key;
            if (rec.active) {
              Employee e;
              decode(std::span<const std::byte>(bytes).subspan(rec.offset + kRecordHeaderSize, rec.data_length), e);
              key = e.last + " " + describe(e);
            }
            std::printf("  record at %llu len %u seq %llu %s %s\n", static_cast<unsigned long long>(rec.offset),
                        rec.data_length, static_cast<unsigned long long>(rec.sequence), rec.active ? "active" : "free",
                        key.c_str());
          }
          for (const Damage& d : r.damage)
            std::printf("  damage at %llu len %llu debris %d\n", static_cast<unsigned long long>(d.offset),
                        static_cast<unsigned long long>(d.length), d.crash_debris);
          std::printf("  end %llu torn tail %llu zero tail %llu\n", static_cast<unsigned long long>(r.end),
                      static_cast<unsigned long long>(r.torn_tail_bytes),
                      static_cast<unsigned long long>(r.zero_tail_bytes));
        } catch (const Error& e) {
          std::printf("  scan: %s\n", e.what());
        }
      }
      for (const Step& st : run.steps)
        std::printf("  step kind %d ops [%zu, %zu) mutations %llu durable %llu\n", static_cast<int>(st.kind),
                    st.trace_begin, st.trace_end, static_cast<unsigned long long>(st.mutations_after),
                    static_cast<unsigned long long>(st.durable_after));
    }
    if (tally.examples.size() < options.max_examples) tally.examples.push_back(setting.name() + ": " + what);
  }

  // Opens the journal in `state` and checks it; returns the env it reopened
  // in (for a crash during recovery), or nullptr when the open failed.
  std::unique_ptr<io::FaultEnv> check(const io::CrashState& state, const Allowed& allowed, const std::string& where,
                                      bool count_stats) {
    checked = &state;
    auto env = std::make_unique<io::FaultEnv>(state);
    StoreOptions o = options_for(setting, env.get());
    auto journal = state.files.find(kJournal);
    std::uint64_t size_before = journal == state.files.end() ? 0 : journal->second.size();
    std::unique_ptr<RecordStore> s;
    try {
      s = std::make_unique<RecordStore>(kJournal, o);
    } catch (const Error& e) {
      problem(tally.failed, where + ": reopen failed: " + e.what());
      return nullptr;
    }
    const OpenReport& r = s->open_report();
    if (count_stats) {
      if (!r.repaired.empty()) ++tally.repaired_states;
      if (r.torn_tail_bytes > 0) ++tally.torn_tail_states;
    }
    bool bad_open = false;
    if (size_before >= kRecordsStart &&
        r.torn_tail_bytes + r.zero_tail_bytes != size_before - s->stats().file_bytes) {
      problem(tally.failed, where + ": open dropped " + std::to_string(size_before - s->stats().file_bytes) +
                                " bytes but reported " + std::to_string(r.torn_tail_bytes + r.zero_tail_bytes));
      bad_open = true;
    }
    if (!bad_open && env->exists(o.compact_path.empty() ? std::filesystem::path(kJournal.string() + ".compact") : o.compact_path)) {
      problem(tally.failed, where + ": a temporary journal was left after open");
      bad_open = true;
    }
    check_values(*s, allowed, where);
    try {
      s->close();
      s.reset();
      RecordStore again(kJournal, o);  // repairs were made for good: the second open finds nothing
      const OpenReport& r2 = again.open_report();
      if (!bad_open && (!r2.repaired.empty() || r2.torn_tail_bytes > 0 || r2.stale_versions_freed > 0))
        problem(tally.failed, where + ": the second open repaired again");
      again.close();
    } catch (const Error& e) {
      problem(tally.failed, where + ": close or second open failed: " + e.what());
    }
    return env;
  }

  void check_values(RecordStore& s, const Allowed& allowed, const std::string& where) {
    std::set<std::string> listed;
    try {
      s.for_each([&](const Employee& e) { listed.insert(e.last); });
    } catch (const Error& e) {
      problem(tally.corrupt, where + ": for_each: " + e.what());
      return;
    }
    for (const std::string& key : listed)
      if (run.history.by_key.count(key) == 0) problem(tally.corrupt, where + ": key never written: " + key);
    bool unordered = !(setting.sync.schedule == io::FlushSchedule::EveryOps || setting.sync.schedule == io::FlushSchedule::EveryWrite);
    for (std::size_t k = 0; k < run.keys; ++k) {
      std::string key = key_of(k);
      std::optional<Employee> got;
      try {
        got = s.get(key);
      } catch (const Error& e) {
        problem(tally.corrupt, where + ": get " + key + ": " + e.what());
        continue;
      }
      if (got.has_value() != (listed.count(key) != 0)) problem(tally.corrupt, where + ": get and for_each disagree on " + key);
      auto h = run.history.by_key.find(key);
      std::optional<Employee> acked;
      bool ok = false, ever = false, changed_since = false;
      if (h != run.history.by_key.end()) {
        for (const auto& [m, v] : h->second) {
          if (m <= allowed.durable) acked = v;
          if (m > allowed.durable && m <= allowed.done) {
            changed_since = true;
            if (v == got) ok = true;
          }
          if (m <= allowed.done && v == got) ever = true;
        }
      }
      if (acked == got) ok = true;
      if (unordered && changed_since && (!got || ever)) ok = true;  // the none / at-close contract
      if (ok) continue;
      std::string detail = where + ": " + key + " is " + describe(got) + ", acknowledged " + describe(acked) +
                           " (" + std::to_string(allowed.durable) + " durable of " + std::to_string(allowed.done) +
                           " mutations)";
      if (!got)
        problem(tally.lost, detail);
      else
        problem(tally.corrupt, detail + (ever ? " (resurrected)" : " (never written)"));
    }
  }
};

}  // namespace

std::string Setting::name() const { return std::string(to_string(backend)) + " " + to_string(sync); }

std::vector<Setting> all_settings() {
  std::vector<Setting> out;
  for (Backend b : kAllBackends)
    for (io::FlushPolicy p : {io::FlushPolicy{}, io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 3}, io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync}, io::FlushPolicy{io::FlushSchedule::End, io::Durability::Fdatasync}})
      out.push_back({b, p});
  io::FlushPolicy fsync = io::FlushPolicy{io::FlushSchedule::EveryWrite, io::Durability::Fdatasync};
  fsync.call = io::Durability::Fsync;
  out.push_back({Backend::Mmap, fsync});
  return out;
}

void Tally::add(const Tally& o) {
  states += o.states;
  lost += o.lost;
  corrupt += o.corrupt;
  failed += o.failed;
  runs += o.runs;
  repaired_states += o.repaired_states;
  torn_tail_states += o.torn_tail_states;
  for (const auto& e : o.examples)
    if (examples.size() < 10) examples.push_back(e);
}

Tally explore(const Setting& setting, std::uint64_t states, const Options& options) {
  Tally tally;
  std::uint64_t setting_id = mix(static_cast<std::uint64_t>(setting.backend) * 31 +
                                 static_cast<std::uint64_t>(setting.sync.schedule) * 7 + setting.sync.interval +
                                 static_cast<std::uint64_t>(setting.sync.call) * 1009);
  for (std::uint64_t run_no = 0; tally.states < states; ++run_no) {
    std::uint64_t run_seed = mix(options.seed ^ setting_id ^ mix(run_no));
    Run run;
    run_workload(setting, options, run_seed, run);
    ++tally.runs;
    // Points: after every sync, and as many random ones between (at least 20).
    std::vector<std::size_t> syncs = run.env.sync_points();
    std::size_t total = run.env.operations();
    std::set<std::size_t> points(syncs.begin(), syncs.end());
    std::mt19937_64 rng(run_seed ^ 0x5A5A5A5A5A5A5A5Aull);
    std::size_t random_points = std::max<std::size_t>(20, syncs.size());
    for (std::size_t i = 0; i < random_points && total > 0; ++i) points.insert(1 + rng() % total);
    points.insert(total);
    io::CrashReplay replay(run.env, options.crash);
    Checker checker{setting, options, run, tally};
    for (std::size_t point : points) {
      replay.advance_to(point);
      Allowed allowed = allowed_at(run, point);
      checker.point = point;
      for (std::size_t k = 0; k < options.states_per_point && tally.states < states; ++k) {
        std::uint64_t state_seed = rng();
        std::string where = "run seed " + std::to_string(run_seed) + " point " + std::to_string(point) + "/" +
                            std::to_string(total) + " state seed " + std::to_string(state_seed);
        io::CrashState state = replay.state(state_seed);
        ++tally.states;
        auto reopened = checker.check(state, allowed, where, true);
        // A crash during the reopen's own repairs (and its close) must be survived too.
        if (options.check_recovery_crash && reopened != nullptr && reopened->operations() > 0) {
          std::size_t p2 = 1 + rng() % reopened->operations();
          std::uint64_t seed2 = rng();
          checker.check(reopened->crash_state(p2, seed2, options.crash), allowed,
                        where + ", then a crash at recovery point " + std::to_string(p2) + " state seed " +
                            std::to_string(seed2),
                        false);
        }
      }
      if (tally.states >= states) break;
    }
  }
  return tally;
}

}  // namespace iolab::store::crash
