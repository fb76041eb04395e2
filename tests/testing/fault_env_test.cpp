// The fault env's crash model (include/iolab/testing/fault_env.h): synced data
// survives, unsynced writes are kept, dropped or torn at sector boundaries,
// names need their directory synced, stores through a mapping are found
// and made durable by a range sync of their range only, and a state is a
// function of its point and seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "iolab/base/error.h"
#include "iolab/testing/fault_env.h"
#include "iolab/io/scratch.h"

namespace iolab::io {
namespace {

std::vector<std::byte> filled(std::size_t n, char c) { return std::vector<std::byte>(n, static_cast<std::byte>(c)); }

std::string text(const std::vector<std::byte>& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// The contents of `path` in the states of seeds 0..n-1 at `point` ("<gone>" when absent).
std::set<std::string> outcomes(const FaultEnv& env, std::size_t point, const std::filesystem::path& path, int n = 200,
                               const CrashOptions& options = {}) {
  std::set<std::string> seen;
  CrashReplay replay(env, options);
  replay.advance_to(point);
  for (int seed = 0; seed < n; ++seed) {
    CrashState s = replay.state(static_cast<std::uint64_t>(seed));
    auto it = s.files.find(path);
    seen.insert(it == s.files.end() ? "<gone>" : text(it->second));
  }
  return seen;
}

TEST(FaultEnv, SyncedDataSurvivesAndUnsyncedWritesMayNot) {
  FaultEnv env;
  auto f = env.open("/d/f", OpenMode::CreateNew);
  env.sync_dir("/d");
  f->write_at(0, filled(4, 'a'));
  f->sync(Durability::Fdatasync);
  std::size_t synced = env.operations();
  f->write_at(4, filled(4, 'b'));
  std::size_t end = env.operations();
  EXPECT_EQ(env.sync_points(), (std::vector<std::size_t>{2, 4}));
  EXPECT_EQ(outcomes(env, synced, "/d/f"), (std::set<std::string>{"aaaa"}));
  EXPECT_EQ(outcomes(env, end, "/d/f"), (std::set<std::string>{"aaaa", "aaaabbbb"}));
  EXPECT_EQ(text(env.current().files.at("/d/f")), "aaaabbbb");
  // A disk that ignores flushes loses even the synced write.
  std::set<std::string> seen = outcomes(env, end, "/d/f", 100, CrashOptions{false, 512});
  EXPECT_TRUE(seen.count("<gone>") == 1 || seen.count("") == 1);
}

TEST(FaultEnv, TornWritesKeepWholeSectors) {
  FaultEnv env;
  auto f = env.open("/f", OpenMode::CreateNew);
  env.sync_dir("/");
  f->write_at(0, filled(2048, 'o'));
  f->sync(Durability::Fdatasync);
  f->write_at(100, filled(1500, 'n'));  // sectors [100,512) [512,1024) [1024,1536) [1536,1600)
  std::set<std::string> seen = outcomes(env, env.operations(), "/f", 400);
  EXPECT_GT(seen.size(), 4u) << "kept, dropped and several torn variants";
  for (const std::string& s : seen) {
    ASSERT_EQ(s.size(), 2048u);
    // Each sector is all old or all new.
    for (std::size_t lo : {100u, 512u, 1024u, 1536u}) {
      std::size_t hi = std::min<std::size_t>(1600, (lo / 512 + 1) * 512);
      std::string piece = s.substr(lo, hi - lo);
      EXPECT_TRUE(piece == std::string(hi - lo, 'o') || piece == std::string(hi - lo, 'n')) << lo;
    }
    EXPECT_EQ(s.substr(0, 100), std::string(100, 'o'));
    EXPECT_EQ(s.substr(1600), std::string(448, 'o'));
  }
}

TEST(FaultEnv, LaterWritesMaySurviveEarlierOnes) {
  FaultEnv env;
  auto f = env.open("/f", OpenMode::CreateNew);
  env.sync_dir("/");
  f->write_at(0, filled(512, 'a'));
  f->write_at(512, filled(512, 'b'));
  std::set<std::string> seen = outcomes(env, env.operations(), "/f");
  EXPECT_TRUE(seen.count(std::string(512, '\0') + std::string(512, 'b'))) << "the first write lost, the second kept";
  EXPECT_TRUE(seen.count(std::string(512, 'a')));
  EXPECT_TRUE(seen.count(""));
}

TEST(FaultEnv, NamesNeedTheirDirectorySynced) {
  FaultEnv env;
  env.create_dir("/d");
  env.sync_dir("/");
  auto f = env.open("/d/new", OpenMode::CreateNew);
  f->write_at(0, filled(3, 'x'));
  f->sync(Durability::Fsync);
  std::size_t before_dir_sync = env.operations();
  env.sync_dir("/d");
  EXPECT_EQ(outcomes(env, before_dir_sync, "/d/new"), (std::set<std::string>{"<gone>", "xxx"}));
  EXPECT_EQ(outcomes(env, env.operations(), "/d/new"), (std::set<std::string>{"xxx"}));

  // A rename over an existing file: old or new until the directory is synced.
  auto t = env.open("/d/tmp", OpenMode::CreateNew);
  t->write_at(0, filled(3, 'y'));
  t->sync(Durability::Fdatasync);
  env.rename("/d/tmp", "/d/new");
  std::size_t renamed = env.operations();
  EXPECT_EQ(outcomes(env, renamed, "/d/new"), (std::set<std::string>{"xxx", "yyy"}));
  EXPECT_EQ(outcomes(env, renamed, "/d/tmp"), (std::set<std::string>{"<gone>", "yyy"}));
  env.sync_dir("/d");
  EXPECT_EQ(outcomes(env, env.operations(), "/d/new"), (std::set<std::string>{"yyy"}));
  EXPECT_EQ(outcomes(env, env.operations(), "/d/tmp"), (std::set<std::string>{"<gone>"}));

  // A directory whose creation was not synced takes its files with it.
  env.create_dir("/e");
  auto g = env.open("/e/f", OpenMode::CreateNew);
  env.sync_dir("/e");
  EXPECT_EQ(outcomes(env, env.operations(), "/e/f"), (std::set<std::string>{"<gone>", ""}));
}

TEST(FaultEnv, StoresThroughAMappingAreFoundAndRangeSynced) {
  FaultEnv env;
  auto f = env.open("/m", OpenMode::CreateNew);
  env.sync_dir("/");
  f->allocate(0, 3 * kPageSize);
  f->sync(Durability::Fdatasync);
  auto region = f->map(0, 3 * kPageSize, Access::ReadWrite);
  std::memset(region->data() + 10, 'p', 5);                  // page 0
  std::memset(region->data() + 2 * kPageSize + 7, 'q', 5);   // page 2
  std::size_t before = env.operations();
  region->sync(0, 100);  // page 0 only
  EXPECT_EQ(env.operations(), before + 2) << "one dirty page found, then the range sync";
  std::set<std::string> seen = outcomes(env, env.operations(), "/m");
  std::set<bool> q_kept;
  for (const std::string& s : seen) {
    ASSERT_EQ(s.size(), 3 * kPageSize);
    EXPECT_EQ(s.substr(10, 5), "ppppp") << "synced by the range sync";
  }
  // Page 2 is still unrecorded: settle() finds it, and it may or may not survive.
  env.settle();
  for (const std::string& s : outcomes(env, env.operations(), "/m")) q_kept.insert(s.substr(2 * kPageSize + 7, 5) == "qqqqq");
  EXPECT_EQ(q_kept, (std::set<bool>{false, true}));
  // Reads see stores at once (one page cache).
  std::string got(5, '\0');
  f->read_at(2 * kPageSize + 7, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(got, "qqqqq");

  // A store past the end of file is a SIGBUS on a real file: reported.
  f->truncate(kPageSize);
  region->data()[kPageSize + 1] = std::byte{1};
  try {
    env.settle();
    ADD_FAILURE() << "a store past the end of file went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("past the end of file"), std::string::npos) << e.what();
  }
  region->data()[kPageSize + 1] = std::byte{0};
  region->unmap();
}

// A mapped file grown twice and range-synced three times keeps what the
// syncs covered (a size made durable once is not re-applied over later data).
TEST(FaultEnv, RangeSyncsAcrossGrowthKeepWhatTheyCovered) {
  FaultEnv env;
  auto f = env.open("/j", OpenMode::CreateNew);
  env.sync_dir("/");
  f->allocate(0, 4144);
  auto r = f->map(0, 4144, Access::ReadWrite);
  std::memset(r->data() + 100, 2, 100);
  r->sync(16, 200);
  f->allocate(4144, 4096);
  r->resize(8240);
  std::memset(r->data() + 3856, 3, 4112);
  r->sync(16, 7968 - 16);
  std::memset(r->data() + 16, 4, 32);
  r->sync(16, 8096 - 16);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    CrashState s = env.crash_state(env.operations(), seed);
    const auto& b = s.files.at("/j");
    ASSERT_EQ(b.size(), 8240u);
    EXPECT_EQ(std::count(b.begin() + 3856, b.begin() + 7968, std::byte{3}), 4112) << seed;
    EXPECT_EQ(std::count(b.begin() + 100, b.begin() + 200, std::byte{2}), 100) << seed;
  }
}

TEST(FaultEnv, StatesAreReproducibleAndReplayMatchesOneShot) {
  FaultEnv env;
  auto f = env.open("/f", OpenMode::CreateNew);
  env.sync_dir("/");
  for (int i = 0; i < 20; ++i) {
    f->write_at(static_cast<std::uint64_t>(i) * 300, filled(700, static_cast<char>('a' + i)));
    if (i % 5 == 4) f->sync(Durability::Fdatasync);
  }
  CrashReplay replay(env);
  for (std::size_t point = 0; point <= env.operations(); point += 3) {
    replay.advance_to(point);
    for (std::uint64_t seed : {1u, 2u, 99u}) {
      CrashState a = replay.state(seed), b = env.crash_state(point, seed);
      EXPECT_EQ(a.files, b.files) << point << " " << seed;
      EXPECT_EQ(a.kept + a.dropped + a.torn, replay.pending());
    }
  }
}

TEST(FaultEnv, CrashStatesStartNewEnvsAndWriteToDisk) {
  FaultEnv env;
  env.create_dir("/d");
  auto f = env.open("/d/f", OpenMode::CreateNew);
  f->write_at(0, filled(5, 'z'));
  f->sync(Durability::Fdatasync);
  env.sync_dir("/d");
  env.sync_dir("/");
  CrashState s = env.crash_state(env.operations(), 7);
  FaultEnv again(s);
  auto g = again.open("/d/f", OpenMode::OpenExisting);
  EXPECT_EQ(g->size(), 5u);
  EXPECT_EQ(again.list_dir("/d"), (std::vector<std::string>{"f"}));
  // The start state is durable: every crash of the new env keeps it.
  EXPECT_EQ(outcomes(again, 0, "/d/f"), (std::set<std::string>{"zzzzz"}));
  ScratchDir scratch;
  s.write_under(scratch.path());
  EXPECT_EQ(std::filesystem::file_size(scratch.path() / "d" / "f"), 5u);
  std::filesystem::remove_all(scratch.path() / "d");
}

}  // namespace
}  // namespace iolab::io
