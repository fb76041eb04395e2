// The report's files: results read with one-line errors, the report written
// atomically (a full disk leaves no truncated page and no temporary file).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "io/io_test_support.h"
#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/report/exporter.h"
#include "iolab/report/files.h"
#include "iolab/report/html.h"
#include "iolab/testing/files.h"
#include "synthetic.h"

namespace iolab::report {
namespace {

namespace fs = std::filesystem;

using testing::names_in;

TEST(AtomicWrite, ReplacesTheFileAndLeavesNothingElse) {
  io::ScratchDir scratch;
  fs::path out = scratch.path() / "sub" / "report.md";
  const std::string mark = "<!-- iolab results (Markdown) -->\n";
  write_file_atomically(out, mark + "first", markdown_exporter());
  EXPECT_EQ(testing::read_file(out), mark + "first");
  write_file_atomically(out, mark + "second, longer", markdown_exporter());  // iolab's own: replaced
  EXPECT_EQ(testing::read_file(out), mark + "second, longer");
  EXPECT_EQ(names_in(out.parent_path()), std::vector<std::string>{"report.md"});
  fs::remove_all(scratch.path() / "sub");
}

// A symlink at the output path is neither written through nor replaced
// (the ownership rule of run --out), and neither is a user's own page.
TEST(AtomicWrite, NeverReplacesALinkOrAUsersOwnPage) {
  io::ScratchDir scratch;
  fs::path target = scratch.create_file("not-ours.txt");
  std::ofstream(target) << "precious";
  fs::path link = scratch.path() / "report.html";
  fs::create_symlink(target, link);
  auto e = testing::expect_error([&] { write_file_atomically(link, "page", html_exporter()); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->error_number(), EEXIST) << e->what();
  EXPECT_EQ(testing::read_file(target), "precious");
  EXPECT_TRUE(fs::is_symlink(link));
  fs::remove(link);
  fs::path mine = scratch.path() / "mine.html";
  std::ofstream(mine) << "<!DOCTYPE html><title>my page</title>";
  EXPECT_TRUE(testing::expect_error([&] { write_file_atomically(mine, "page", html_exporter()); }));
  EXPECT_EQ(testing::read_file(mine), "<!DOCTYPE html><title>my page</title>");
  fs::remove(mine);
}

TEST(AtomicWrite, ADirectoryInTheWayIsAnErrorNamingIt) {
  io::ScratchDir scratch;
  fs::path dir = scratch.path() / "report.html";
  fs::create_directory(dir);
  try {
    write_file_atomically(dir, "page", html_exporter());
    ADD_FAILURE() << "wrote over a directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
    EXPECT_EQ(e.error_number(), EISDIR) << e.what();
  }
  EXPECT_EQ(names_in(scratch.path()), std::vector<std::string>{"report.html"});
  fs::remove(dir);
}

// Issue 14 #13: a report write that hit ENOSPC left a truncated .html. Now
// the page is complete or absent, an older page survives, and no temporary
// file is left behind.
TEST(AtomicWrite, AFullDiskLeavesTheOldReportAndNoTemporaryFile) {
  io::ScratchDir scratch;
  testing::TmpfsMount small(scratch.path(), "size=256k");
  if (!small.mounted()) GTEST_SKIP() << small.why_not();
  fs::path out = small.dir() / "report.html";
  results::Results rs = testing::realistic();
  for (bool existing : {false, true}) {
    SCOPED_TRACE(existing ? "over an older report" : "a new report");
    if (existing) write_file_atomically(out, "<!DOCTYPE html>older report", html_exporter());
    try {
      write_html_report({rs}, out);  // about 1 MiB: more than the filesystem holds
      ADD_FAILURE() << "a 1 MiB page fit in 256 KiB";
    } catch (const Error& e) {
      EXPECT_EQ(e.error_number(), ENOSPC) << e.what();
      EXPECT_NE(std::string(e.what()).find(out.string()), std::string::npos) << e.what();
    }
    if (existing) {
      EXPECT_EQ(names_in(small.dir()), std::vector<std::string>{"report.html"});
      EXPECT_EQ(testing::read_file(out), "<!DOCTYPE html>older report");
    } else {
      EXPECT_TRUE(names_in(small.dir()).empty());
    }
  }
}

TEST(ReadResults, ADirectoryIsOneLineNamingPathAndCause) {
  io::ScratchDir scratch;
  try {
    read_results_file(scratch.path());
    ADD_FAILURE() << "read a directory";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "read results " + scratch.path().string() + ": Is a directory");
  }
  fs::path fifo = scratch.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_results_file(fifo);  // would block forever if opened
    ADD_FAILURE() << "read a FIFO";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "read results " + fifo.string() + ": not a regular file");
  }
  fs::remove(fifo);
}

TEST(ReportOutput, MustBeHtmlAndNotAnInput) {
  io::ScratchDir scratch;
  fs::path in = scratch.create_file("run.json");
  EXPECT_THROW(check_report_output(in, {in}), UsageError);
  EXPECT_THROW(check_report_output(scratch.path() / "report.txt", {in}), UsageError);
  fs::path html_in = scratch.create_file("results.html");
  EXPECT_THROW(check_report_output(html_in, {in, html_in}), UsageError);
  fs::path dotted = scratch.path() / "." / "results.html";
  EXPECT_THROW(check_report_output(dotted, {html_in}), UsageError);
  EXPECT_NO_THROW(check_report_output(scratch.path() / "report.HTML", {in}));
  EXPECT_NO_THROW(check_report_output(scratch.path() / "new" / "report.html", {in}));
}

}  // namespace
}  // namespace iolab::report
