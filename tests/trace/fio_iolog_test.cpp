// fio's iologs (v2, v3; samples/*.iolog) as traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/import.h"
#include "iolab/trace/trace.h"

namespace iolab::trace {
namespace {

const std::filesystem::path kIologs = std::filesystem::path(__FILE__).parent_path() / "samples";

struct Imported {
  Header header;
  std::vector<Op> ops;
  ImportSummary summary;
};

Imported import_text(const std::string& text) {
  std::istringstream in(text);
  std::ostringstream out;
  Imported r;
  r.summary = fio_iolog_to_trace(in, "t.iolog", out);
  std::istringstream back(out.str());
  Reader reader(back, "imported");
  r.header = reader.header();
  Op op;
  while (reader.next(op)) r.ops.push_back(op);
  return r;
}

Imported import_file(const std::string& name) {
  std::ifstream in(kIologs / name);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << (kIologs / name);
  return import_text(s.str());
}

std::string iolog_refusal(const std::string& text) {
  try {
    import_text(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(FioIolog, Version2FilesActionsAndSyncs) {
  const Imported r = import_file("v2.iolog");
  EXPECT_EQ(r.header.source, "fio-iolog-v2");
  ASSERT_EQ(r.header.files.size(), 2u);
  EXPECT_EQ(r.header.files[0].initial_size, 4096u);   // the furthest byte written
  EXPECT_EQ(r.header.files[1].initial_size, 12288u);  // read: 8192 + 4096
  const std::vector<Op> expected{
      {0, 0, 0, OpKind::Open, 0, 0, 0},          {0, 0, 1, OpKind::Open, 0, 0, 0},
      {0, 0, 0, OpKind::Write, 0, 4096, kPositional}, {0, 0, 1, OpKind::Read, 8192, 4096, kPositional},
      {0, 0, 0, OpKind::Fsync, 0, 0, 0},         {0, 0, 1, OpKind::Fdatasync, 0, 0, 0},
      {0, 0, 0, OpKind::Close, 0, 0, 0},         {0, 0, 1, OpKind::Close, 0, 0, 0},
  };
  EXPECT_EQ(r.ops, expected);
  EXPECT_EQ(r.summary.ignored, 2u);  // the trim and the wait
}

TEST(FioIolog, Version3TimesAreMicrosecondsKeptInOrder) {
  const Imported r = import_file("v3.iolog");
  EXPECT_EQ(r.header.source, "fio-iolog-v3");
  ASSERT_EQ(r.ops.size(), 5u);
  EXPECT_EQ(r.ops[0].time_ns, 872000u);
  EXPECT_EQ(r.ops[1].time_ns, 878000u);
  EXPECT_EQ(r.ops[2].time_ns, 888000u);
  EXPECT_EQ(r.ops[3].time_ns, 888000u);  // issued at 885, logged after 888: not back in time
  EXPECT_EQ(r.ops[3].kind, OpKind::Read);
  EXPECT_EQ(r.ops[4].time_ns, 10001677000u);
  EXPECT_EQ(r.header.files.at(0).initial_size, 32768u);
}

TEST(FioIolog, MalformedLogsAreRefusedNamingTheLineAndCause) {
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases{
      {"fio version 1 iolog\n", "t.iolog line 1: not a fio iolog of version 2 or 3"},
      {"fio version 2 iolog\n/a open\n", "line 2: file '/a' was never added"},
      {"fio version 2 iolog\n/a add\n/a add\n", "line 3: file '/a' is added twice"},
      {"fio version 2 iolog\n/a add\n/a erase 0 1\n", "line 3: unknown action 'erase'"},
      {"fio version 2 iolog\n/a add\n/a reopen\n", "line 3: unknown file action 'reopen'"},
      {"fio version 2 iolog\n/a add\n/a read x 1\n", "line 3: offset 'x' is not a whole number"},
      {"fio version 2 iolog\n/a add\n/a read 0\n", "line 3: expected 'FILE ACTION' or 'FILE ACTION OFFSET LENGTH'"},
      {"fio version 3 iolog\n1 /a add\n-1 /a open\n", "line 3: time '-1' is not a whole number"},
      {"fio version 3 iolog\n1 /a add\n2 /a write 4611686018427387904 0\n", "line 3: offset 4611686018427387904 + length 0 is not below 2^62"},
      {"fio version 2 iolog\n" + std::string(5000, 'a') + "\n", "line 2: line longer than 4096 bytes"},
  };
  for (const Case& c : cases) {
    const std::string message = iolog_refusal(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.text.substr(0, 80) << "\nmessage: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(iolog_refusal("").find("t.iolog"), std::string::npos);
}

}  // namespace
}  // namespace iolab::trace
