#include "app.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "iolab/error.h"
#include "iolab/io/scratch.h"
#include "iolab/units.h"
#include "iolab/version.h"

namespace iolab::cli {
namespace {

std::vector<std::pair<int, AddCommand>>& registry() {
  static std::vector<std::pair<int, AddCommand>> commands;
  return commands;
}

}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommand add) { registry().emplace_back(order, add); }

std::vector<std::uint64_t> parse_size_list(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    out.push_back(parse_size(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int main(int argc, char** argv) {
  CLI::App app{"iolab: measure how the ways of moving bytes between a program and a file perform on this machine,\n"
               "explain why, and recommend one.",
               "iolab"};
  app.set_version_flag("--version", std::string("iolab ") + kVersion + " (" + kBuildType + ", " + kCompiler + ")");
  app.require_subcommand(1);
  app.footer("Examples:\n  iolab methods\n  iolab run --quick\n  iolab run --method pread,mmap --op read --bs 4k,1m --size 256m");

  Action action;
  std::sort(registry().begin(), registry().end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : registry()) add(app, action);

  // CLI11 says "a subcommand is required" for a misspelt one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) known |= sub->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "iolab: unknown command '%s' (see iolab --help)\n", argv[1]);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a missing subcommand before an unknown option, so
    // "iolab --frobnicate" would not name --frobnicate.
    if (auto rest = app.remaining(); !rest.empty() && rest.front().starts_with('-')) {
      std::fprintf(stderr, "iolab: unknown option '%s' (see iolab --help)\n", rest.front().c_str());
      return 2;
    }
    std::fprintf(stderr, "iolab: %s (see iolab --help)\n", one_line(e.what()).c_str());
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "iolab: %s\n", e.what());
    return 2;
  }

  io::remove_scratch_dirs_on_signals();
  try {
    return action ? action() : 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "iolab: %s\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "iolab: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "iolab: %s\n", e.what());
    return 1;
  }
}

}  // namespace iolab::cli
