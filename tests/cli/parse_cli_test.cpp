// The command lines' parsers in process (cli/app.h parse_command_line,
// cli/mpi_command_line.h parse_mpi_command_line), as the programs and the
// fuzz target (fuzz/cli_args_fuzz.cpp) call them: a bad command line is a
// one-line UsageError naming the option; parsing reads no file (what needs
// one is the runner's); accepted options pass the runner's recheck.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "internal/cli/app.h"
#include "internal/cli/mpi_command_line.h"
#include "iolab/base/error.h"

namespace {

using iolab::UsageError;
using iolab::cli::parse_command_line;
using iolab::cli::parse_mpi_command_line;
using iolab::cli::ParsedCommandLine;
using iolab::cli::ParsedMpiCommandLine;
using Args = std::vector<std::string>;

// The UsageError's message, or "" when parsing accepted the words.
template <typename Parse>
std::string parse_refusal_of(Parse parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string iolab_refusal(const Args& args) {
  return parse_refusal_of([&] { (void)parse_command_line(args); });
}

std::string mpi_refusal(const Args& args, unsigned ranks = 2) {
  return parse_refusal_of([&] { (void)parse_mpi_command_line(args, ranks); });
}

TEST(ParseCommandLine, ABadCommandLineIsOneUsageErrorNamingTheOption) {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"run", "--reps", "0"}, "--reps"},
      {{"run", "--min-time", "nan"}, "--min-time"},
      {{"run", "--dir", ""}, "--dir ''"},
      {{"run", "--method", "pread", "--ops", "16", "--size", "64k"}, "--ops with --size"},
      {{"run", "--method", "pread", "--job", "j.toml"}, "--job"},
      {{"run", "--fio", "j.fio", "--method", "pread"}, "--fio"},
      {{"run", "--fio-set", "size=1m"}, "--fio-set"},
      {{"run", "--quick", "--scale", "full"}, "--quick with --scale full"},
      {{"run", "seq-read", "--threads", "4"}, "--threads"},
      {{"run", "parallel", "--scale", "tiny", "--threads", "100000"}, "--threads"},
      {{"run", "--method", "pread", "--warmup", "0"}, "--warmup 0"},
      {{"crosscheck", "--max-time", "nan"}, "--max-time"},
      {{"crosscheck", "--seed", "-1"}, "--seed"},
      {{"crosscheck", "--fio", "j.fio", "--bs", "4k"}, "--fio"},
      {{"recommend", "--budget", "0"}, "--budget"},
      {{"recommend", "r.json", "--save", "s.json"}, "--save"},
      {{"recommend", "--first-stage", "9", "--max-rounds", "6"}, "--max-rounds"},
      {{"recommend", "--first-stage", "1"}, "--first-stage"},
      {{"recommend", "--indifference", "1"}, "--indifference"},
      {{"recommend", "--indifference", "0.9"}, "--indifference"},
      {{"recommend", "--confidence", "1"}, "--confidence"},
      {{"recommend", "--confidence", "0.4"}, "--confidence"},
      {{"recommend", "--cache", "hot"}, "--cache hot"},
      {{"recommend", "--op", "read", "--cache", "buffered"}, "--cache"},
      {{"recommend", "--flush", "sometimes"}, "--flush sometimes"},
      {{"recommend", "--bs", "0"}, "--bs 0"},
      {{"recommend", "--max-file", "1k"}, "--max-file"},
      {{"report", "a.json", "-o", "a.txt"}, "-o a.txt"},
      {{"compare", "a.json"}, "B"},
      // An empty word CLI11 would take for the option group, then loop on -x (fuzz/cli_args_fuzz).
      {{"crosscheck", "", "-x"}, "not expected: ''"},
      {{"--", "crosscheck", "", "-x"}, "not expected: ''"},  // the same loop with the command second
      {{"crosscheck", "--dir", ""}, "--dir ''"},
  };
  for (const auto& [args, names] : cases) {
    const std::string what = iolab_refusal(args);
    SCOPED_TRACE(args.front() + (args.size() > 1 ? " " + args[1] : ""));
    EXPECT_NE(what.find(names), std::string::npos) << "'" << what << "' does not name " << names;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// Files named on the command line are the runner's to read or check: a
// missing job file, results file or output directory is not parsing's business.
TEST(ParseCommandLine, ParsingReadsNoFileAndItsOptionsPassTheRunnersRecheck) {
  const std::string missing = "/nonexistent-iolab-parse-test";
  ASSERT_FALSE(std::filesystem::exists(missing));
  const std::vector<Args> accepted = {
      {"run", "--job", missing + "/j.toml", "--reps", "3"},
      {"run", "--fio", missing + "/j.fio", "--fio-set", "size=64m"},
      {"run", "--method", "pread,mmap", "--bs", "4k,1m", "--size", "1g", "--out", missing + "/r.json"},
      {"run", "--method", "pread", "--ops", "16", "--bs", "4k"},
      {"run", "parallel", "--scale", "quick", "--threads", "1,2", "--reps", "5"},
      {"run", "--quick"},
      {"report", missing + "/a.json", "-o", missing + "/r.html"},
      {"compare", missing + "/a.json", missing + "/b.json"},
      {"recommend", missing + "/r.json", "--json"},
      {"recommend", "--save", missing + "/s.json", "--budget", "300"},
      {"crosscheck", "--out", missing + "/c.json", "--fio-program", missing + "/fio"},
      {"crosscheck", "--fio", missing + "/j.fio"},
      {"methods", "--dir", missing},
      {"suites", "--json"},
  };
  for (const auto& args : accepted) {
    SCOPED_TRACE(args.front() + " " + (args.size() > 1 ? args[1] : ""));
    ParsedCommandLine parsed;
    ASSERT_NO_THROW(parsed = parse_command_line(args));
    EXPECT_EQ(parsed.kind, ParsedCommandLine::Kind::Command);
    EXPECT_EQ(parsed.command, args.front());
    EXPECT_TRUE(static_cast<bool>(parsed.action));
    if (parsed.action.recheck) {
      EXPECT_NO_THROW(parsed.action.recheck());
    }
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(ParseCommandLine, HelpAndVersionAreTextToPrint) {
  ParsedCommandLine version = parse_command_line({"--version"});
  EXPECT_EQ(version.kind, ParsedCommandLine::Kind::Version);
  EXPECT_EQ(version.text.rfind("iolab ", 0), 0u) << version.text;
  ParsedCommandLine help = parse_command_line({"run", "--help"});
  EXPECT_EQ(help.kind, ParsedCommandLine::Kind::Help);
  EXPECT_NE(help.text.find("--method"), std::string::npos) << "run's own help";
  EXPECT_FALSE(static_cast<bool>(help.action));
}

TEST(ParseMpiCommandLine, ABadCommandLineIsOneUsageErrorNamingTheOption) {
  const std::vector<std::pair<Args, std::string>> cases = {
      {{"parallel", "--bs", "2g"}, "--bs 2g"},
      {{"parallel", "--bs", "0"}, "--bs 0"},
      {{"parallel", "--min-time", "nan"}, "--min-time"},
      {{"parallel", "--min-time", "-1"}, "--min-time"},
      {{"parallel", "--dir", ""}, "--dir ''"},
      {{"parallel", "--out", ""}, "--out ''"},
      {{"parallel", "--layout", "striped"}, "--layout striped"},
      {{"parallel", "--method", "posix,bogus"}, "--method bogus"},
      {{"parallel", "--reps", "0"}, "--reps"},
      {{"parallel", "--frobnicate"}, "--frobnicate"},
      {{}, "command line"},
  };
  for (const auto& [args, names] : cases) {
    const std::string what = mpi_refusal(args);
    SCOPED_TRACE(args.empty() ? std::string("(nothing)") : args.back());
    EXPECT_NE(what.find(names), std::string::npos) << "'" << what << "' does not name " << names;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // The total of every rank's region must fit a file offset: 4 ranks x 2^62 bytes does not.
  EXPECT_NE(mpi_refusal({"parallel", "--size", "4611686018427387904"}, 4).find("overflows"), std::string::npos);
  EXPECT_EQ(mpi_refusal({"parallel", "--size", "4611686018427387904"}, 1), "");
}

TEST(ParseMpiCommandLine, AcceptedSettingsAreParsedAndPassTheRecheck) {
  ParsedMpiCommandLine p = parse_mpi_command_line(
      {"parallel", "--size", "64m", "--bs", "4m", "--layout", "per-rank", "--method", "posix,mpiio", "--out", "r.json"}, 4);
  ASSERT_EQ(p.kind, ParsedMpiCommandLine::Kind::Command);
  EXPECT_EQ(p.settings.region, 64u << 20);
  EXPECT_EQ(p.settings.bs, 4u << 20);
  EXPECT_FALSE(p.settings.shared);
  EXPECT_EQ(p.settings.methods, (std::vector<std::string>{"posix", "mpiio"}));
  EXPECT_NO_THROW(iolab::cli::recheck_mpi_settings(p.settings, 4));
  EXPECT_EQ(parse_mpi_command_line({"--version"}, 1).kind, ParsedMpiCommandLine::Kind::Version);
  ParsedMpiCommandLine help = parse_mpi_command_line({"parallel", "--help"}, 1);
  EXPECT_EQ(help.kind, ParsedMpiCommandLine::Kind::Help);
  EXPECT_NE(help.text.find("--layout"), std::string::npos);
}

}  // namespace
