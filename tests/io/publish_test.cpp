// publish_file: results and reports appear whole or not at all, never over
// a file when told not to, never through a link, never leaving a temporary.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "io_test_support.h"
#include "iolab/io/publish.h"
#include "iolab/testing/test_dir.h"

namespace iolab::io {
namespace {

using testing::expect_error;

std::vector<std::string> names(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Publish, WritesTheWholeContentAndCreatesParents) {
  testing::TestDir f{"/tmp"};
  auto p = f.path() / "a" / "b" / "r.json";
  publish_file(p, "{\"x\": 1}\n", IfExists::Refuse);
  EXPECT_EQ(testing::read_file(p), "{\"x\": 1}\n");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(names(p.parent_path()), std::vector<std::string>{"r.json"}) << "no temporary left";
}

TEST(Publish, RefuseKeepsAnExistingFile) {
  testing::TestDir f{"/tmp"};
  auto p = f.path() / "r.json";
  std::ofstream(p) << "theirs";
  auto e = expect_error([&] { publish_file(p, "ours", IfExists::Refuse); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_NE(std::string(e->what()).find(p.string()), std::string::npos) << e->what();
  EXPECT_EQ(testing::read_file(p), "theirs");
  EXPECT_EQ(names(f.path()), std::vector<std::string>{"r.json"});
}

TEST(Publish, ReplaceSwapsTheFileAndNeverFollowsALink) {
  testing::TestDir f{"/tmp"};
  auto p = f.path() / "r.json";
  std::ofstream(p) << "old";
  publish_file(p, "new", IfExists::Replace);
  EXPECT_EQ(testing::read_file(p), "new");

  auto target = f.path() / "precious";
  std::ofstream(target) << "keep";
  auto link = f.path() / "link.json";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  publish_file(link, "results", IfExists::Replace);
  EXPECT_EQ(testing::read_file(target), "keep") << "the link's target is untouched";
  EXPECT_FALSE(std::filesystem::is_symlink(link));
  EXPECT_EQ(testing::read_file(link), "results");
  ASSERT_EQ(::symlink(target.c_str(), (f.path() / "other.json").c_str()), 0);
  EXPECT_TRUE(expect_error([&] { publish_file(f.path() / "other.json", "x", IfExists::Refuse); }));
  EXPECT_EQ(testing::read_file(target), "keep");
}

// The ownership decision is taken as the file is published: a file that
// appeared at the name is judged then, and kept unless the rule accepts it.
TEST(Publish, ReplaceableDecidesAtPublishTimeAndKeepsAFileItRefuses) {
  testing::TestDir f{"/tmp"};
  auto p = f.path() / "r.json";
  std::vector<std::string> judged;
  auto only_ours = [&](const std::filesystem::path& existing) {
    judged.push_back(testing::read_file(existing));
    return judged.back().starts_with("ours");
  };
  publish_file(p, "ours 1", only_ours);  // a free name: nothing to judge
  EXPECT_TRUE(judged.empty());
  EXPECT_EQ(testing::read_file(p), "ours 1");
  publish_file(p, "ours 2", only_ours);  // iolab's own: replaced
  EXPECT_EQ(judged, std::vector<std::string>{"ours 1"});
  EXPECT_EQ(testing::read_file(p), "ours 2");

  std::ofstream(p) << "draft";  // the user's, written over ours meanwhile
  auto e = expect_error([&] { publish_file(p, "ours 3", only_ours); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_NE(std::string(e->what()).find(p.string()), std::string::npos) << e->what();
  EXPECT_EQ(testing::read_file(p), "draft");
  EXPECT_EQ(names(f.path()), std::vector<std::string>{"r.json"}) << "no temporary left";

  auto link = f.path() / "link.json";  // a link is judged as a link, its target untouched
  ASSERT_EQ(::symlink(p.c_str(), link.c_str()), 0);
  EXPECT_TRUE(expect_error([&] {
    publish_file(link, "ours 4", [](const std::filesystem::path& existing) {
      return std::filesystem::is_regular_file(std::filesystem::symlink_status(existing));
    });
  }));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(testing::read_file(p), "draft");
}

// A judge that throws once the user's file has been swapped out to the
// temporary's name decides nothing: the file goes back, nothing of it is removed.
TEST(Publish, AJudgeThatFailsKeepsTheFileThatWasThere) {
  testing::TestDir f{"/tmp"};
  auto p = f.path() / "r.json";
  std::ofstream(p) << "draft";
  auto e = expect_error([&] {
    publish_file(p, "ours", [](const std::filesystem::path&) -> bool { throw std::runtime_error("cannot judge"); });
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_EQ(testing::read_file(p), "draft");
  EXPECT_EQ(names(f.path()), std::vector<std::string>{"r.json"}) << "no temporary left, and nothing lost";
}

TEST(Publish, AFailureLeavesNoTemporary) {
  testing::TestDir f{"/tmp"};
  std::filesystem::create_directory(f.path() / "dir.json");
  auto e = expect_error([&] { publish_file(f.path() / "dir.json", "x", IfExists::Replace); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EISDIR) << e->what();
  EXPECT_EQ(names(f.path()), std::vector<std::string>{"dir.json"});

  std::ofstream(f.path() / "plain") << "";
  e = expect_error([&] { publish_file(f.path() / "plain" / "r.json", "x", IfExists::Replace); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("plain"), std::string::npos) << e->what();
}

TEST(Publish, CheckPublishableProvesTheDirectoryAndLeavesNothing) {
  testing::TestDir f{"/tmp"};
  check_publishable(f.path() / "results");
  EXPECT_TRUE(std::filesystem::is_directory(f.path() / "results"));
  EXPECT_TRUE(names(f.path() / "results").empty());
  std::ofstream(f.path() / "plain") << "";
  auto e = expect_error([&] { check_publishable(f.path() / "plain"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOTDIR) << e->what();
}

TEST(Publish, AFullOrReadOnlyFilesystemIsFoundByTheCheck) {
  testing::TestDir f{"/tmp"};
  testing::TmpfsMount full(f.path(), "size=64k");
  if (!full.mounted()) GTEST_SKIP() << full.why_not();
  std::ofstream(full.dir() / "filler") << std::string(64 * 1024, 'x');
  auto e = expect_error([&] { check_publishable(full.dir()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOSPC) << e->what();
  e = expect_error([&] { publish_file(full.dir() / "r.json", std::string(8192, 'r'), IfExists::Refuse); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), ENOSPC) << e->what();
  EXPECT_EQ(names(full.dir()), std::vector<std::string>{"filler"});

  testing::TmpfsMount ro(f.path(), "size=64k");
  ASSERT_TRUE(ro.mounted());
  ASSERT_EQ(ro.remount_read_only(), "");
  e = expect_error([&] { check_publishable(ro.dir()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EROFS) << e->what();
  // The error names what the user asked for, never iolab's temporary or probe file (issue 44 finding 12).
  EXPECT_EQ(std::string(e->what()).find(".tmp"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find(ro.dir().string()), std::string::npos) << e->what();
  e = expect_error([&] { publish_file(ro.dir() / "r.json", "r", IfExists::Refuse); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EROFS) << e->what();
  EXPECT_EQ(std::string(e->what()).find(".tmp"), std::string::npos) << e->what();
  EXPECT_NE(std::string(e->what()).find((ro.dir() / "r.json").string()), std::string::npos) << e->what();
}

}  // namespace
}  // namespace iolab::io
