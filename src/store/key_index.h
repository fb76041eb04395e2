// Internal: the in-memory index, last name -> (offset, data length).
//
// Open addressing with linear probing (load <= 1/2) and backward-shift
// deletion (no tombstones). Each 16-byte slot holds the key's full 64-bit
// XXH3 hash and the record's location packed into 64 bits (offset / 16,
// data length): four slots per cache line, a table of 4 MiB for 100k keys.
// The index keeps no copy of the keys: on a hash match the caller checks
// the key stored in the record itself (a `KeyOf`: location -> the record's
// key), which a get reads anyway and which a put or remove needs only when
// the key is already there. (The slot was 32 bytes with a key arena until
// issue 28: twice the table and 1.7 MB of key copies for the same probes.)
// No node or string allocation per key, unlike
// std::unordered_map<std::string, ...>, which took three cache misses and
// two mallocs per insert (measured: the index was half of a get's time).
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>
#include <xxhash.h>

#include "iolab/store/journal.h"

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

  // Locations the packed slot holds: 16-byte aligned offsets below 2^50, data below 2^18 bytes.
  static constexpr unsigned kLengthBits = 18;
  static constexpr std::uint64_t kMaxOffset = (std::uint64_t{1} << (64 - kLengthBits + 4)) - 1;
  static_assert(kMaxDataLength < (std::uint32_t{1} << kLengthBits));

  // An entry, to read or move to another location.
  class Ref {
   public:
    IndexLocation get() const noexcept { return unpack(slot_->loc); }
    void set(IndexLocation loc) noexcept { slot_->loc = pack(loc); }

   private:
    friend class KeyIndex;
    explicit Ref(Slot* s) noexcept : slot_(s) {}
    Slot* slot_;
  };

  void clear() {
    allocate(16);
    size_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

  void reserve(std::size_t n) {
    std::size_t cap = capacity_;
    while (cap < 2 * n) cap *= 2;
    if (cap != capacity_) rebuild(cap);
  }

  // The entry of `key`; `key_of(location)` gives the key of the record there.
  template <typename KeyOf>
  std::optional<IndexLocation> find(std::string_view key, KeyOf&& key_of) const {
    std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return std::nullopt;
      if (s.hash == h && key_of(unpack(s.loc)) == key) return unpack(s.loc);
    }
  }

  // Calls visit(location) for each entry whose 64-bit hash equals the key's
  // (almost always one) until visit returns true; returns whether one did.
  // For callers that check the key against the record as they read it.
  template <typename F>
  bool find_hashed(std::string_view key, F&& visit) const {
    std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (s.hash == h && visit(unpack(s.loc))) return true;
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

  // Inserts (key, loc) when absent: returns {entry, true}. Present: {existing, false}, unchanged.
  template <typename KeyOf>
  std::pair<Ref, bool> try_emplace(std::string_view key, IndexLocation loc, KeyOf&& key_of) {
    return try_emplace_hashed(key, hash(key), loc, key_of);
  }
  // The same, `h` being hash(key) (from prefetch).
  template <typename KeyOf>
  std::pair<Ref, bool> try_emplace_hashed(std::string_view key, std::uint64_t h, IndexLocation loc, KeyOf&& key_of) {
    std::uint64_t packed = pack(loc);
    if (2 * (size_ + 1) > capacity_) rebuild(capacity_ * 2);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) break;
      if (s.hash == h && key_of(unpack(s.loc)) == key) return {Ref(&s), false};
    }
    Slot& s = slots_[i];
    s.hash = h;
    s.loc = packed;
    ++size_;
    return {Ref(&s), true};
  }

  // Removes the key; its location in `out`. False when absent.
  template <typename KeyOf>
  bool erase(std::string_view key, IndexLocation& out, KeyOf&& key_of) {
    std::uint64_t h = hash(key);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (s.hash == h && key_of(unpack(s.loc)) == key) break;
    }
    out = unpack(slots_[i].loc);
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
    return true;
  }

  // fn(location) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& fn) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (const Slot& s = slots_[i]; s.hash != 0) fn(unpack(s.loc));
  }

 private:
  // 16 bytes: four slots per cache line.
  struct Slot {
    std::uint64_t hash = 0;  // 0: empty (real hashes are never 0)
    std::uint64_t loc = 0;   // offset / 16 << kLengthBits | data length
  };
  static_assert(sizeof(Slot) == 16);

  static std::uint64_t pack(IndexLocation loc) {
    // Records start on 16-byte boundaries (docs/store-format.md); a journal
    // past 1 PiB is refused rather than mis-indexed.
    if (loc.offset % kRecordAlign != 0 || loc.offset > kMaxOffset || loc.data_length >= (1u << kLengthBits))
      throw std::length_error("record location outside what the store's index holds");
    return ((loc.offset / kRecordAlign) << kLengthBits) | loc.data_length;
  }
  static IndexLocation unpack(std::uint64_t v) noexcept {
    return {(v >> kLengthBits) * kRecordAlign, static_cast<std::uint32_t>(v & ((std::uint64_t{1} << kLengthBits) - 1))};
  }

  static std::uint64_t hash(std::string_view key) noexcept {
    std::uint64_t h = XXH3_64bits(key.data(), key.size());
    return h == 0 ? 1 : h;
  }
  void allocate(std::size_t capacity) {
    memory_ = SlotMemory(capacity * sizeof(Slot));
    slots_ = reinterpret_cast<Slot*>(memory_.data());  // zero bytes are empty slots
    capacity_ = capacity;
    mask_ = capacity - 1;
  }
  // Re-inserts every entry into `capacity` slots (by the stored hashes: no key is read).
  void rebuild(std::size_t capacity) {
    SlotMemory old_memory = std::move(memory_);
    const Slot* old = slots_;
    std::size_t old_capacity = capacity_;
    allocate(capacity);
    for (std::size_t j = 0; j < old_capacity; ++j) {
      const Slot& s = old[j];
      if (s.hash == 0) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].hash != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  SlotMemory memory_;
  Slot* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace iolab::store
