// Inside the store: what record_store.cpp, record_store_open.cpp and record_store_compact.cpp share.
#pragma once

#include <filesystem>
#include <map>

#include "iolab/io/env.h"
#include "iolab/store/record_store.h"
#include "key_index.h"

namespace iolab::store {

class RecordStore::Index : public KeyIndex {};

class RecordStore::FreeList {
 public:
  std::multimap<std::uint64_t, std::uint64_t> by_size;  // slot bytes -> offset
  std::uint64_t bytes = 0;
};

inline std::filesystem::path dir_of(const std::filesystem::path& p) {
  return p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
}

// A temporary journal a crashed compact() may have left: empty, a journal,
// or zeros where compact() writes the header last (a crash lost it).
bool looks_like_leftover(io::Env& env, const std::filesystem::path& p);

}  // namespace iolab::store
