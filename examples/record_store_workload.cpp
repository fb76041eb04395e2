// record_store_workload: a fixed, seeded workload of iolab's record store
// (include/iolab/store/record_store.h), the program
// examples/traces/record-store.iotrace was recorded from.
//
//   build/release/examples/record_store_workload JOURNAL [--employees N] [--gets N] [--updates N]
//       [--removes N] [--hires N] [--backend gather] [--sync every-100-ops] [--seed S]
//
// On a new (or empty) JOURNAL, in this order: inserts N employees (keyed
// "emp000000", "emp000001", ..., comments of 40-400 bytes), gets a sample
// of them (each checked against what was put), replaces some with longer
// comments (the old versions become holes once a sync made the new ones
// durable), removes some (more holes), inserts new employees with short
// comments (they fill holes: the store puts a record in the smallest hole
// that fits), commits (the store syncs what its policy still owes) and closes.
// Keys are drawn with the seed, so two runs make the same calls. The sync
// policy is the store's acknowledgement: every-100-ops makes the mutations
// durable in groups of 100 (an fdatasync after every 100th put or remove,
// and at commit). Prints one line of what it did and the store's counts.
// Exit 0; 1 when a get does not return what was put or the store fails;
// 2 for bad usage or a JOURNAL that exists and is not empty (left as it was).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "iolab/base/error.h"
#include "iolab/store/record_store.h"

using namespace iolab;

namespace {

std::string key_of(unsigned i) {
  char k[16];
  std::snprintf(k, sizeof k, "emp%06u", i);
  return k;
}

store::Employee employee(unsigned i, std::mt19937_64& rng, std::size_t comment_min, std::size_t comment_max) {
  store::Employee e;
  e.last = key_of(i);
  e.first = "first" + std::to_string(rng() % 10000);
  e.id = static_cast<std::int32_t>(i);
  e.zip = static_cast<std::int32_t>(10000 + rng() % 90000);
  e.employed = rng() % 4 != 0;
  const std::size_t n = comment_min + rng() % (comment_max - comment_min + 1);
  e.comments.reserve(n);
  for (std::size_t k = 0; k < n; ++k) e.comments.push_back(static_cast<char>('a' + rng() % 26));
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("A seeded workload of iolab's record store: inserts, gets, updates, removes, hires, commit, close");
  std::string journal, backend = "gather", sync = "every-100-ops";
  unsigned employees = 1000, gets = 200, updates = 200, removes = 100, hires = 100;
  std::uint64_t seed = 41;
  app.add_option("journal", journal, "The journal file (new, or empty)")->required();
  app.add_option("--employees", employees, "Employees inserted (default 1000)")->check(CLI::Range(1u, 10000000u));
  app.add_option("--gets", gets, "Gets of inserted employees, drawn at random (default 200)");
  app.add_option("--updates", updates, "Employees replaced with longer comments (default 200)");
  app.add_option("--removes", removes, "Employees removed (default 100)");
  app.add_option("--hires", hires, "Employees inserted after the removes, comments of 40-200 bytes (default 100)")
      ->check(CLI::Range(0u, 10000000u));
  app.add_option("--backend", backend, "fields, gather, mmap or buffered (default gather: pwritev and pread)");
  app.add_option("--sync", sync, "The store's sync policy (default every-100-ops: fdatasync after every 100 mutations)");
  app.add_option("--seed", seed, "Seed of the keys and fields (default 41)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (updates > employees) throw UsageError("--updates", "at most --employees");
    if (removes > employees) throw UsageError("--removes", "at most --employees");
    std::error_code ec;
    if (std::filesystem::exists(journal, ec) && !(std::filesystem::is_regular_file(journal, ec) &&
                                                  std::filesystem::file_size(journal, ec) == 0 && !ec))
      throw UsageError("journal " + journal, "exists and is not an empty file; give a new one");
    store::StoreOptions options;
    options.backend = store::parse_backend(backend);
    options.sync = io::parse_flush_policy(sync);
    store::RecordStore s(journal, options);
    std::mt19937_64 rng(seed);
    std::vector<store::Employee> put;
    put.reserve(employees);
    for (unsigned i = 0; i < employees; ++i) {
      put.push_back(employee(i, rng, 40, 400));
      s.put(put.back());
    }
    // Distinct employees for the updates and the removes: one shuffled order, updates first.
    std::vector<unsigned> order(employees);
    for (unsigned i = 0; i < employees; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    store::Employee got;
    for (unsigned g = 0; g < gets; ++g) {
      const unsigned i = static_cast<unsigned>(rng() % employees);
      if (!s.get(put[i].last, got) || !(got == put[i])) {
        std::fprintf(stderr, "record_store_workload: get of %s did not return what was put\n", put[i].last.c_str());
        return 1;
      }
    }
    for (unsigned u = 0; u < updates; ++u) {
      const unsigned i = order[u];
      put[i] = employee(i, rng, 400, 800);
      s.put(put[i]);
    }
    unsigned removed = 0;
    for (unsigned r = 0; r < removes; ++r) removed += s.remove(put[order[employees - 1 - r]].last) ? 1 : 0;
    for (unsigned h = 0; h < hires; ++h) s.put(employee(employees + h, rng, 40, 200));
    s.commit();
    const store::StoreStats st = s.stats();
    s.close();
    std::printf("record_store_workload: %u puts, %u gets, %u updates, %u removes, %u hires (%s, sync %s): %llu records, "
                "%llu journal bytes, %llu syncs, %llu holes reused, %llu system calls\n",
                employees, gets, updates, removed, hires, backend.c_str(), sync.c_str(),
                static_cast<unsigned long long>(st.records), static_cast<unsigned long long>(st.file_bytes),
                static_cast<unsigned long long>(st.syncs), static_cast<unsigned long long>(st.holes_reused),
                static_cast<unsigned long long>(st.syscalls));
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "record_store_workload: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "record_store_workload: %s\n", e.what());
    return 1;
  }
}
