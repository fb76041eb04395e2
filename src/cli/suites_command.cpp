// `iolab suites`: the registered suites, the seed each reproduces, and what it measures.
#include <fmt/core.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "app.h"
#include "iolab/base/text_table.h"
#include "iolab/suites/suite.h"

namespace iolab::cli {

namespace {

void add_suites_command(CLI::App& app, Action& action) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("suites", "List the suites `iolab run` can run, with the seed each reproduces");
  cmd->add_flag("--json", *json, "Print a JSON array of {name, seed, description}");
  cmd->footer("Example:\n  iolab suites\n  iolab run seq-read --scale quick");
  cmd->callback([json, &action] {
    action.run = [json] {
      auto all = suites::all_suites();
      if (*json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto* s : all) out.push_back({{"name", s->name()}, {"seed", s->seed()}, {"description", s->description()}});
        fmt::print("{}\n", out.dump(2));
        return 0;
      }
      if (all.empty()) {
        fmt::print("No suites are registered in this build; `iolab run --method ...` runs a custom matrix.\n");
        return 0;
      }
      using A = TextTable::Align;
      TextTable table({A::Left, A::Left, A::Left});
      table.add({"SUITE", "SEED", "WHAT IT MEASURES"});
      for (const auto* s : all) table.add({std::string(s->name()), std::string(s->seed()), std::string(s->description())});
      fmt::print("{}", table.render());
      // Which suites the default group leaves out comes from the registry, not from this text.
      const auto seeds = suites::seed_suites();
      std::string outside;
      for (const auto* s : all)
        if (std::find(seeds.begin(), seeds.end(), s) == seeds.end()) outside += (outside.empty() ? "" : ", ") + std::string(s->name());
      fmt::print("\n'seeds' runs every suite above{}; `iolab run` with no suite runs it.\n",
                 outside.empty() ? std::string() : " except " + outside + " (run those by name)");
      return 0;
    };
  });
}

const CommandRegistration suites_registration{30, add_suites_command};

}  // namespace
}  // namespace iolab::cli
