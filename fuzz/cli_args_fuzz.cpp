// libFuzzer target for the command lines of `iolab` and `iolab-mpi`: the
// input is split into argv words at each newline (or NUL); a first word
// "iolab-mpi" parses the rest as iolab-mpi does for a job of 3 ranks (MPI
// not initialised: the parser needs none), anything else as iolab's words.
// Parsing either returns, or throws the project's UsageError with a one-line
// message: any other exception escapes and libFuzzer reports it, as it does
// a crash, a hang (-timeout) or a huge allocation (-rss_limit_mb). What it
// returns is help or version text, or options the runner accepts: the
// runner's rules, checked again from the parsed values (Action::recheck,
// recheck_mpi_settings), hold.
#include <cstdint>
#include <string>
#include <vector>

#include "internal/cli/app.h"
#include "internal/cli/mpi_command_line.h"
#include "fuzz_check.h"
#include "iolab/base/error.h"

using namespace iolab;

using iolab::fuzz::require;

namespace {

constexpr unsigned kRanks = 3;

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == '\n' || c == '\0') {
      words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// One line, naming something: what main() prints after "iolab: ".
void require_one_line(const UsageError& e) {
  const std::string what = e.what();
  require(!what.empty());
  require(what.find('\n') == std::string::npos);
}

void fuzz_iolab(const std::vector<std::string>& words) {
  cli::ParsedCommandLine parsed;
  try {
    parsed = cli::parse_command_line(words);
  } catch (const UsageError& e) {
    require_one_line(e);
    return;
  }
  if (parsed.kind != cli::ParsedCommandLine::Kind::Command) {
    require(!parsed.text.empty() && parsed.action.run == nullptr);
    return;
  }
  require(!parsed.command.empty());
  require(static_cast<bool>(parsed.action.run));
  if (!parsed.action.recheck) return;  // a command whose runner has no rule on its options
  try {
    parsed.action.recheck();
  } catch (const UsageError&) {
    require(false);  // accepted options the runner would refuse
  }
}

void fuzz_mpi(const std::vector<std::string>& words) {
  cli::ParsedMpiCommandLine parsed;
  try {
    parsed = cli::parse_mpi_command_line(words, kRanks);
  } catch (const UsageError& e) {
    require_one_line(e);
    return;
  }
  if (parsed.kind != cli::ParsedMpiCommandLine::Kind::Command) {
    require(!parsed.text.empty());
    return;
  }
  try {
    cli::recheck_mpi_settings(parsed.settings, kRanks);
  } catch (const UsageError&) {
    require(false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words = words_of(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!words.empty() && words.front() == "iolab-mpi") {
    words.erase(words.begin());
    fuzz_mpi(words);
  } else {
    if (!words.empty() && words.front() == "iolab") words.erase(words.begin());
    fuzz_iolab(words);
  }
  return 0;
}
