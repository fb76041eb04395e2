// The store suite's workload and its checks, shared with its tests: the
// records every engine stores, the commit cadences its tables compare, and
// the untimed read-back that verifies what a timed pass left.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/store/employee.h"
#include "iolab/store/engine.h"

namespace iolab::suites::store_suite {

// The records: keys (last names, ~17 bytes) are unique and inserted in an
// order unrelated to key order (random); values are the record's encoding
// (employee.h), the same bytes in every engine.
struct Workload {
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
  std::vector<std::uint64_t> get_digests;
};
Workload make_workload(std::uint64_t n, std::uint64_t seed);
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

// The phases after which the store's contents are known.
enum class Stage { Inserted, Removed, Reinserted };
// Reads every record back through `engine` (untimed): every expected record
// with its value compared field by field, every removed key absent, the
// count. Empty when all hold, else the first difference.
std::string check_contents(store::Engine& engine, const Workload& w, Stage stage);

}  // namespace iolab::suites::store_suite
