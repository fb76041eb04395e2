// Shared helpers for the store tests: deterministic employees, file bytes.
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
#include "store/test_records.h"

namespace iolab::store::testing {

// A RAM-backed parent for tests that rewrite small files thousands of times
// (ext4 flushes a file rewritten after truncation; fsync costs real time):
// /dev/shm when it is a writable directory, else the default ($TMPDIR or /tmp).
inline std::filesystem::path fast_scratch_parent() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return {};
}

inline std::string key_name(std::uint64_t i) { return "Key" + std::to_string(i); }

// A record whose size varies widely with `version`, so holes get split and reused.
inline Employee make_employee(const std::string& key, std::uint64_t version) {
  SplitMix rng{std::hash<std::string>{}(key) ^ (version * 0x9E3779B97F4A7C15ull)};
  return random_employee(key, version, rng, 8, 0, 2000, 120);
}

inline std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) out[i] = static_cast<std::byte>(c[i]);
  return out;
}

inline void write_bytes(const std::filesystem::path& p, std::span<const std::byte> b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Every record in the store, by key (also checks for_each against get).
inline std::map<std::string, Employee> contents(RecordStore& s) {
  std::map<std::string, Employee> m;
  s.for_each([&](const Employee& e) {
    EXPECT_TRUE(m.emplace(e.last, e).second) << "key twice: " << e.last;
  });
  return m;
}

}  // namespace iolab::store::testing
