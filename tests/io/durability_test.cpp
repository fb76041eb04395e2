// Every durability call on every method, on ext4 (/tmp here) and on tmpfs:
// it succeeds, or it throws Error(EOPNOTSUPP) — and supports() says which
// beforehand. The data must still be intact afterwards.
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

using testing::Variant;

constexpr Durability kAll[] = {Durability::None,      Durability::Flush, Durability::SyncFileRange,
                               Durability::Fdatasync, Durability::Fsync, Durability::MsyncSync};

class DurabilityCalls : public ::testing::TestWithParam<Variant> {
 protected:
  void check_every_call(const std::filesystem::path& dir) {
    ScratchDir scratch(dir);
    const Variant& v = GetParam();
    auto path = scratch.create_file("durable");
    Buffer buf(8192, BufferKind::Aligned);
    fill_pattern(7, 0, buf.span());
    auto f = find_file_method(v.method).open(path, Access::ReadWrite, v.options);
    f->write_at(0, buf.span());
    for (Durability d : kAll) {
      SCOPED_TRACE(std::string(to_string(d)));
      if (f->supports(d)) {
        EXPECT_NO_THROW(f->sync(d));
      } else {
        auto e = testing::expect_error([&] { f->sync(d); });
        ASSERT_TRUE(e);
        EXPECT_EQ(e->error_number(), EOPNOTSUPP) << e->what();
        EXPECT_NE(std::string(e->what()).find(to_string(d)), std::string::npos) << "names the call: " << e->what();
      }
    }
    // The contract's fixed points: every method can do nothing or fsync; only
    // mmap can msync (MS_SYNC), and nothing offers MS_ASYNC as durable.
    EXPECT_TRUE(f->supports(Durability::None));
    EXPECT_TRUE(f->supports(Durability::Fsync));
    EXPECT_TRUE(f->supports(Durability::Fdatasync));
    EXPECT_EQ(f->supports(Durability::MsyncSync), v.method == "mmap");
    f->close();
    EXPECT_EQ(testing::read_bytes(path).size(), 8192u);
    EXPECT_TRUE(matches_pattern(7, 0, testing::read_bytes(path)));
    // A read-only File may sync too (fsync on a read-only descriptor is allowed).
    auto r = find_file_method(v.method).open(path, Access::Read, v.options);
    for (Durability d : kAll) {
      SCOPED_TRACE(std::string("read-only, ") + std::string(to_string(d)));
      if (r->supports(d)) {
        EXPECT_NO_THROW(r->sync(d));
      } else {
        EXPECT_THROW(r->sync(d), Error);
      }
    }
    r->close();
  }
};

TEST_P(DurabilityCalls, OnExt4Tmp) {
  // /tmp is ext4 on this machine; elsewhere it is whatever /tmp is, and the
  // contract (succeed or EOPNOTSUPP) is the same.
  check_every_call("/tmp");
}

TEST_P(DurabilityCalls, OnTmpfs) {
  ScratchDir outer;
  testing::TmpfsMount tmpfs(outer.path(), "size=16m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "tmpfs case skipped: " << tmpfs.why_not();
  check_every_call(tmpfs.dir());
}

TEST(DurabilityNames, RoundTripAndRejectUnknown) {
  for (Durability d : kAll) EXPECT_EQ(parse_durability(to_string(d)), d);
  EXPECT_THROW(parse_durability("msync_async"), UsageError);
  EXPECT_THROW(parse_durability(""), UsageError);
  for (Advice a : {Advice::Normal, Advice::Sequential, Advice::Random, Advice::WillNeed})
    EXPECT_EQ(parse_advice(to_string(a)), a);
  EXPECT_THROW(parse_advice("dontneed"), UsageError);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, DurabilityCalls, ::testing::ValuesIn(testing::all_variants()),
                         [](const auto& p) { return p.param.label; });

}  // namespace
}  // namespace iolab::io
