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

#include "store/crash_explorer.h"

using namespace iolab::store;

namespace {

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr, "crash_states: %s\nusage: crash_states --states N [--seed S] [--only TEXT] [--lying-disk]\n", problem);
  std::exit(2);
}

std::uint64_t number(const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
    usage((std::string("invalid ") + flag + " '" + text + "': expected a non-negative integer").c_str());
  return v;
}

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
  bool have_states = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--states" || a == "--seed" || a == "--only") && i + 1 >= argc) usage((a + " needs a value").c_str());
    if (a == "--states") {
      states = number("--states", argv[++i]);
      have_states = true;
    } else if (a == "--seed") {
      options.seed = number("--seed", argv[++i]);
    } else if (a == "--only") {
      only = argv[++i];
    } else if (a == "--trace") {
      options.trace_first_problem = true;
    } else if (a == "--lying-disk") {
      options.crash.honour_syncs = false;
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: crash_states --states N [--seed S] [--only TEXT] [--lying-disk]\n");
      return 0;
    } else {
      usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (!have_states || states == 0) usage("--states N (at least 1) is required");

  std::vector<crash::Setting> settings;
  for (const auto& s : crash::all_settings())
    if (s.name().find(only) != std::string::npos) settings.push_back(s);
  if (settings.empty()) usage(("no setting matches --only '" + only + "'").c_str());
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
