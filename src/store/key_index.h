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

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>
#include <vector>
#include <xxhash.h>

namespace iolab::store {

struct IndexLocation {
  std::uint64_t offset;
  std::uint32_t data_length;
};

// Zeroed memory for the slot table. From 2 MiB up it is an anonymous
// mapping with MADV_HUGEPAGE: a random probe into a table of several MiB
// in 4 KiB pages misses the TLB nearly every time (a two-level page walk in
// a VM); in 2 MiB pages the whole table needs a handful of TLB entries.
// Transparent huge pages are a hint: without them this is plain memory.
class SlotMemory {
 public:
  SlotMemory() = default;
  explicit SlotMemory(std::size_t bytes) : size_(bytes) {
    if (bytes >= kHuge) {
      size_ = (bytes + kHuge - 1) / kHuge * kHuge;
      // Over-allocate to place the table on a 2 MiB boundary.
      void* p = ::mmap(nullptr, size_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      auto base = reinterpret_cast<std::uintptr_t>(p);
      auto aligned = (base + kHuge - 1) / kHuge * kHuge;
      if (aligned > base) ::munmap(p, aligned - base);
      std::size_t tail = base + size_ + kHuge - (aligned + size_);
      if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + size_), tail);
      data_ = reinterpret_cast<std::byte*>(aligned);
      (void)::madvise(data_, size_, MADV_HUGEPAGE);
      mapped_ = true;
    } else {
      data_ = static_cast<std::byte*>(::operator new(bytes));
      std::memset(data_, 0, bytes);
    }
  }
  ~SlotMemory() { release(); }
  SlotMemory(SlotMemory&& o) noexcept { *this = std::move(o); }
  SlotMemory& operator=(SlotMemory&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      mapped_ = std::exchange(o.mapped_, false);
    }
    return *this;
  }
  std::byte* data() const noexcept { return data_; }

 private:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  void release() noexcept {
    if (data_ == nullptr) return;
    if (mapped_)
      ::munmap(data_, size_);
    else
      ::operator delete(data_);
    data_ = nullptr;
  }
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

class KeyIndex {
  struct Slot;

 public:
  KeyIndex() { clear(); }
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  void clear() {
    allocate(16);
    size_ = 0;
    keys_.clear();
    garbage_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

  void reserve(std::size_t n) {
    std::size_t cap = capacity_;
    while (cap < 2 * n) cap *= 2;
    if (cap != capacity_) rebuild(cap);
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

  // The key's hash, with its home slot's cache line requested: a caller
  // with other work to do before try_emplace (a put encodes and checksums
  // its record) overlaps that work with the slot's cache miss, which is
  // most of an insert into a table of several MiB (measured: ~80% of
  // put's own samples were the first load of the slot).
  std::uint64_t prefetch(std::string_view key) const noexcept {
    std::uint64_t h = hash(key);
    __builtin_prefetch(&slots_[h & mask_], 1);
    return h;
  }

  // Inserts (key, loc) when absent: returns {slot, true}. Present: {existing, false}, unchanged.
  std::pair<IndexLocation*, bool> try_emplace(std::string_view key, IndexLocation loc) {
    return try_emplace_hashed(key, hash(key), loc);
  }
  // The same, `h` being hash(key) (from prefetch).
  std::pair<IndexLocation*, bool> try_emplace_hashed(std::string_view key, std::uint64_t h, IndexLocation loc) {
    if (2 * (size_ + 1) > capacity_) rebuild(capacity_ * 2);
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
    if (garbage_ > (std::size_t{1} << 20) && garbage_ > keys_.size() / 2) rebuild(capacity_);
    return true;
  }

  // fn(key, location) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& fn) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (const Slot& s = slots_[i]; s.hash != 0) fn(std::string_view(keys_.data() + s.key_pos(), s.key_len()), s.loc);
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
  void allocate(std::size_t capacity) {
    memory_ = SlotMemory(capacity * sizeof(Slot));
    slots_ = reinterpret_cast<Slot*>(memory_.data());  // zero bytes are empty slots
    capacity_ = capacity;
    mask_ = capacity - 1;
  }
  // Re-inserts every entry into `capacity` slots with a compacted key arena.
  void rebuild(std::size_t capacity) {
    SlotMemory old_memory = std::move(memory_);
    const Slot* old = slots_;
    std::size_t old_capacity = capacity_;
    allocate(capacity);
    std::vector<char> keys;
    keys.reserve(keys_.size() - garbage_ + 64);
    for (std::size_t j = 0; j < old_capacity; ++j) {
      const Slot& s = old[j];
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

  SlotMemory memory_;
  Slot* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::vector<char> keys_;
  std::size_t garbage_ = 0;
};

}  // namespace iolab::store
