#include "iolab/results/kinds.h"

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/base/units.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ once it is
// inlined into string-building code (GCC bugs 105329, 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace iolab::results {
namespace {

constexpr NameTable<Op, 12> kOps{{{Op::Read, "read"}, {Op::Write, "write"}, {Op::Copy, "copy"}, {Op::Alloc, "alloc"},
                                  {Op::Insert, "insert"}, {Op::Get, "get"}, {Op::Remove, "remove"},
                                  {Op::Reinsert, "reinsert"}, {Op::Reopen, "reopen"}, {Op::Append, "append"},
                                  {Op::CatchUp, "catch-up"}, {Op::Replay, "replay"}}};
// The ops of a file experiment (a matrix's --op).
constexpr NameTable<Op, 2> kFileOps{{{Op::Read, "read"}, {Op::Write, "write"}}};
constexpr NameTable<AccessPattern, 2> kPatterns{
    {{AccessPattern::Seq, "seq"}, {AccessPattern::Rand, "rand"}}};
constexpr NameTable<CacheState, 4> kCaches{
    {{CacheState::Warm, "warm"}, {CacheState::Cold, "cold"}, {CacheState::Direct, "direct"}, {CacheState::Full, "full"}}};
constexpr NameTable<Eviction, 2> kEvictions{
    {{Eviction::PerFile, "per-file"}, {Eviction::DropCaches, "drop_caches"}}};

}  // namespace

std::string_view to_string(Op o) { return name_of(kOps, o); }
Op parse_op_name(std::string_view s) { return parse_name(kOps, s, "op", "unknown operation"); }
Op parse_op(std::string_view s) { return parse_name(kFileOps, s, "op"); }
bool reported_as_time(Op o) { return o == Op::Reopen; }

bool writes_data(Op o) {
  return o == Op::Write || o == Op::Copy || o == Op::Insert || o == Op::Remove || o == Op::Reinsert ||
         o == Op::Append;
}

std::string_view to_string(AccessPattern p) { return name_of(kPatterns, p); }
AccessPattern parse_pattern(std::string_view s) { return parse_name(kPatterns, s, "pattern"); }

std::string_view to_string(CacheState c) { return name_of(kCaches, c); }
CacheState parse_cache(std::string_view s) {
  if (s == "full")
    throw UsageError("cache 'full'", "a full cache is the page cache of a memory cgroup iolab makes for the experiment "
                                     "(iolab recommend's \"larger than memory\" column); expected warm, cold or direct");
  return parse_name(kCaches, s, "cache", "expected warm, cold or direct");
}
CacheState parse_cache_name(std::string_view s) { return parse_name(kCaches, s, "cache"); }

std::string_view to_string(Eviction e) { return name_of(kEvictions, e); }
Eviction parse_eviction(std::string_view s) {
  if (s == "fadvise") return Eviction::PerFile;
  return parse_name(kEvictions, s, "eviction", "expected per-file (the default) or drop_caches");
}

}  // namespace iolab::results
