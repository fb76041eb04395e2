// crash_states: the record store's crash-state explorer.
//
//   build/release/bench/crash_states --states N [--seed S] [--only TEXT] [--lying-disk]
//
// Runs seeded workloads of puts, replaces, removes, commits, compactions
// and reopens on every backend at every sync policy over the fault env
// (include/iolab/testing/fault_env.h), materializes N power-loss states in all
// (at every sync point and at random points between; each unsynced write
// kept, dropped or torn at 512-byte sectors, unsynced names kept or lost),
// reopens the journal on each and checks the durability contract of
// docs/store-format.md. Prints a line per setting and a total:
//   N states, L lost, C corrupt, F failed reopens
// Exit status 0 when all three are 0, 1 otherwise, 2 for bad usage.
// --only TEXT: only the settings whose name contains TEXT ("mmap",
// "every-put"). --lying-disk: syncs make nothing durable; the checks must
// then fail (a check of the checker).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <map>
#include <string>

#include "bench_cli.h"
#include "store/crash_explorer.h"

using namespace iolab::store;

namespace {

void print(const std::string& name, const crash::Tally& t) {
  std::printf("%-32s %llu states, %llu lost, %llu corrupt, %llu failed reopens  (%llu runs; %llu repaired debris, %llu "
              "truncated a torn tail)\n",
              name.c_str(), static_cast<unsigned long long>(t.states), static_cast<unsigned long long>(t.lost),
              static_cast<unsigned long long>(t.corrupt), static_cast<unsigned long long>(t.failed),
              static_cast<unsigned long long>(t.runs), static_cast<unsigned long long>(t.repaired_states),
              static_cast<unsigned long long>(t.torn_tail_states));
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t states = 0;
  crash::Options options;
  std::string only;
  CLI::App app{"The record store's power-loss states, explored (docs/faults.md)"};
  app.add_option("--states", states, "States to check, split across the settings")->required()->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed, "Seed of the states chosen (default 1)");
  app.add_option("--only", only, "Only the settings whose name contains TEXT");
  app.add_flag("--trace", options.trace_first_problem, "Print the operations up to the first problem");
  bool lying_disk = false;
  app.add_flag("--lying-disk", lying_disk, "A disk that drops synced writes: the check must find losses");
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  if (lying_disk) options.crash.honour_syncs = false;

  std::vector<crash::Setting> settings;
  for (const auto& s : crash::all_settings())
    if (s.name().find(only) != std::string::npos) settings.push_back(s);
  if (settings.empty()) {
    std::fprintf(stderr, "crash_states: no setting matches --only '%s'\n", only.c_str());
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  crash::Tally total;
  std::map<std::string, crash::Tally> by_policy;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    // The states split evenly; the first settings take the remainder.
    std::uint64_t share = states / settings.size() + (i < states % settings.size() ? 1 : 0);
    if (share == 0) continue;
    crash::Tally t = crash::explore(settings[i], share, options);
    print(settings[i].name(), t);
    by_policy[to_string(settings[i].sync)].add(t);
    total.add(t);
  }
  std::printf("by sync policy:\n");
  for (const auto& [policy, t] : by_policy) print("  " + policy, t);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%llu states, %llu lost, %llu corrupt, %llu failed reopens  (seed %llu%s, %.1f s)\n",
              static_cast<unsigned long long>(total.states), static_cast<unsigned long long>(total.lost),
              static_cast<unsigned long long>(total.corrupt), static_cast<unsigned long long>(total.failed),
              static_cast<unsigned long long>(options.seed), options.crash.honour_syncs ? "" : ", lying disk",
              seconds);
  for (const auto& e : total.examples) std::printf("  %s\n", e.c_str());
  return total.clean() ? 0 : 1;
}
