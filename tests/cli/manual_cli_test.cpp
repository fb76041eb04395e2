// The man pages and completions (generated at build time into <build>/manual
// by iolab-docgen) against what the built iolab's --help says: every command
// has its page and is completed, and every option of every command is in its
// page and in both completions. They are generated from the parser's own
// definitions; this catches a generator that skips a kind of option (an
// option group, a short name) or a page set that went stale.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli/run_program.h"

namespace {

using iolab::testing::read_file;
using iolab::testing::run_iolab;

const std::string kManual = IOLAB_BINARY_DIR "/manual";

// The commands listed under "Subcommands:" in iolab --help.
std::vector<std::string> commands() {
  auto o = run_iolab({"--help"});
  std::vector<std::string> out;
  std::istringstream in(o.out);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Subcommands:")) listing = true;
    else if (listing && line.empty()) break;
    else if (listing) {
      std::string word;
      std::istringstream(line) >> word;
      out.push_back(word);
    }
  }
  return out;
}

// The option names --help lists (each option line starts with its names).
std::set<std::string> options_in_help(const std::vector<std::string>& args) {
  auto o = run_iolab(args);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::set<std::string> out;
  static const std::regex option_line(R"(^\s+((-[A-Za-z0-9]|--[a-z0-9][a-z0-9-]*)(,\s*(-[A-Za-z0-9]|--[a-z0-9][a-z0-9-]*))*))");
  static const std::regex name(R"(--?[A-Za-z0-9][a-z0-9-]*)");
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, option_line)) continue;
    std::string names = m[1];
    for (auto it = std::sregex_iterator(names.begin(), names.end(), name); it != std::sregex_iterator(); ++it) out.insert(it->str());
  }
  return out;
}

// roff writes a hyphen as \-.
std::string in_roff(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

bool names_option(const std::string& text, const std::string& option) {
  // Whole option names only: --dir must not be found as the start of --dirty.
  const std::regex whole("(^|[^A-Za-z0-9-])" + std::regex_replace(option, std::regex(R"([\\-])"), R"(\$&)") + "($|[^a-z0-9-])");
  return std::regex_search(text, whole);
}

TEST(Manual, EveryCommandHasAPageAndIsCompleted) {
  const auto cmds = commands();
  ASSERT_GE(cmds.size(), 7u);  // methods, run, suites, report, recommend, crosscheck, compare
  const std::string main_page = read_file(kManual + "/man1/iolab.1");
  const std::string bash = read_file(kManual + "/bash-completion/iolab");
  const std::string zsh = read_file(kManual + "/zsh/_iolab");
  ASSERT_FALSE(main_page.empty());
  for (const auto& c : cmds) {
    EXPECT_NE(main_page.find("\\fB" + in_roff(c) + "\\fR"), std::string::npos) << c;
    EXPECT_FALSE(read_file(kManual + "/man1/iolab-" + c + ".1").empty()) << "no page iolab-" << c << "(1)";
    EXPECT_NE(bash.find("    " + c + ")"), std::string::npos) << c;
    EXPECT_NE(zsh.find("'" + c + ":"), std::string::npos) << c;
  }
}

TEST(Manual, EveryOptionOfEveryCommandIsInItsPageAndCompletions) {
  const std::string bash = read_file(kManual + "/bash-completion/iolab");
  const std::string zsh = read_file(kManual + "/zsh/_iolab");
  auto check = [&](const std::vector<std::string>& help_args, const std::string& page) {
    const std::string roff = read_file(kManual + "/man1/" + page);
    const auto options = options_in_help(help_args);
    EXPECT_FALSE(options.empty()) << page;
    for (const auto& o : options) {
      // As an option's heading: bold, e.g. \fB\-\-dir\fR.
      EXPECT_NE(roff.find("\\fB" + in_roff(o) + "\\fR"), std::string::npos) << o << " missing from " << page;
      EXPECT_TRUE(names_option(bash, o)) << o << " missing from the bash completion";
      EXPECT_TRUE(names_option(zsh, o)) << o << " missing from the zsh completion";
    }
  };
  check({"--help"}, "iolab.1");
  for (const auto& c : commands()) check({c, "--help"}, "iolab-" + c + ".1");
}

// The extraction above must see options inside option groups (run's custom matrix).
TEST(Manual, HelpParsingSeesGroupedOptions) {
  const auto run = options_in_help({"run", "--help"});
  EXPECT_TRUE(run.count("--method")) << "--method";
  EXPECT_TRUE(run.count("--reps")) << "--reps";
  EXPECT_TRUE(run.count("--help")) << "--help";
}

}  // namespace
