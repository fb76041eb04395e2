// A full cache (CacheState::Full) and random reads in windows, the two
// things the decision table's larger-than-memory column adds to the
// harness: "full" is a results name a user cannot ask for; an experiment
// asking for it without a memory cgroup, or with a file that fits, is
// skipped with the reason; a windowed random read reads the next window of
// one permutation each pass, on from where the last pass stopped, and its
// verification pass checks a stated sample. (The full cache proven in a
// real group: tests/suites/decision_memory_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/memory_cgroup.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/testing/forwarding_file.h"

namespace iolab::harness {
namespace {

TEST(FullCache, IsAResultsNameNoUserCanAskFor) {
  EXPECT_EQ(to_string(results::CacheState::Full), "full");
  EXPECT_EQ(results::parse_cache_name("full"), results::CacheState::Full);
  for (auto c : {results::CacheState::Warm, results::CacheState::Cold, results::CacheState::Direct, results::CacheState::Full})
    EXPECT_EQ(results::parse_cache_name(to_string(c)), c);
  try {
    results::parse_cache("full");
    FAIL() << "--cache full was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("memory cgroup"), std::string::npos) << e.what();
  }
  results::Result r;
  r.suite = "decision", r.experiment = "x", r.method = "pread", r.cache = results::CacheState::Full;
  results::Results rs;
  rs.results.push_back(r);
  results::Results back = results::results_from_json(to_json(rs), "test");
  ASSERT_EQ(back.results.size(), 1u);
  EXPECT_EQ(back.results[0].cache, results::CacheState::Full);
}

FileExperiment random_read(std::uint64_t file) {
  FileExperiment e;
  e.suite = "test", e.experiment = "windows", e.method = "pread";
  e.op = results::Op::Read, e.pattern = results::AccessPattern::Rand, e.block_size = 4096, e.file_size = file;
  e.latency = false;
  return e;
}

RunConfig one_pass_each() {
  RunConfig c;
  c.reps = 3;
  c.warmup = 1;
  c.min_time = 0;
  c.latency = false;
  return c;
}

TEST(FullCache, WithoutAGroupOrWithAFileThatFitsIsSkippedWithTheReason) {
  io::ScratchDir scratch("/tmp");
  Runner runner(one_pass_each(), scratch);
  FileExperiment e = random_read(64 * 1024);
  e.cache = results::CacheState::Full;
  results::Result none = runner.run(e);
  ASSERT_TRUE(none.skipped);
  EXPECT_NE(none.skipped->find("memory cgroup"), std::string::npos) << *none.skipped;
  // A group (a plain directory stands in: nothing is read from it before the file's size is judged).
  const std::filesystem::path fake = scratch.path() / "fake-cgroup-root";
  std::filesystem::create_directory(fake);
  {
    MemoryCgroup group(CgroupRoot{fake, CgroupVersion::V1}, 1 << 20);
    e.memory_group = &group;
    e.cache_room = 64 * 1024;  // the file is no larger
    results::Result fits = runner.run(e);
    ASSERT_TRUE(fits.skipped);
    EXPECT_NE(fits.skipped->find("not larger than the 64 KiB page-cache room"), std::string::npos) << *fits.skipped;
  }
  std::filesystem::remove(fake);
}

// pread, with every offset it reads noted.
class NotingMethod final : public io::Method {
 public:
  explicit NotingMethod(std::vector<std::uint64_t>& offsets) : offsets_(offsets) {}
  std::string_view name() const override { return "pread"; }
  std::string_view description() const override { return "pread, noting offsets"; }
  io::MethodTraits traits(const io::FileOptions& o) const override { return inner().traits(o); }
  io::Availability probe(const std::filesystem::path& dir) const override { return inner().probe(dir); }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    return std::make_unique<Noting>(inner().open(p, a, o), offsets_);
  }

 private:
  class Noting final : public testing::ForwardingFile {
   public:
    Noting(std::unique_ptr<io::File> f, std::vector<std::uint64_t>& offsets)
        : ForwardingFile(std::move(f)), offsets_(offsets) {}
    std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
      offsets_.push_back(offset);
      return ForwardingFile::read_at(offset, dst);
    }

   private:
    std::vector<std::uint64_t>& offsets_;
  };
  static const io::Method& inner() { return io::find_file_method("pread"); }
  std::vector<std::uint64_t>& offsets_;
};

// 16 blocks; verification 6 of them, then passes of 4: the verification
// pass, one warm-up and three timed passes read 22 blocks, the first 16 of
// them every block once (one permutation), the next 6 the permutation's
// first 6 again; the verification after timing reads the 6 after those.
TEST(RandomWindows, EachPassReadsTheNextWindowOfOnePermutation) {
  io::ScratchDir scratch("/tmp");
  Runner runner(one_pass_each(), scratch);
  std::vector<std::uint64_t> offsets;
  NotingMethod noting(offsets);
  FileExperiment e = random_read(16 * 4096);
  e.method_object = &noting;
  e.cache = results::CacheState::Warm;
  e.pass_blocks = 4;
  e.verify_blocks = 6;
  e.order_seed = 99;
  results::Result r = runner.run(e);
  ASSERT_FALSE(r.skipped) << *r.skipped;
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.ops, 4u);
  EXPECT_EQ(r.bytes, 4u * 4096);
  EXPECT_EQ(r.extra.value("pass_blocks", 0u), 4u);
  EXPECT_EQ(r.extra.value("order_seed", 0u), 99u);
  EXPECT_EQ(r.extra.value("verified_bytes", 0u), 6u * 4096);
  EXPECT_DOUBLE_EQ(r.extra.value("verified_fraction", 0.0), 6.0 / 16);
  EXPECT_EQ(r.extra.value("verified_again_bytes", 0u), 6u * 4096);
  EXPECT_TRUE(r.extra.value("verified_after_timing", false));
  ASSERT_EQ(offsets.size(), 6u + 4 + 3 * 4 + 6);
  const std::set<std::uint64_t> first(offsets.begin(), offsets.begin() + 16);
  EXPECT_EQ(first.size(), 16u) << "one permutation: no block read twice before every block was read";
  EXPECT_EQ(offsets[16], offsets[0]);
  EXPECT_EQ(offsets[17], offsets[1]);
  for (std::size_t i = 22; i < 28; ++i) EXPECT_EQ(offsets[i], offsets[i - 16]) << "the next window, at " << i;
  EXPECT_FALSE(std::is_sorted(offsets.begin(), offsets.begin() + 16));
}

}  // namespace
}  // namespace iolab::harness
