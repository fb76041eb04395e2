#include "iolab/base/input_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "iolab/base/error.h"
#include "iolab/testing/test_dir.h"

namespace iolab {
namespace {

TEST(InputFile, JsonDepthSkipsStringsAndCountsBothBrackets) {
  EXPECT_EQ(json_nesting_depth("1"), 0u);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})"), 4u);
  EXPECT_EQ(json_nesting_depth(R"({"a": "[[[[\"[[[["})"), 1u);
  EXPECT_EQ(json_nesting_depth(std::string(1000, '[')), 1000u);
}

TEST(InputFile, TomlShapeCountsNestingAndDottedParts) {
  EXPECT_EQ(toml_shape("method = \"pread\"\nbs = [\"4k\", \"1m\"]\n").depth, 1u);
  EXPECT_EQ(toml_shape("method = \"pread\"\nbs = [\"4k\", \"1m\"]\n").key_parts, 1u);
  EXPECT_EQ(toml_shape("[a.b.c]\nx.y = 1\n").key_parts, 3u);
  EXPECT_EQ(toml_shape("s = \"a.b.c.d.e [[[[\" # x.y.z.w [[[\n").key_parts, 1u);
  EXPECT_EQ(toml_shape("s = '''a.b\n.c.d'''\n").depth, 0u);
  EXPECT_EQ(toml_shape("x = [[[1]]]\n").depth, 3u);
}

TEST(InputFile, RefusesWhatIsNotARegularFileOrTooLarge) {
  testing::TestDir place{"/tmp"};
  const std::filesystem::path dir = place.path(), file = dir / "job.toml";
  std::ofstream(file) << "method = \"pread\"\n";
  EXPECT_EQ(read_input_file(file, "job file", 100), "method = \"pread\"\n");
  EXPECT_THROW(read_input_file(file, "job file", 4), UsageError);
  EXPECT_THROW(read_input_file("/dev/zero", "job file", 100), UsageError);
  EXPECT_THROW(read_input_file(dir, "job file", 100), UsageError);
  EXPECT_THROW(read_input_file(dir / "missing", "job file", 100), UsageError);
}

// A results file that cannot be read fails (exit 1, as a missing one does
// in every command that reads results); a job file that cannot is bad input.
TEST(InputFile, AResultsFileThatCannotBeReadIsAFailureNotBadInput) {
  testing::TestDir place{"/tmp"};
  const std::filesystem::path missing = place.path() / "missing.json";
  try {
    read_input_file(missing, "results file", 100, Unreadable::Failure);
    ADD_FAILURE() << "read a missing file";
  } catch (const UsageError& e) {
    ADD_FAILURE() << "bad input (exit 2), not a failure (exit 1): " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.error_number(), ENOENT) << e.what();
    EXPECT_EQ(std::string(e.what()), "read results file " + missing.string() + ": cannot be read: " + std::strerror(ENOENT));
  }
  EXPECT_THROW(read_input_file(missing, "job file", 100), UsageError);
}

}  // namespace
}  // namespace iolab
