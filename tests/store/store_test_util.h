// Shared helpers for the store tests: deterministic employees, a store's contents.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

#include <gtest/gtest.h>

#include "iolab/store/record_store.h"
#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"
#include "store/test_records.h"

namespace iolab::testing {

inline std::string key_name(std::uint64_t i) { return "Key" + std::to_string(i); }

// A record whose size varies widely with `version`, so holes get split and reused.
inline store::Employee make_employee(const std::string& key, std::uint64_t version) {
  SplitMix rng{std::hash<std::string>{}(key) ^ (version * 0x9E3779B97F4A7C15ull)};
  return random_employee(key, version, rng, 8, 0, 2000, 120);
}

// Every record in the store, by key (also checks for_each against get).
inline std::map<std::string, store::Employee> contents(store::RecordStore& s) {
  std::map<std::string, store::Employee> m;
  s.for_each([&](const store::Employee& e) {
    EXPECT_TRUE(m.emplace(e.last, e).second) << "key twice: " << e.last;
  });
  return m;
}

}  // namespace iolab::testing
