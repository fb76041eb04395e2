#include "app.h"

#include <algorithm>
#include <new>
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

namespace {

// An option given an empty value (--method '') is a slip, not "the
// default": refused before any command runs, whatever the option.
void reject_empty_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;  // not given, or a flag
    for (const std::string& value : opt->results())
      if (value.empty())
        throw UsageError(opt->get_name() + " ''", "empty; give a value, or leave the option out for its default");
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name().empty() || sub->parsed()) reject_empty_values(*sub);  // option groups, and the command given
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"iolab: measure how the ways of moving bytes between a program and a file perform on this machine,\n"
               "explain why, and recommend one.",
               "iolab"};
  app.set_version_flag("--version", std::string("iolab ") + kVersion + " (" + kBuildType + ", " + kCompiler + ")");
  app.require_subcommand(1);
  app.footer("Examples:\n  iolab methods\n  iolab run --quick\n  iolab run --method pread,mmap --op read --bs 4k,1m --size 256m");

  Action action;
  app.parse_complete_callback([&app] { reject_empty_values(app); });
  std::sort(registry().begin(), registry().end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : registry()) add(app, action);

  // CLI11 says "a subcommand is required" for a misspelt one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) known |= sub->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "iolab: unknown command '%s' (see iolab --help)\n", printable(argv[1]).c_str());
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
      std::fprintf(stderr, "iolab: unknown option '%s' (see iolab --help)\n", printable(rest.front()).c_str());
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
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "iolab: out of memory (std::bad_alloc)\n");
    return 1;
  } catch (const std::exception& e) {  // iolab::Error, and what libraries throw
    // A write that failed because a signal is ending the process (SIGPIPE)
    // is not the story: the signal's cleanup is, and it ends the process.
    if (io::interrupting_signal() != 0) io::wait_for_signal_cleanup();
    std::fprintf(stderr, "iolab: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}

}  // namespace iolab::cli
