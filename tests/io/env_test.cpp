// The Env contract (include/iolab/io/env.h), checked on every Env: files
// created exclusively, positional, vectored and sequential writes read back,
// truncate, allocate, mappings coherent with reads and writes, renames,
// removes, directory listings, and errors that name the call and the path.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/io/env.h"
#include "iolab/testing/fault_env.h"
#include "iolab/io/pattern.h"
#include "iolab/io/scratch.h"

namespace iolab::io {
namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string read_all(EnvFile& f) {
  std::string s(f.size(), '\0');
  std::size_t n = f.read_at(0, std::as_writable_bytes(std::span(s)));
  s.resize(n);
  return s;
}

class EnvContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "posix") {
      scratch_ = std::make_unique<ScratchDir>();
      env_ = &Env::posix();
      dir_ = scratch_->path();
    } else {
      fault_ = std::make_unique<FaultEnv>();
      env_ = fault_.get();
      dir_ = "/fault";
    }
  }
  void TearDown() override {
    // The POSIX env wrote real files: remove what the test left.
    if (scratch_ != nullptr)
      for (const auto& name : env_->list_dir(dir_)) std::filesystem::remove_all(dir_ / name);
  }
  Env& env() { return *env_; }
  std::filesystem::path at(std::string_view name) const { return dir_ / std::string(name); }

  std::unique_ptr<ScratchDir> scratch_;
  std::unique_ptr<FaultEnv> fault_;
  Env* env_ = nullptr;
  std::filesystem::path dir_;
};

TEST_P(EnvContract, CreateNewIsExclusiveAndOpenExistingNeedsTheFile) {
  auto f = env().open(at("a"), OpenMode::CreateNew);
  f->close();
  try {
    env().open(at("a"), OpenMode::CreateNew);
    ADD_FAILURE() << "created a file twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_number(), EEXIST);
    EXPECT_NE(std::string(e.what()).find(at("a").string()), std::string::npos) << e.what();
  }
  try {
    env().open(at("missing"), OpenMode::OpenExisting);
    ADD_FAILURE() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_EQ(std::string(e.what()), "open " + at("missing").string() + ": No such file or directory");
  }
  EXPECT_TRUE(env().exists(at("a")));
  EXPECT_FALSE(env().exists(at("missing")));
  auto again = env().open(at("a"), OpenMode::OpenOrCreate);
  EXPECT_EQ(again->size(), 0u);
}

TEST_P(EnvContract, WritesOfEveryKindReadBack) {
  auto f = env().open(at("w"), OpenMode::CreateNew);
  auto hello = bytes_of("hello "), world = bytes_of("world"), bang = bytes_of("!");
  f->write_at(0, hello);
  std::span<const std::byte> parts[] = {world, bang};
  f->write_at(6, parts);
  EXPECT_EQ(read_all(*f), "hello world!");
  f->seek(6);
  f->write(bytes_of("WORLD"));
  f->seek(0);
  std::string head(5, '\0');
  EXPECT_EQ(f->read(std::as_writable_bytes(std::span(head))), 5u);
  EXPECT_EQ(head, "hello");
  EXPECT_EQ(read_all(*f), "hello WORLD!");
  // A write past the end leaves zeros between.
  f->write_at(16, bytes_of("x"));
  EXPECT_EQ(read_all(*f), std::string("hello WORLD!\0\0\0\0x", 17));
  f->truncate(5);
  EXPECT_EQ(read_all(*f), "hello");
  f->allocate(0, 8192);
  EXPECT_EQ(f->size(), 8192u);
  f->sync(Durability::Fdatasync);
  f->sync(Durability::Fsync);
  EXPECT_THROW(f->sync(Durability::MsyncSync), Error);
  EXPECT_GT(f->counters().calls, 0u);
  EXPECT_GE(f->counters().bytes_written, 13u);
  f->close();
  f->close();  // twice is harmless
}

TEST_P(EnvContract, MappingsAreCoherentWithReadsAndWrites) {
  auto f = env().open(at("m"), OpenMode::CreateNew);
  f->allocate(0, 2 * kPageSize);
  auto region = f->map(0, 2 * kPageSize, Access::ReadWrite);
  std::memcpy(region->data() + 100, "mapped", 6);
  std::string got(6, '\0');
  f->read_at(100, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(got, "mapped");
  f->write_at(kPageSize + 1, bytes_of("written"));
  EXPECT_EQ(std::memcmp(region->data() + kPageSize + 1, "written", 7), 0);
  region->sync(100, 6);
  region->prefault(0, kPageSize);
  region->resize(kPageSize);
  EXPECT_EQ(region->size(), kPageSize);
  EXPECT_EQ(std::memcmp(region->data() + 100, "mapped", 6), 0);
  region->unmap();
  region->unmap();
  EXPECT_THROW(f->map(100, kPageSize, Access::Read), Error);  // offset not page-aligned
}

TEST_P(EnvContract, RenameRemoveAndList) {
  env().create_dir(at("d"));
  EXPECT_THROW(env().create_dir(at("d")), Error);
  auto a = env().open(at("d") / "a", OpenMode::CreateNew);
  a->write_at(0, bytes_of("A"));
  a->close();
  auto b = env().open(at("d") / "b", OpenMode::CreateNew);
  b->write_at(0, bytes_of("B"));
  b->close();
  EXPECT_EQ(env().list_dir(at("d")), (std::vector<std::string>{"a", "b"}));
  env().rename(at("d") / "a", at("d") / "b");  // replaces b
  env().sync_dir(at("d"));
  EXPECT_EQ(env().list_dir(at("d")), (std::vector<std::string>{"b"}));
  EXPECT_EQ(read_all(*env().open(at("d") / "b", OpenMode::OpenExisting)), "A");
  EXPECT_THROW(env().remove_dir(at("d")), Error);  // not empty
  env().remove(at("d") / "b");
  try {
    env().remove(at("d") / "b");
    ADD_FAILURE() << "removed a file twice";
  } catch (const Error& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
  }
  try {
    env().rename(at("d") / "nothing", at("d") / "x");
    ADD_FAILURE() << "renamed a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rename"), std::string::npos) << e.what();
  }
  env().remove_dir(at("d"));
  EXPECT_FALSE(env().exists(at("d")));
}

// What the commit log does (RocketMQ's flush service): one thread writes
// and stores ahead, another syncs what is done, concurrently.
TEST_P(EnvContract, ASyncRunsWhileAnotherThreadWritesElsewhere) {
  constexpr std::size_t kBlock = 1000, kBlocks = 64;
  auto f = env().open(at("c"), OpenMode::CreateNew);
  auto m = env().open(at("m"), OpenMode::CreateNew);
  m->allocate(0, kBlock * kBlocks);
  auto region = m->map(0, kBlock * kBlocks, Access::ReadWrite);
  std::atomic<std::size_t> done{0};
  std::thread flusher([&] {
    std::size_t synced = 0;
    while (synced < kBlocks) {
      std::size_t now = done.load();
      if (now == synced) {
        std::this_thread::yield();
        continue;
      }
      f->sync(Durability::Fdatasync);
      region->sync(synced * kBlock, (now - synced) * kBlock);  // only what the writer finished
      synced = now;
    }
  });
  std::vector<std::byte> block(kBlock);
  for (std::size_t i = 0; i < kBlocks; ++i) {
    std::fill(block.begin(), block.end(), static_cast<std::byte>(i));
    f->write_at(i * kBlock, block);
    std::memcpy(region->data() + i * kBlock, block.data(), kBlock);
    done.store(i + 1);
  }
  flusher.join();
  for (std::size_t i = 0; i < kBlocks; ++i) {
    EXPECT_EQ(static_cast<std::uint8_t>(read_all(*f)[i * kBlock]), i);
    EXPECT_EQ(static_cast<std::uint8_t>(region->data()[i * kBlock + kBlock - 1]), i);
  }
  region->unmap();
}

INSTANTIATE_TEST_SUITE_P(Envs, EnvContract, ::testing::Values("posix", "fault"),
                         [](const auto& p) { return p.param; });

TEST(PosixEnv, RefusesSymlinksAndDirectories) {
  ScratchDir scratch;
  auto target = scratch.create_file("target");
  auto link = scratch.path() / "link";
  std::filesystem::create_symlink(target, link);
  try {
    Env::posix().open(link, OpenMode::OpenExisting);
    ADD_FAILURE() << "followed a symlink";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  std::filesystem::remove(link);
  EXPECT_THROW(Env::posix().open(scratch.path(), OpenMode::OpenExisting, Access::Read), Error);
}

}  // namespace
}  // namespace iolab::io
