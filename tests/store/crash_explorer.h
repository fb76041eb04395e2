// The record store's crash-state explorer: the checking logic behind
// bench/crash_states and the store's crash tests.
//
// A run is a seeded workload of puts, replaces, removes, commits,
// compactions and reopens on one journal in a FaultEnv, recording after
// each operation how many mutations the store acknowledges as durable.
// Crash states are then materialized at every sync point and at random
// points between (each unsynced write kept, dropped or torn; unsynced names
// kept or lost), the journal is reopened on each, and checked against the
// durability contract of docs/store-format.md:
//  - reopen succeeds (no salvage), accounts for every byte it drops, leaves
//    no temporary file, and a crash during its own repairs is survived too;
//  - every key holds its value as of the last acknowledged-durable
//    mutation, or a value a later mutation (done or in flight) gave it;
//    with policy none / at close a key changed since may also be absent;
//  - nothing is returned that was never written (corrupt) or that a
//    durable mutation replaced or removed (resurrected: counted corrupt).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iolab/testing/fault_env.h"
#include "iolab/store/record_store.h"

namespace iolab::store::crash {

struct Setting {
  Backend backend;
  io::FlushPolicy sync;
  std::string name() const;  // "mmap every-put:fdatasync"
};

// Every backend at every sync policy (every-N with N = 3), fdatasync; and
// every-put with fsync for the mmap backend (its msync-then-fsync path).
std::vector<Setting> all_settings();

struct Tally {
  std::uint64_t states = 0;
  std::uint64_t lost = 0;       // an acknowledged-durable value missing
  std::uint64_t corrupt = 0;    // a value never written, resurrected, or a get that fails its CRC
  std::uint64_t failed = 0;     // reopen threw, left a temporary file, or misreported what it dropped
  std::uint64_t runs = 0;
  std::uint64_t repaired_states = 0;   // states whose reopen repaired crash debris
  std::uint64_t torn_tail_states = 0;  // ... truncated a torn tail
  std::vector<std::string> examples;   // the first few problems, each reproducible from its seeds
  void add(const Tally& o);
  bool clean() const noexcept { return lost == 0 && corrupt == 0 && failed == 0; }
};

struct Options {
  std::uint64_t seed = 1;
  std::size_t operations = 60;     // store operations per run
  std::size_t keys = 12;           // key space: small, so replaces and hole reuse are common
  std::size_t states_per_point = 2;
  bool check_recovery_crash = true;  // also crash during the reopen's own repairs
  io::CrashOptions crash;            // honour_syncs = false: a lying disk (the checks must fail)
  std::size_t max_examples = 5;
  bool trace_first_problem = false;  // print the run's operations up to the first problem's point
};

// Explores `states` crash states of `setting` (runs as many workloads as needed).
Tally explore(const Setting& setting, std::uint64_t states, const Options& options);

}  // namespace iolab::store::crash
