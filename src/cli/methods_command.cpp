// `iolab methods`: every file and copy method, what it is, and whether it
// can run here (probed in a scratch directory on the filesystem to be measured).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "app.h"
#include "iolab/base/error.h"
#include "iolab/base/text_table.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"

namespace iolab::cli {

namespace {

void add_methods_command(CLI::App& app, Action& action) {
  struct Options {
    bool json = false;
    std::string dir;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("methods", "List the access and copy methods and whether each can run here");
  cmd->add_flag("--json", opts->json, "Print a JSON array instead of a table");
  cmd->add_option("--dir", opts->dir, "Probe the filesystem of this directory (default: $TMPDIR or /tmp)");
  cmd->footer("Example:\n  iolab methods --dir /mnt/nvme --json");
  cmd->callback([opts, &action] {
    action.run = [opts] {
      io::ScratchDir scratch(opts->dir);
      nlohmann::json out = nlohmann::json::array();
      auto add = [&](const auto& m, const char* kind) {
        io::Availability a = m.probe(scratch.path());
        out.push_back({{"name", m.name()},
                       {"kind", kind},
                       {"available", a.available},
                       {"reason", a.available ? nlohmann::json(nullptr) : nlohmann::json(a.reason)},
                       {"description", m.description()}});
      };
      for (const auto* m : io::file_methods()) add(*m, "file");
      for (const auto* m : io::copy_methods()) add(*m, "copy");
      if (opts->json) {
        fmt::print("{}\n", out.dump(2));
        return 0;
      }
      using A = TextTable::Align;
      TextTable table({A::Left, A::Left, A::Left, A::Left});
      table.add({"METHOD", "KIND", "AVAILABLE", "DESCRIPTION"});
      for (const auto& m : out) {
        table.add({m["name"].get<std::string>(), m["kind"].get<std::string>(), m["available"].get<bool>() ? "yes" : "no",
                   m["description"].get<std::string>()});
        // Under the description, not widening the columns.
        if (!m["reason"].is_null())
          table.add({"", "", "", "why not: " + printable(m["reason"].get<std::string>())}, false);
      }
      fmt::print("{}", table.render());
      fmt::print("\nprobed in {} (filesystem of the scratch directory)\n",
                 opts->dir.empty() ? "$TMPDIR or /tmp" : printable(opts->dir));
      return 0;
    };
  });
}

const CommandRegistration methods_registration{10, add_methods_command};

}  // namespace
}  // namespace iolab::cli
