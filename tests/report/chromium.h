// Runs Debian's headless Chromium on a local page: the DOM after scripts ran,
// Chromium's own log (console messages), and screenshots.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"

namespace iolab::testing {

inline std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

struct ChromiumRun {
  int status = -1;
  std::string out, err;
};

// `mode` is "--dump-dom" or "--screenshot=PATH". A fresh profile directory per run.
inline ChromiumRun run_chromium(const std::filesystem::path& page, const std::string& mode, const std::string& window = "") {
  TestDir profile_dir;
  ChromiumRun run;
  const std::filesystem::path& profile = profile_dir.path();
  const std::filesystem::path out = profile / "stdout", err = profile / "stderr";
  std::string cmd = "timeout 60 " + chromium_path() +
                    " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
                    " --disable-sync --no-first-run --disable-extensions --hide-scrollbars --enable-logging=stderr --v=0"
                    " --virtual-time-budget=5000 --user-data-dir=" + profile.string() + " " +
                    (window.empty() ? "" : "--window-size=" + window + " ") + mode + " 'file://" + page.string() + "' >" +
                    out.string() + " 2>" + err.string();
  int rc = std::system(cmd.c_str());
  run.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

// The page drawn in Chromium: no script error, every chart rendered (at least
// `min_charts`), nothing on Chromium's console.
inline void expect_charts_draw_without_warnings(const std::filesystem::path& page, int min_charts) {
  ChromiumRun run = run_chromium(page, "--dump-dom");
  ASSERT_EQ(run.status, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("id=\"iolab-status\"[^>]*")));
  std::string status = m.str();
  EXPECT_NE(status.find("data-errors=\"0\""), std::string::npos) << run.out.substr(run.out.find("iolab-errors"), 1500);
  std::smatch charts, rendered;
  ASSERT_TRUE(std::regex_search(status, charts, std::regex("data-charts=\"(\\d+)\"")));
  ASSERT_TRUE(std::regex_search(status, rendered, std::regex("data-rendered=\"(\\d+)\"")));
  EXPECT_EQ(charts[1], rendered[1]);
  EXPECT_GE(std::stoi(charts[1]), min_charts);
  EXPECT_EQ(run.err.find(":CONSOLE("), std::string::npos) << run.err;
}

}  // namespace iolab::testing
