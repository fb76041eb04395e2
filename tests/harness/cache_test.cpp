// Cache preparation on the test's own file in /tmp: warm makes it resident;
// cold by posix_fadvise evicts it. Never drop_caches: tests must not touch
// the whole machine's page cache.
#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"

namespace iolab::harness {
namespace {

std::filesystem::path make_file(io::ScratchDir& scratch, std::size_t size) {
  auto path = scratch.create_file("cache-test");
  auto f = io::find_file_method("pread").open(path, io::Access::ReadWrite);
  io::Buffer b(size, io::BufferKind::Aligned);
  io::fill_pattern(1, 0, b.span());
  f->write_at(0, b.span());
  f->sync(io::Durability::Fdatasync);
  f->close();
  return path;
}

TEST(Cache, WarmThenColdPerFile) {
  io::ScratchDir scratch("/tmp");
  auto path = make_file(scratch, 4 << 20);
  EXPECT_EQ(make_cold(path, results::Eviction::PerFile), "fadvise");
  EXPECT_LT(resident_fraction(path), 0.05);
  make_warm(path);
  EXPECT_GT(resident_fraction(path), 0.95);
  EXPECT_EQ(make_cold(path, results::Eviction::PerFile), "fadvise");
  EXPECT_LT(resident_fraction(path), 0.05);
}

TEST(Cache, EmptyFileIsNotResident) {
  io::ScratchDir scratch("/tmp");
  auto path = scratch.create_file("empty");
  EXPECT_EQ(resident_fraction(path), 0);
}

TEST(Cache, DropCachesWithoutRootIsRefused) {
  if (can_drop_caches()) GTEST_SKIP() << "root: drop_caches would be used; tests never drop the machine's page cache";
  io::ScratchDir scratch("/tmp");
  auto path = make_file(scratch, 4096);
  EXPECT_THROW(make_cold(path, results::Eviction::DropCaches), Error);
}

TEST(Cache, NamesRoundTrip) {
  for (auto e : {results::Eviction::PerFile, results::Eviction::DropCaches}) EXPECT_EQ(results::parse_eviction(to_string(e)), e);
  EXPECT_EQ(results::parse_eviction("fadvise"), results::Eviction::PerFile);
  for (auto c : {results::CacheState::Warm, results::CacheState::Cold, results::CacheState::Direct}) EXPECT_EQ(results::parse_cache(to_string(c)), c);
  for (auto o : {results::Op::Read, results::Op::Write, results::Op::Copy, results::Op::Alloc, results::Op::Insert, results::Op::Get, results::Op::Remove, results::Op::Reinsert, results::Op::Reopen,
                 results::Op::Append, results::Op::CatchUp})
    EXPECT_EQ(results::parse_op_name(to_string(o)), o);
  EXPECT_THROW(results::parse_cache("tepid"), UsageError);
  EXPECT_THROW(results::parse_op("append"), UsageError);  // a file experiment reads or writes
  EXPECT_THROW(results::parse_op_name("frobnicate"), UsageError);
  EXPECT_THROW(results::parse_pattern("zigzag"), UsageError);
}

}  // namespace
}  // namespace iolab::harness
