// Shared helpers for the commit-log tests: deterministic messages, small
// logs, and reading a log back as message numbers.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/reader.h"
#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"

namespace iolab::testing {

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Message number `n`: its number first, then bytes derived from it; the
// length varies (16..~500 bytes) so frames straddle pages and segment ends.
inline std::vector<std::byte> message(std::uint64_t n, std::size_t min_size = 16) {
  std::size_t size = std::max<std::size_t>(min_size, 16 + mix(n) % 480);
  std::vector<std::byte> b(size);
  std::memcpy(b.data(), &n, 8);
  for (std::size_t i = 8; i < size; ++i) b[i] = static_cast<std::byte>(mix(n * 1000003 + i));
  return b;
}

// The number of a message body, or UINT64_MAX when the body is not message(n).
inline std::uint64_t message_number(std::span<const std::byte> body) {
  if (body.size() < 16) return UINT64_MAX;
  std::uint64_t n;
  std::memcpy(&n, body.data(), 8);
  auto expect = message(n, body.size());
  if (expect.size() != body.size() || std::memcmp(expect.data(), body.data(), body.size()) != 0) return UINT64_MAX;
  return n;
}

// Small settings that roll segments often and keep the test fast.
inline commitlog::Options small_options(commitlog::Design d, std::uint32_t topics = 1) {
  commitlog::Options o;
  o.design = d;
  o.topics = topics;
  o.segment_size = 64 * 1024;
  o.batch_bytes = 2048;
  o.index_interval = 1024;
  o.flush_interval = std::chrono::milliseconds(1);
  o.commit_interval = std::chrono::milliseconds(1);
  o.transient_buffer = 256 * 1024;
  o.write_batch = 64 * 1024;  // activemq: many writer rounds in a small test
  o.index_entries_per_file = 500;
  return o;
}

// Message numbers of a log directory, in log order; checks every body.
inline std::vector<std::uint64_t> numbers_in(const std::filesystem::path& log_dir, commitlog::LogScan* scan_out = nullptr) {
  std::vector<std::uint64_t> out;
  commitlog::LogScan scan = commitlog::scan_log(log_dir, [&](const commitlog::MessageView& m) { out.push_back(message_number(m.body)); });
  if (scan_out) *scan_out = scan;
  return out;
}

// Every log of `log`, by log number.
inline std::map<std::uint32_t, std::vector<std::uint64_t>> numbers_in(commitlog::CommitLog& log) {
  std::map<std::uint32_t, std::vector<std::uint64_t>> out;
  for (std::uint32_t l = 0; l < log.log_count(); ++l) out[l] = numbers_in(log.log_dir(l));
  return out;
}

// A design's name as a test name ("rocketmq-transient" -> "rocketmq_transient").
inline std::string test_name(const ::testing::TestParamInfo<commitlog::Design>& info) {
  std::string n(commitlog::to_string(info.param));
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

// Which log message `n` goes to when messages are sent round robin over topics.
inline std::uint32_t topic_of(std::uint64_t n, std::uint32_t topics) { return static_cast<std::uint32_t>(n % topics); }

inline std::vector<std::filesystem::path> segment_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace iolab::testing
