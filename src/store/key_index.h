// Internal: the in-memory index, last name -> (offset, data length).
//
// Open addressing with linear probing (load <= 1/2) and backward-shift
// deletion (no tombstones). Each 32-byte slot holds the key's full 64-bit
// XXH3 hash, the location and where the key's bytes sit in one arena, so a
// lookup touches one slot and, on a hash match, the key: no node or string
// allocation per key, unlike std::unordered_map<std::string, ...>, which
// took three cache misses and two mallocs per insert (measured: the index
// was half of a get's time). Removed keys leave their bytes in the arena
// until it is rebuilt (on growth, or when most of it is garbage).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>
#include <xxhash.h>

namespace iolab::store {

struct IndexLocation {
  std::uint64_t offset;
  std::uint32_t data_length;
};

class KeyIndex {
  struct Slot;

 public:
  KeyIndex() { clear(); }

  void clear() {
    slots_.assign(16, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    keys_.clear();
    garbage_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

  void reserve(std::size_t n) {
    std::size_t cap = slots_.size();
    while (cap < 2 * n) cap *= 2;
    if (cap != slots_.size()) rebuild(cap);
  }

  IndexLocation* find(std::string_view key) noexcept {
    std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) return nullptr;
      if (s.hash == h && matches(s, key)) return &s.loc;
    }
  }
  const IndexLocation* find(std::string_view key) const noexcept { return const_cast<KeyIndex*>(this)->find(key); }

  // Calls visit(location) for each entry whose 64-bit hash equals the key's
  // (almost always one) until visit returns true; returns whether one did.
  // For callers that check the key against the record itself: the arena's
  // copy of the key is not touched, saving a cache miss.
  template <typename F>
  bool find_hashed(std::string_view key, F&& visit) {
    std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (s.hash == h && visit(s.loc)) return true;
    }
  }

  // Inserts (key, loc) when absent: returns {slot, true}. Present: {existing, false}, unchanged.
  std::pair<IndexLocation*, bool> try_emplace(std::string_view key, IndexLocation loc) {
    if (2 * (size_ + 1) > slots_.size()) rebuild(slots_.size() * 2);
    std::uint64_t h = hash(key);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) break;
      if (s.hash == h && matches(s, key)) return {&s.loc, false};
    }
    Slot& s = slots_[i];
    s.hash = h;
    s.loc = loc;
    s.key_ref = key_ref(keys_.size(), key.size());
    keys_.insert(keys_.end(), key.begin(), key.end());
    ++size_;
    return {&s.loc, true};
  }

  // Removes the key; its location in `out`. False when absent.
  bool erase(std::string_view key, IndexLocation& out) {
    std::uint64_t h = hash(key);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (s.hash == h && matches(s, key)) break;
    }
    out = slots_[i].loc;
    garbage_ += slots_[i].key_len();
    // Backward shift: pull later members of the probe run into the gap.
    for (std::size_t j = (i + 1) & mask_; slots_[j].hash != 0; j = (j + 1) & mask_) {
      std::size_t home = slots_[j].hash & mask_;
      bool movable = j > i ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    if (garbage_ > (std::size_t{1} << 20) && garbage_ > keys_.size() / 2) rebuild(slots_.size());
    return true;
  }

  // fn(key, location) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& fn) const {
    for (const Slot& s : slots_)
      if (s.hash != 0) fn(std::string_view(keys_.data() + s.key_pos(), s.key_len()), s.loc);
  }

 private:
  // 32 bytes: two slots per cache line.
  struct Slot {
    std::uint64_t hash = 0;  // 0: empty (real hashes are never 0)
    IndexLocation loc{};
    std::uint64_t key_ref = 0;  // arena position << kLenBits | key length
    std::size_t key_len() const noexcept { return key_ref & ((std::uint64_t{1} << kLenBits) - 1); }
    std::size_t key_pos() const noexcept { return key_ref >> kLenBits; }
  };
  static constexpr unsigned kLenBits = 20;  // keys are at most 64 KiB
  static std::uint64_t key_ref(std::size_t pos, std::size_t len) noexcept {
    return (static_cast<std::uint64_t>(pos) << kLenBits) | len;
  }

  static std::uint64_t hash(std::string_view key) noexcept {
    std::uint64_t h = XXH3_64bits(key.data(), key.size());
    return h == 0 ? 1 : h;
  }
  bool matches(const Slot& s, std::string_view key) const noexcept {
    return s.key_len() == key.size() && std::memcmp(keys_.data() + s.key_pos(), key.data(), key.size()) == 0;
  }
  // Re-inserts every entry into `capacity` slots with a compacted key arena.
  void rebuild(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    std::vector<char> keys;
    keys.reserve(keys_.size() - garbage_ + 64);
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].hash != 0) i = (i + 1) & mask_;
      slots_[i] = s;
      slots_[i].key_ref = key_ref(keys.size(), s.key_len());
      keys.insert(keys.end(), keys_.begin() + static_cast<std::ptrdiff_t>(s.key_pos()),
                  keys_.begin() + static_cast<std::ptrdiff_t>(s.key_pos() + s.key_len()));
    }
    keys_.swap(keys);
    garbage_ = 0;
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::vector<char> keys_;
  std::size_t garbage_ = 0;
};

}  // namespace iolab::store
