// iolab-docgen OUT_DIR: the man pages and completions of iolab (manual.h),
// generated at build time and installed; not installed itself.
#include <cstdio>

#include "app.h"
#include "manual.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: iolab-docgen OUT_DIR\n");
    return 2;
  }
  try {
    CLI::App app;
    iolab::cli::Action action;
    iolab::cli::build_app(app, action);
    iolab::cli::write_manual(app, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "iolab-docgen: %s\n", e.what());
    return 1;
  }
  return 0;
}
