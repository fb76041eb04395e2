#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "iolab/version.h"
#include "iolab/harness/environment.h"
#include "iolab/results/record.h"

namespace iolab::harness {
namespace {

// The environment names the commit built from (the same --version prints);
// files written before it was recorded still read, with none.
TEST(ResultsFormat, EnvironmentRecordsTheCommit) {
  results::Results a;
  a.environment = collect_environment("/tmp");
  EXPECT_EQ(a.environment.git_commit, iolab::git_commit());
  EXPECT_FALSE(a.environment.git_commit.empty());
  nlohmann::json j = to_json(a);
  EXPECT_EQ(j["environment"]["git_commit"], iolab::git_commit());
  j["environment"].erase("git_commit");
  EXPECT_EQ(results::results_from_json(j, "old.json").environment.git_commit, "");
}

}  // namespace
}  // namespace iolab::harness
