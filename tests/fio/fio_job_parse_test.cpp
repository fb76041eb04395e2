// fio job files as fio reads them: sections, [global], include, ${VAR} and
// keywords, line numbers in errors, and limits on the input.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/fio/job.h"
#include "fio_job_fixtures.h"

namespace iolab::fio {
namespace {

using testing::FakeWorld;
using testing::FioMapTest;
using testing::parse;
using testing::refusal;

// ---- parsing ---------------------------------------------------------------

TEST(FioParse, SectionsOptionsAndLines) {
  FioJobFile f = parse("; a comment\n[global]\nrw=read ; inline comment\n\n# another\n[job1]\nbs=4k\ntime_based\n");
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_TRUE(f.sections[0].global);
  EXPECT_EQ(f.sections[0].place, (FioPlace{"dir/job.fio", 2}));
  ASSERT_EQ(f.sections[0].options.size(), 1u);
  EXPECT_EQ(f.sections[0].options[0].key, "rw");
  EXPECT_EQ(f.sections[0].options[0].value, "read");
  EXPECT_EQ(f.sections[0].options[0].place.line, 3u);
  EXPECT_FALSE(f.sections[1].global);
  EXPECT_EQ(f.sections[1].name, "job1");
  ASSERT_EQ(f.sections[1].options.size(), 2u);
  EXPECT_EQ(f.sections[1].options[1].key, "time_based");
  EXPECT_FALSE(f.sections[1].options[1].value.has_value());
  EXPECT_EQ(f.sections[1].options[1].place.line, 8u);
}

TEST(FioParse, GlobalIsAnyNameStartingWithGlobal) {
  // fio compares the first six characters only.
  FioJobFile f = parse("[global-two]\nrw=read\n[job]\n");
  EXPECT_TRUE(f.sections[0].global);
}

TEST(FioParse, OptionOutsideASectionNamesTheLine) {
  std::string e = refusal([] { parse("\nrw=read\n[job]\n"); });
  EXPECT_NE(e.find("dir/job.fio:2"), std::string::npos) << e;
  EXPECT_NE(e.find("outside of a [section]"), std::string::npos) << e;
}

TEST(FioParse, IncludeSplicesOptionsWhereItStands) {
  FakeWorld w;
  w.files["dir/common.fio"] = "ioengine=libaio\niodepth=4\n";
  FioJobFile f = parse("[job]\nrw=read\ninclude common.fio\nbs=8k\n", w);
  ASSERT_EQ(f.sections[0].options.size(), 4u);
  EXPECT_EQ(f.sections[0].options[1].key, "ioengine");
  EXPECT_EQ(f.sections[0].options[1].place, (FioPlace{"dir/common.fio", 1}));
  EXPECT_EQ(f.sections[0].options[3].key, "bs");
}

TEST(FioParse, IncludeAsWrittenWinsOverBesideTheFile) {
  FakeWorld w;
  w.files["common.fio"] = "iodepth=1\n";
  w.files["dir/common.fio"] = "iodepth=2\n";
  FioJobFile f = parse("[job]\ninclude common.fio\n", w);
  EXPECT_EQ(f.sections[0].options[0].value, "1");  // fio tries the working directory first
}

TEST(FioParse, IncludeRefusals) {
  FakeWorld w;
  w.files["dir/section.fio"] = "[other]\n";
  w.files["dir/a.fio"] = "include b.fio\n";
  w.files["dir/b.fio"] = "include a.fio\n";
  w.files["dir/self.fio"] = "include self.fio\n";
  std::string e = refusal([&] { parse("[job]\ninclude section.fio\n", w); });
  EXPECT_NE(e.find("dir/section.fio:1"), std::string::npos) << e;
  EXPECT_NE(e.find("[section] in an included file"), std::string::npos) << e;
  e = refusal([&] { parse("[job]\ninclude a.fio\n", w); });
  EXPECT_NE(e.find("include loop"), std::string::npos) << e;
  EXPECT_NE(e.find("dir/b.fio:1"), std::string::npos) << e;
  e = refusal([&] { parse("[job]\ninclude self.fio\n", w); });
  EXPECT_NE(e.find("include loop"), std::string::npos) << e;
  e = refusal([&] { parse("[job]\n\ninclude missing.fio\n", w); });
  EXPECT_NE(e.find("dir/job.fio:3"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.fio"), std::string::npos) << e;
  e = refusal([&] { parse("include a.fio\n[job]\n", w); });
  EXPECT_NE(e.find("outside of a [section]"), std::string::npos) << e;
}

TEST(FioParse, DeepIncludeNestingIsRefused) {
  FakeWorld w;
  for (unsigned i = 0; i < 40; ++i) w.files["dir/n" + std::to_string(i) + ".fio"] = "include n" + std::to_string(i + 1) + ".fio\n";
  std::string e = refusal([&] { parse("[job]\ninclude n0.fio\n", w); });
  EXPECT_NE(e.find("nested deeper than " + std::to_string(kFioMaxIncludeDepth)), std::string::npos) << e;
}

TEST(FioParse, IncludedTextAddsUpToTheTotalLimit) {
  FakeWorld w;
  std::string big;
  while (big.size() + 64 < kFioMaxFileBytes) big += "; a comment line that takes some room in the included file\n";
  w.files["dir/big.fio"] = big;
  std::string job = "[job]\n";
  for (unsigned i = 0; i < 10; ++i) job += "include big.fio\n";
  std::string e = refusal([&] { parse(job, w); });
  EXPECT_NE(e.find("exceed"), std::string::npos) << e;
}

TEST(FioParse, EnvironmentAndKeywords) {
  FakeWorld w;
  w.env["SIZE"] = "64m";
  FioJobFile f = parse("[job]\nsize=${SIZE}\nfilename=a${UNSET}b\nbs=$pagesize\nnumjobs=$ncpus\niodepth=$mb_memory\n", w);
  const auto& o = f.sections[0].options;
  EXPECT_EQ(o[0].value, "64m");
  EXPECT_EQ(o[1].value, "ab");  // unset: the empty string, as fio
  EXPECT_EQ(o[2].value, "4096");
  EXPECT_EQ(o[3].value, "2");
  EXPECT_EQ(o[4].value, "2048");
  EXPECT_EQ(o[0].text, "size=${SIZE}");  // the record keeps what was written
}

TEST(FioParse, ABareDollarNameStaysAsWritten) {
  // As fio: only ${NAME} is the environment; filename_format's $jobnum is fio's own.
  FakeWorld w;
  w.env["SIZE"] = "64m";
  EXPECT_EQ(parse("[job]\nsize=$SIZE\nfilename_format=f.$jobnum\n", w).sections[0].options[0].value, "$SIZE");
}

TEST(FioParse, ArithmeticAndUnterminatedVariablesAreRefused) {
  std::string e = refusal([] { parse("[job]\n\nsize=8*$mb_memory\n"); });
  EXPECT_NE(e.find("dir/job.fio:3"), std::string::npos) << e;
  EXPECT_NE(e.find("arithmetic"), std::string::npos) << e;
  e = refusal([] { parse("[job]\nsize=(1+2)*4k\n"); });
  EXPECT_NE(e.find("arithmetic"), std::string::npos) << e;
  e = refusal([] { parse("[job]\nsize=${SIZE\n"); });
  EXPECT_NE(e.find("without its '}'"), std::string::npos) << e;
}

TEST(FioParse, LimitsOnInput) {
  EXPECT_NE(refusal([] { parse("[job]\nname=" + std::string(kFioMaxLineBytes, 'x') + "\n"); }).find("longer than"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse(std::string("[job]\nrw=read\0x\n", 15)); }).find("NUL"), std::string::npos);
  EXPECT_NE(refusal([] { parse(std::string(kFioMaxFileBytes + 1, '\n')); }).find("larger than"), std::string::npos);
  EXPECT_NE(refusal([] { read_fio_text("/dev/zero"); }).find("not a regular file"), std::string::npos);
  // Names and options go into the results' JSON: UTF-8 only (found by fuzz/fio_job_fuzz).
  EXPECT_NE(refusal([] { parse("[global]\nname=f\x99\x90\n[j]\n"); }).find("dir/job.fio:2: not UTF-8"), std::string::npos);
  EXPECT_EQ(parse("[j]\nname=\xc2\xb5s \xe2\x80\xa6\n").sections[0].options[0].value, "\xc2\xb5s \xe2\x80\xa6");
  FakeWorld w;
  w.env["BAD"] = "\xff";
  EXPECT_NE(refusal([&] { parse("[j]\nname=${BAD}\n", w); }).find("not UTF-8"), std::string::npos);
  w.env["BIG"] = std::string(1 << 20, 'x');
  std::string many;
  for (unsigned i = 0; i < 1000; ++i) many += "${BIG}";
  EXPECT_NE(refusal([&] { parse("[j]\nname=" + many + "\n", w); }).find("once expanded"), std::string::npos);
  EXPECT_NE(refusal([] { parse_fio_job("[j]\n", "bad\xff.fio", FakeWorld().context()); }).find("not UTF-8"), std::string::npos);
  EXPECT_NE(refusal([] { read_fio_text("/nonexistent/job.fio"); }).find("cannot be read"), std::string::npos);
}

}  // namespace
}  // namespace iolab::fio
