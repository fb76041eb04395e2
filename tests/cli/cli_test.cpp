// The iolab command as a user runs it: exit codes, one-line errors, the
// methods listing as JSON. Runs the built binary with posix_spawn, capturing
// stdout and stderr into scratch files.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "iolab/io/scratch.h"
#include "cli/run_program.h"
#include "iolab/version.h"

namespace {

using Outcome = iolab::testing::ProgramRun;
using iolab::testing::run_iolab;

TEST(Cli, HelpListsTheCommands) {
  Outcome o = run_iolab({"--help"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("methods"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("run"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Examples"), std::string::npos) << o.out;
  EXPECT_TRUE(o.err.empty()) << o.err;
}

TEST(Cli, SubcommandHelpHasAnExample) {
  Outcome o = run_iolab({"methods", "--help"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("--json"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Example"), std::string::npos) << o.out;
}

TEST(Cli, VersionPrintsTheVersion) {
  Outcome o = run_iolab({"--version"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find(std::string("iolab ") + iolab::kVersion), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(std::string("commit ") + iolab::git_commit()), std::string::npos) << o.out;
}

TEST(Cli, MethodsTableListsEveryMethod) {
  Outcome o = run_iolab({"methods"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* name : {"iostream", "stdio", "syscall", "pread", "vectored", "mmap", "direct", "io_uring", "libaio",
                           "readwrite", "sendfile", "copy_file_range", "splice", "mmap_write"})
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  EXPECT_NE(o.out.find("AVAILABLE"), std::string::npos);
}

TEST(Cli, MethodsJsonIsAnArrayOfFourteen) {
  Outcome o = run_iolab({"methods", "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);  // throws (fails the test) if not JSON
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 14u);
  std::set<std::string> names;
  int files = 0, copies = 0;
  for (const auto& m : j) {
    ASSERT_TRUE(m.is_object());
    for (const char* key : {"name", "kind", "available", "reason", "description"})
      ASSERT_TRUE(m.contains(key)) << key << " missing in " << m.dump();
    ASSERT_TRUE(m["name"].is_string());
    ASSERT_TRUE(m["available"].is_boolean());
    ASSERT_TRUE(m["description"].is_string());
    EXPECT_FALSE(m["description"].get<std::string>().empty());
    names.insert(m["name"].get<std::string>());
    std::string kind = m["kind"].get<std::string>();
    EXPECT_TRUE(kind == "file" || kind == "copy") << kind;
    (kind == "file" ? files : copies)++;
    if (m["available"].get<bool>()) {
      EXPECT_TRUE(m["reason"].is_null()) << m.dump();
    } else {
      EXPECT_TRUE(m["reason"].is_string() && !m["reason"].get<std::string>().empty()) << m.dump();
    }
    // This machine: ext4, root, io_uring enabled: everything is available.
    EXPECT_TRUE(m["available"].get<bool>()) << m.dump();
  }
  EXPECT_EQ(files, 9);
  EXPECT_EQ(copies, 5);
  EXPECT_EQ(names.size(), 14u) << "names are unique";
}

TEST(Cli, MethodsWithAMissingDirFailsWithOneLine) {
  Outcome o = run_iolab({"methods", "--dir", "/nonexistent/iolab-test-dir"});
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("/nonexistent/iolab-test-dir"), std::string::npos) << o.err;
}

// Bad input: exit code 2 and exactly one line on stderr, naming the problem.
struct BadInput {
  std::vector<std::string> args;
  std::string must_mention;
};

void PrintTo(const BadInput& b, std::ostream* os) {
  *os << "iolab";
  for (const auto& a : b.args) *os << ' ' << a;
}

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ExitsTwoWithOneLine) {
  Outcome o = run_iolab(GetParam().args);
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << "stderr was:\n" << o.err;
  EXPECT_NE(o.err.find(GetParam().must_mention), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty()) << "nothing on stdout: " << o.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(BadInput{{"bogus"}, "bogus"}, BadInput{{"methods", "--nope"}, "--nope"},
                      BadInput{{"run", "--size", "12q"}, "12q"}, BadInput{{"--frobnicate"}, "--frobnicate"},
                      BadInput{{}, "subcommand"}, BadInput{{"methods", "extra"}, "extra"}),
    [](const auto& p) { return "case" + std::to_string(p.index); });

}  // namespace
