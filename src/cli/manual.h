// Internal: iolab's man pages and shell completions, written from the same
// CLI::App that main() parses (build_app), so that they cannot name an option
// the parser lacks or miss one it has. Run at build time by iolab-docgen.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>

namespace iolab::cli {

// Writes, under out_dir: man1/iolab.1 and man1/iolab-<command>.1 (one per
// command; the old man1/ is replaced), bash-completion/iolab, zsh/_iolab.
void write_manual(const CLI::App& app, const std::filesystem::path& out_dir);

}  // namespace iolab::cli
