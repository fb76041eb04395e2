// Fixtures of the fio job-file tests: a fake world (environment, include
// files, machine figures) to parse in, and mapping with a scratch directory.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/fio/job.h"
#include "iolab/testing/test_dir.h"

namespace iolab::testing {

// A context with a fixed environment and in-memory include files.
struct FakeWorld {
  std::map<std::string, std::string> env, files;
  fio::FioParseContext context() const {
    fio::FioParseContext c;
    c.getenv = [this](const std::string& n) -> std::optional<std::string> {
      auto it = env.find(n);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    };
    c.read_include = [this](const std::filesystem::path& p) {
      auto it = files.find(p.string());
      if (it == files.end()) throw UsageError("fio job " + p.string(), "cannot be read: No such file or directory");
      return it->second;
    };
    c.exists = [this](const std::filesystem::path& p) { return files.count(p.string()) != 0; };
    c.page_size = 4096;
    c.mb_memory = 2048;
    c.ncpus = 2;
    return c;
  }
};

inline fio::FioJobFile parse(const std::string& text, const FakeWorld& world = {}) {
  return fio::parse_fio_job(text, "dir/job.fio", world.context());
}

// The message of the UsageError `f` throws ("" when it throws none).
template <typename F>
inline std::string refusal(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

class FioMapTest : public ::testing::Test {
 protected:
  TestDir scratch_{"/tmp"};
  fio::FioMapSettings settings() const {
    fio::FioMapSettings s;
    s.cwd = scratch_.path();
    return s;
  }
  std::vector<fio::FioMappedJob> map(const std::string& text, fio::FioMapSettings s) const {
    return fio::map_fio_jobs(parse(text), s);
  }
  std::vector<fio::FioMappedJob> map(const std::string& text) const { return map(text, settings()); }
  fio::FioMappedJob one(const std::string& text) const {
    auto jobs = map(text);
    EXPECT_EQ(jobs.size(), 1u);
    return jobs.front();
  }
  std::string refused(const std::string& text, fio::FioMapSettings s) const {
    return refusal([&] { map(text, s); });
  }
  std::string refused(const std::string& text) const { return refused(text, settings()); }
  // How the job mapped the option written as `option` ("" when not listed).
  static std::string mapping(const fio::FioMappedJob& job, const std::string& option) {
    for (const auto& o : job.options)
      if (o.option == option) return o.mapping;
    return "";
  }
};

}  // namespace iolab::testing
