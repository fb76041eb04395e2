// The decision table's larger-than-memory cell alone (iolab recommend runs
// it last, within its --budget): the same design, trial and child as
// `iolab recommend`, with its defaults, so the column's verdict can be
// measured, or its cost seen, in a minute instead of the whole table's eight.
//
//   build/release/bench/memory_column                  # recommend's defaults, a 120 s budget for the cell
//   build/release/bench/memory_column --memory-limit 32m --budget 60 --save /tmp/cell.json
//
// Prints the cell as `iolab recommend` does (verdict, why from the counters)
// and, per candidate and size, its median rate, rounds, the group's page
// cache before its timed passes, and faults, kernel CPU and device bytes per
// MiB or byte.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <fmt/core.h>

#include "bench_cli.h"
#include "iolab/base/clock.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/statistics.h"
#include "iolab/io/scratch.h"
#include "iolab/report/decision_table.h"
#include "iolab/suites/decision.h"

int main(int argc, char** argv) {
  using namespace iolab;
  CLI::App app{"The decision table's larger-than-memory cell alone, as iolab recommend measures it"};
  std::uint64_t room = suites::kDefaultMemoryRoom;
  double budget = 120, min_time = 0.075;
  unsigned min_rounds = 6, max_rounds = 60;
  std::string save, dir;
  iolab_bench::add_size(app, "--memory-limit", room, "page-cache room of the cell's memory cgroup (default 64m)");
  app.add_option("--budget", budget, "seconds for the cell (default 120)");
  app.add_option("--min-time", min_time, "seconds a repetition lasts at least (default 0.075, recommend's)");
  app.add_option("--min-rounds", min_rounds, "rounds before the first look (default 6)");
  app.add_option("--max-rounds", max_rounds, "most rounds (default 60)");
  app.add_option("--dir", dir, "parent of the scratch directory (default $TMPDIR or /tmp)");
  app.add_option("--save", save, "also write the records as an iolab results file (JSON)");
  if (int code = iolab_bench::parse(app, argc, argv); code >= 0) return code;
  try {
    io::remove_scratch_dirs_on_signals();
    suites::DecisionCell cell;
    for (auto& c : suites::decision_design(32u << 20, room))
      if (c.column == suites::kLargerThanMemory) cell = std::move(c);
    io::ScratchDir scratch(dir);
    harness::RunConfig config;
    config.min_time = min_time;
    config.latency = false;
    harness::Runner runner(config, scratch);
    suites::DecisionSettings settings;
    settings.budget_s = budget;
    settings.min_time = min_time;
    settings.min_time_floor = std::min(min_time, settings.min_time_floor);
    settings.min_rounds = min_rounds;
    settings.max_rounds = max_rounds;
    const std::uint64_t begin = steady_ns();
    settings.progress = [begin](const std::string& line) {
      std::fprintf(stderr, "[%4.0f s] %s\n", static_cast<double>(steady_ns() - begin) / 1e9, line.c_str());
    };
    harness::Results results;
    results.environment = harness::collect_environment(scratch.path());
    results.results = suites::run_decision(runner, {cell}, settings);
    const double seconds = static_cast<double>(steady_ns() - begin) / 1e9;
    fmt::print("{}", report::format_text(report::designed_table(results.results)));
    fmt::print("\n{:<24} {:>8} {:>11} {:>6} {:>6} {:>10} {:>10} {:>9} {:>9}\n", "CANDIDATE", "SIZE", "MiB/s", "ROUNDS",
               "PASSES", "CACHE/ROOM", "RESIDENT", "MAJF/MiB", "DEV B/B");
    for (const auto& r : results.results) {
      if (r.skipped) {
        fmt::print("{:<24} skipped: {}\n", r.extra.value("decision_candidate", r.method), *r.skipped);
        continue;
      }
      std::vector<double> rates;
      for (double s : r.samples_s) rates.push_back(static_cast<double>(r.bytes) / s / (1 << 20));  // bytes: a repetition's
      fmt::print("{:<24} {:>8} {:>11.1f} {:>6} {:>6} {:>4.2f}..{:<4.2f} {:>10} {:>9.3g} {:>9.3g}\n",
                 r.extra.value("decision_candidate", r.method), r.block_size >> 10 << 10 == r.block_size
                                                                     ? std::to_string(r.block_size >> 10) + " KiB"
                                                                     : std::to_string(r.block_size) + " B",
                 harness::median(rates), r.reps, r.passes, r.extra.value("cache_full_fraction", 0.0),
                 r.extra.value("cache_full_fraction_max", 0.0),
                 r.resident_fraction ? fmt::format("{:.2f}", *r.resident_fraction) : std::string("-"),
                 r.extra.value("major_faults_per_mib", 0.0), r.extra.value("device_read_bytes_per_byte", 0.0));
    }
    fmt::print("\n{:.1f} s for the cell (budget {:.0f} s)\n", seconds, budget);
    if (!save.empty()) std::ofstream(save) << harness::to_json(results).dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory_column: %s\n", e.what());
    return 1;
  }
}
