// The store suite's data set and its checks, shared with its tests: the
// records every engine stores, the commit cadences its tables compare, and
// the untimed read-back that verifies what a timed pass left.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/harness/runner.h"
#include "iolab/store/employee.h"
#include "iolab/suites/kv_store.h"

namespace iolab::suites::store_suite {

// What a timed get pass keeps of the records it got, so that the compiler
// cannot drop the work: how many were found, the sum of their fields'
// lengths, and an XOR of their numbers. Cheap beside a get (no pass over the
// bytes); the pass compares it with the workload's, which a missing record
// or a wrong length changes. Every field of every record is checked by the
// verification pass (check_gets), untimed.
struct GetFold {
  std::uint64_t found = 0, field_bytes = 0, numbers = 0;
  void add(const store::Employee& e) noexcept {
    ++found;
    field_bytes += e.last.size() + e.first.size() + e.comments.size();
    numbers ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.id)) << 32 |
                static_cast<std::uint32_t>(e.zip)) ^ (e.employed ? 1u : 0u);
  }
  bool operator==(const GetFold&) const = default;
};

// The records: keys (last names, ~17 bytes) are unique and inserted in an
// order unrelated to key order (random); values are the record's encoding
// (employee.h), the same bytes in every engine.
struct StoreDataSet {
  std::uint64_t n = 0;
  std::vector<store::Employee> records;  // inserted first
  std::vector<store::Employee> fresh;    // inserted after the removal (n / 10)
  std::vector<std::uint32_t> get_order;  // a permutation of records
  std::vector<std::uint32_t> removed;    // n / 10 of records
  std::uint64_t data_bytes = 0;          // encoded bytes of `records`
  std::uint64_t min_value = 0, max_value = 0;  // encoded bytes of one record
  // What the timed loops read, laid out in the order they read it, so the
  // workload's own data costs no cache misses (the same for every engine):
  // keys in one arena, and a digest of every field of each expected record.
  std::string key_arena;
  std::vector<std::string_view> get_keys, remove_keys;
  std::vector<std::uint64_t> get_digests;  // for the verification pass
  GetFold get_fold;                        // what a timed get pass must fold
};
StoreDataSet make_data_set(std::uint64_t n, std::uint64_t seed);
// XXH3 over every field of a record.
std::uint64_t digest(const store::Employee& e);

// How every engine of one table commits: at the same points, with the same durability.
struct Cadence {
  std::string_view label;  // in the experiment label
  std::uint32_t every;     // mutations per commit; 0: one commit, at the end of the phase
  bool fdatasync;          // commits are flushed (else they reach the page cache only)
};
// Every 1,000 ops and once per phase, each page cache only and flushed.
std::span<const Cadence> cadences();

// The get phase's loop, the same calls in the timed passes and in the
// verification pass: every key of w.get_keys in order, then the commit that
// ends the read transaction. fold_gets (timed) folds what came back;
// check_gets (untimed) compares the XXH3 digest of every record got with the
// record written: empty when all hold, else the first difference.
GetFold fold_gets(KvStore& engine, const StoreDataSet& w);
std::string check_gets(KvStore& engine, const StoreDataSet& w);

// The phases after which the store's contents are known.
enum class Stage { Inserted, Removed, Reinserted };
// Reads every record back through `engine` (untimed): every expected record
// with its value compared field by field, every removed key absent, the
// count. Empty when all hold, else the first difference.
std::string check_contents(KvStore& engine, const StoreDataSet& w, Stage stage);

// Opens engine `method` on `path` for one phase (`phase`: the phase it is
// timed or verified for). The suite opens open_kv_store; tests give
// engines that misbehave in one phase.
using KvStoreOpener = std::function<std::unique_ptr<KvStore>(
    const std::string& method, const std::filesystem::path& path, const KvStoreOptions& options,
    results::Op phase)>;
// One engine through the phases at one cadence, as the suite runs each
// engine of each table (`published_only`: insert and get). Throws Error when
// a phase's data does not verify.
std::vector<results::Result> run_kv_store(harness::Runner& runner, const StoreDataSet& w, const std::string& method,
                                        const Cadence& cadence, std::uint64_t map_bytes, bool published_only,
                                        const KvStoreOpener& open = {});

}  // namespace iolab::suites::store_suite
