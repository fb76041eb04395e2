// The store suite's workload: seed 000's employees, the order they are
// inserted, read and removed in, the commit cadences every engine is
// compared at, and the checks of what an engine holds (store_data_set.h).
#include <xxhash.h>

#include <algorithm>
#include <numeric>
#include <random>

#include <fmt/core.h>

#include "iolab/suites/kv_store.h"
#include "store_data_set.h"

namespace iolab::suites {

namespace store_suite {

using store::Employee;

// XXH3 over every field: a get is checked by comparing the digest of what
// came back with the digest of what was written (64 bits: a wrong field
// goes unnoticed with probability 2^-64).
std::uint64_t digest(const Employee& e) {
  std::uint64_t h = XXH3_64bits_withSeed(e.last.data(), e.last.size(), 0);
  h = XXH3_64bits_withSeed(e.first.data(), e.first.size(), h);
  h = XXH3_64bits_withSeed(e.comments.data(), e.comments.size(), h);
  return h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.id)) << 32 |
              static_cast<std::uint32_t>(e.zip)) * 0x9E3779B97F4A7C15ull ^ (e.employed ? 0x5555u : 0xAAAAu);
}

namespace {
// Keys are unique (an odd multiplier is a bijection on 32 bits), not in
// sorted order, and the sizes vary like names and comments do.
Employee make_record(std::uint64_t i) {
  static const char* const kLast[] = {"Smith", "Zhang", "Garcia", "Muller", "Rossi", "Kowalski", "Nguyen", "Silva",
                                      "Okafor", "Tanaka", "Dubois", "Novak", "Haddad", "Larsen", "Moreau", "Ivanova"};
  static const char* const kFirst[] = {"Ana", "Wei", "Maria", "Jonas", "Luca", "Ewa", "Minh", "Joao",
                                       "Chidi", "Yuki", "Claire", "Petr", "Rania", "Sofie", "Hugo", "Olga"};
  static const std::string kText =
      "joined the team in spring; prefers written notes; on call every third week; speaks three languages; "
      "mentor for new hires; ";
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  Employee e;
  std::uint32_t tag = static_cast<std::uint32_t>(i) * 2654435761u;  // unique per i
  char buf[16];
  std::snprintf(buf, sizeof buf, "-%08x", tag);
  e.last = std::string(kLast[h % 16]) + buf;
  e.first = kFirst[(h >> 8) % 16];
  e.id = static_cast<std::int32_t>(i);
  e.zip = static_cast<std::int32_t>(10000 + (h >> 16) % 90000);
  e.employed = ((h >> 40) & 1) != 0;
  std::size_t len = 20 + (h >> 44) % 61;  // 20..80 bytes
  std::size_t from = (h >> 24) % 40;
  e.comments = kText.substr(from, len);
  return e;
}
}  // namespace

StoreDataSet make_data_set(std::uint64_t n, std::uint64_t seed) {
  StoreDataSet w;
  w.n = n;
  w.records.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    w.records.push_back(make_record(i));
    std::uint64_t bytes = store::encoded_size(w.records.back());
    w.data_bytes += bytes;
    w.min_value = i == 0 ? bytes : std::min(w.min_value, bytes);
    w.max_value = std::max(w.max_value, bytes);
  }
  for (std::uint64_t i = 0; i < n / 10; ++i) w.fresh.push_back(make_record(n + i));
  std::mt19937_64 rng(seed);
  w.get_order.resize(n);
  std::iota(w.get_order.begin(), w.get_order.end(), 0u);
  std::shuffle(w.get_order.begin(), w.get_order.end(), rng);
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), rng);
  w.removed.assign(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(n / 10));
  std::size_t arena = 0;
  for (std::uint32_t i : w.get_order) arena += w.records[i].last.size();
  for (std::uint32_t i : w.removed) arena += w.records[i].last.size();
  w.key_arena.reserve(arena);  // never reallocated below: the views stay valid
  auto add_key = [&w](const std::string& k) {
    std::size_t at = w.key_arena.size();
    w.key_arena += k;
    return std::string_view(w.key_arena.data() + at, k.size());
  };
  for (std::uint32_t i : w.get_order) {
    w.get_keys.push_back(add_key(w.records[i].last));
    w.get_digests.push_back(digest(w.records[i]));
    w.get_fold.add(w.records[i]);
  }
  for (std::uint32_t i : w.removed) w.remove_keys.push_back(add_key(w.records[i].last));
  return w;
}

std::span<const Cadence> cadences() {
  static constexpr Cadence kCadences[] = {
      {"commit every 1,000 ops, page cache only", 1000, false},
      {"one commit per phase, page cache only", 0, false},
      {"commit every 1,000 ops, fdatasync", 1000, true},
      {"one commit per phase, fdatasync", 0, true},
  };
  return kCadences;
}

namespace {
// The get phase's calls, for the timed passes and the verification pass alike.
template <class Seen>
void get_all(KvStore& engine, const StoreDataSet& w, Seen&& seen) {
  Employee got;
  for (std::size_t j = 0; j < w.get_keys.size(); ++j)
    if (engine.get(w.get_keys[j], got)) seen(j, got);
  engine.commit();  // ends the read transaction
}
}  // namespace

GetFold fold_gets(KvStore& engine, const StoreDataSet& w) {
  GetFold fold;
  get_all(engine, w, [&fold](std::size_t, const Employee& got) { fold.add(got); });
  return fold;
}

std::string check_gets(KvStore& engine, const StoreDataSet& w) {
  std::uint64_t found = 0;
  std::string why;
  get_all(engine, w, [&](std::size_t j, const Employee& got) {
    ++found;
    if (why.empty() && digest(got) != w.get_digests[j])
      why = "key " + std::string(w.get_keys[j]) + " holds a different value than was written";
  });
  if (why.empty() && found != w.get_keys.size())
    why = std::to_string(w.get_keys.size() - found) + " of " + std::to_string(w.get_keys.size()) +
          " keys were not found";
  return why;
}

std::string check_contents(KvStore& engine, const StoreDataSet& w, Stage stage) {
  std::vector<bool> gone(w.n, false);
  if (stage != Stage::Inserted)
    for (std::uint32_t i : w.removed) gone[i] = true;
  Employee got;
  auto holds = [&](const Employee& e) -> std::string {
    if (!engine.get(e.last, got)) return "key " + e.last + " is missing";
    if (got != e) return "key " + e.last + " holds a different value than was written";
    return "";
  };
  std::uint64_t expect = 0;
  for (std::uint64_t i = 0; i < w.n; ++i) {
    if (gone[i]) {
      if (engine.get(w.records[i].last, got)) return "removed key " + w.records[i].last + " is present";
      continue;
    }
    ++expect;
    if (std::string why = holds(w.records[i]); !why.empty()) return why;
  }
  if (stage == Stage::Reinserted) {
    for (const Employee& e : w.fresh)
      if (std::string why = holds(e); !why.empty()) return why;
    expect += w.fresh.size();
  }
  if (std::uint64_t size = engine.size(); size != expect)
    return std::to_string(size) + " records where " + std::to_string(expect) + " were expected";
  return "";
}

}  // namespace store_suite

}  // namespace iolab::suites
