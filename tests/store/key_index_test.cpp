// The store's in-memory index (src/store/key_index.h): 16-byte slots that
// hold a key's hash and its record's location, the keys checked against
// the records (here a vector standing for the journal) on a hash match.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "internal/store/key_index.h"

namespace iolab::store {
namespace {

// A stand-in journal: record i sits at offset 16 * (i + 1) with data length i % 300.
struct KeyIndexFixtureJournal {
  std::vector<std::string> keys;
  static IndexLocation at(std::size_t i) { return {kRecordAlign * (i + 1), static_cast<std::uint32_t>(i % 300)}; }
  std::string_view key_of(IndexLocation l) const { return keys.at(l.offset / kRecordAlign - 1); }
};

TEST(KeyIndex, InsertFindEraseAgainstAMapThroughGrowth) {
  KeyIndexFixtureJournal j;
  auto key_of = [&](IndexLocation l) { return j.key_of(l); };
  KeyIndex index;
  std::map<std::string, std::size_t> model;
  std::mt19937_64 rng(28);
  for (std::size_t i = 0; i < 5000; ++i) {
    j.keys.push_back("key-" + std::to_string(rng() % 3000));
    auto [entry, inserted] = index.try_emplace(j.keys.back(), KeyIndexFixtureJournal::at(i), key_of);
    auto found = model.find(j.keys.back());
    ASSERT_EQ(inserted, found == model.end()) << j.keys.back();
    if (inserted) {
      model[j.keys.back()] = i;
    } else {
      // A replace: the entry moves to the new record, as RecordStore::put does.
      EXPECT_EQ(entry.get().offset, KeyIndexFixtureJournal::at(found->second).offset);
      entry.set(KeyIndexFixtureJournal::at(i));
      found->second = i;
    }
    if (i % 7 == 3) {  // remove one key now and then
      std::string gone = "key-" + std::to_string(rng() % 3000);
      IndexLocation out{};
      bool erased = index.erase(gone, out, key_of);
      auto it = model.find(gone);
      ASSERT_EQ(erased, it != model.end()) << gone;
      if (erased) {
        EXPECT_EQ(out.offset, KeyIndexFixtureJournal::at(it->second).offset);
        EXPECT_EQ(out.data_length, KeyIndexFixtureJournal::at(it->second).data_length);
        model.erase(it);
      }
    }
  }
  ASSERT_EQ(index.size(), model.size());
  for (const auto& [key, i] : model) {
    auto loc = index.find(key, key_of);
    ASSERT_TRUE(loc.has_value()) << key;
    EXPECT_EQ(loc->offset, KeyIndexFixtureJournal::at(i).offset);
    EXPECT_EQ(loc->data_length, KeyIndexFixtureJournal::at(i).data_length);
  }
  EXPECT_FALSE(index.find("key-absent", key_of).has_value());
  std::size_t visited = 0;
  index.for_each([&](const IndexLocation&) { ++visited; });
  EXPECT_EQ(visited, model.size());
}

TEST(KeyIndex, AHashMatchWhoseRecordHoldsAnotherKeyIsNotAHit) {
  // find_hashed hands every same-hash entry to the caller, which decides by the record.
  KeyIndexFixtureJournal j;
  j.keys = {"alpha"};
  auto key_of = [&](IndexLocation l) { return j.key_of(l); };
  KeyIndex index;
  ASSERT_TRUE(index.try_emplace("alpha", KeyIndexFixtureJournal::at(0), key_of).second);
  // The record at the entry's location now says "beta" (what a stale or
  // damaged location would show): a lookup of "alpha" must not take it.
  j.keys[0] = "beta";
  EXPECT_FALSE(index.find("alpha", key_of).has_value());
  int visits = 0;
  EXPECT_FALSE(index.find_hashed("alpha", [&](IndexLocation l) {
    ++visits;
    return j.key_of(l) == "alpha";
  }));
  EXPECT_EQ(visits, 1);
}

TEST(KeyIndex, LocationsRoundTripAtTheLimitsAndOthersAreRefused) {
  std::vector<std::string> keys = {"far", "long"};
  std::map<std::uint64_t, std::string_view> by_offset;
  auto key_of = [&](IndexLocation l) { return by_offset.at(l.offset); };
  KeyIndex index;
  const IndexLocation far{KeyIndex::kMaxOffset / kRecordAlign * kRecordAlign, 0};
  const IndexLocation longest{kRecordAlign, kMaxDataLength};
  by_offset[far.offset] = keys[0];
  by_offset[longest.offset] = keys[1];
  ASSERT_TRUE(index.try_emplace(keys[0], far, key_of).second);
  ASSERT_TRUE(index.try_emplace(keys[1], longest, key_of).second);
  EXPECT_EQ(index.find("far", key_of)->offset, far.offset);
  EXPECT_EQ(index.find("long", key_of)->data_length, kMaxDataLength);
  // Not on a record boundary, or past what 46 bits of offset / 16 hold: refused, not mis-indexed.
  EXPECT_THROW(index.try_emplace("odd", IndexLocation{24, 1}, key_of), std::length_error);
  EXPECT_THROW(index.try_emplace("huge", IndexLocation{KeyIndex::kMaxOffset + 1, 1}, key_of), std::length_error);
  EXPECT_EQ(index.size(), 2u);
}

}  // namespace
}  // namespace iolab::store
