// What every method is, as its traits say (code outside io/ decides by these,
// never by a method's name): the list below is the contract, so adding a
// method means adding its line here.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "iolab/io/copy.h"
#include "iolab/io/registry.h"

// GCC 12 reports a false -Wrestrict on short string concatenation once inlined (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace iolab::io {
namespace {

std::string describe(const MethodTraits& t) {
  std::string s;
  auto flag = [&](bool on, const char* name) {
    if (on) s += (s.empty() ? "" : " ") + std::string(name);
  };
  flag(t.bypasses_page_cache, "bypasses-cache");
  flag(t.needs_alignment, "aligned");
  flag(t.direct_optional, "direct-optional");
  flag(t.queued, "queued");
  flag(t.user_space_buffer, "user-buffer");
  flag(t.library_calls, "library-calls");
  flag(t.maps_file, "maps-file");
  flag(!t.positional, "file-position");
  s += std::string(s.empty() ? "" : " ") + "sync=" + std::string(to_string(t.data_sync));
  return s;
}

TEST(MethodTraits, EveryFileMethodSaysWhatItIs) {
  const std::map<std::string, std::string> expected = {
      {"iostream", "user-buffer library-calls file-position sync=fdatasync"},
      {"stdio", "user-buffer library-calls file-position sync=fdatasync"},
      {"syscall", "file-position sync=fdatasync"},
      {"pread", "sync=fdatasync"},
      {"vectored", "sync=fdatasync"},
      {"mmap", "maps-file sync=msync"},
      {"direct", "bypasses-cache aligned sync=fdatasync"},
      {"io_uring", "direct-optional queued sync=fdatasync"},
      {"libaio", "bypasses-cache aligned queued sync=fdatasync"},
  };
  for (const Method* m : file_methods()) {
    auto it = expected.find(std::string(m->name()));
    ASSERT_NE(it, expected.end()) << m->name() << " has no expected traits here: add its line";
    EXPECT_EQ(describe(m->traits()), it->second) << m->name();
  }
  // Options that change what a method is: io_uring opened O_DIRECT.
  FileOptions direct;
  direct.direct = true;
  EXPECT_EQ(describe(find_file_method("io_uring").traits(direct)), "bypasses-cache aligned direct-optional queued sync=fdatasync");
}

TEST(MethodTraits, EveryCopyMethodSaysWhatItIs) {
  const std::map<std::string, std::pair<bool, std::uint64_t>> expected = {
      {"readwrite", {true, 0}},           {"sendfile", {false, 0x7ffff000}},
      {"copy_file_range", {false, 1 << 30}}, {"splice", {false, 0}},
      {"mmap_write", {false, 0}},
  };
  for (const CopyMethod* m : copy_methods()) {
    auto it = expected.find(std::string(m->name()));
    ASSERT_NE(it, expected.end()) << m->name();
    EXPECT_EQ(m->traits().user_space_buffer, it->second.first) << m->name();
    EXPECT_EQ(m->traits().max_call_bytes, it->second.second) << m->name();
  }
}

}  // namespace
}  // namespace iolab::io

namespace iolab::io {
namespace {

TEST(FlushPolicy, EachMethodsOwnDataSyncOnOneScheduleIsOneDurabilityFsyncIsAnother) {
  // The cost model compares a mapping flushed by msync with a file flushed by
  // fdatasync on one schedule (either makes the data durable); fsync also
  // writes metadata, and a flush of user-space buffers makes nothing durable.
  MethodTraits file, mapping;
  mapping.data_sync = Durability::MsyncSync;
  const FlushPolicy every = parse_flush_policy("every-16k");
  EXPECT_EQ(unresolved(resolved(every, file)), unresolved(resolved(every, mapping)));
  EXPECT_EQ(to_string(unresolved(resolved(every, mapping))), "every-16k");
  EXPECT_EQ(to_string(unresolved(parse_flush_policy("end:fsync"))), "end:fsync");
  EXPECT_NE(unresolved(parse_flush_policy("end:fsync")), unresolved(parse_flush_policy("end:fdatasync")));
  EXPECT_EQ(to_string(unresolved(parse_flush_policy("every:flush"))), "every:flush");
  EXPECT_EQ(unresolved(FlushPolicy{}), FlushPolicy{});
}

}  // namespace
}  // namespace iolab::io
