// `iolab run` (first version, until the harness lands): write then read a
// file with each available method, verify it, print MiB/s per method.
#include <fmt/core.h>

#include <chrono>

#include "app.h"
#include "iolab/error.h"
#include "iolab/io/buffer.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/units.h"

namespace iolab::cli {

namespace {

void add_run_command(CLI::App& app, Action& action) {
  struct Options {
    std::string size = "256m";
    std::string block = "1m";
    std::string dir;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Write then read a file with every available method and print MiB/s");
  cmd->add_option("--size", opts->size, "File size (default 256m)");
  cmd->add_option("--bs", opts->block, "Block size per call (default 1m)");
  cmd->add_option("--dir", opts->dir, "Parent of the scratch directory (default: $TMPDIR or /tmp)");
  cmd->footer("Example:\n  iolab run --size 64m --bs 4k");
  cmd->callback([opts, &action] {
    std::uint64_t size = parse_size(opts->size);
    std::uint64_t block = parse_size(opts->block);
    if (block == 0 || size == 0) throw UsageError("--size/--bs", "must be greater than zero");
    if (block % 4096 != 0) throw UsageError("--bs " + opts->block, "must be a multiple of 4k (O_DIRECT needs it)");
    action = [opts, size, block] {
      using clock = std::chrono::steady_clock;
      io::ScratchDir scratch(opts->dir);
      io::Buffer buf(block, io::BufferKind::Aligned);
      constexpr std::uint64_t kSeed = 42;
      fmt::print("{} file, {} blocks, aligned buffer, warm page cache for reads, one run each;\n"
                 "write time includes a final fdatasync.\n\n",
                 format_bytes(static_cast<double>(size)), format_bytes(static_cast<double>(block)));
      fmt::print("{:<10} {:>14} {:>14}\n", "METHOD", "WRITE", "READ");
      for (const auto* m : io::file_methods()) {
        io::Availability a = m->probe(scratch.path());
        if (!a.available) {
          fmt::print("{:<10} skipped: {}\n", m->name(), a.reason);
          continue;
        }
        auto path = scratch.create_unique_file(m->name());
        auto w0 = clock::now();
        {
          auto f = m->open(path, io::Access::ReadWrite);
          for (std::uint64_t off = 0; off < size; off += block) {
            auto chunk = buf.span().first(static_cast<std::size_t>(std::min(block, size - off)));
            io::fill_pattern(kSeed, off, chunk);  // inside the loop: the data differs per block
            f->write_at(off, chunk);
          }
          f->sync(m->name() == "mmap" ? io::Durability::MsyncSync : io::Durability::Fdatasync);
          f->close();
        }
        double wsec = std::chrono::duration<double>(clock::now() - w0).count();
        auto r0 = clock::now();
        bool ok = true;
        {
          auto f = m->open(path, io::Access::Read);
          for (std::uint64_t off = 0; off < size; off += block) {
            auto chunk = buf.span().first(static_cast<std::size_t>(std::min(block, size - off)));
            if (f->read_at(off, chunk) != chunk.size()) ok = false;
          }
          f->close();
        }
        double rsec = std::chrono::duration<double>(clock::now() - r0).count();
        // Verify outside the timing: the whole file against the pattern.
        {
          auto f = io::find_file_method("pread").open(path, io::Access::Read);
          for (std::uint64_t off = 0; off < size && ok; off += block) {
            auto chunk = buf.span().first(static_cast<std::size_t>(std::min(block, size - off)));
            ok = f->read_at(off, chunk) == chunk.size() && io::matches_pattern(kSeed, off, chunk);
          }
        }
        if (!ok) throw Error("verify", path.string(), "data read back does not match what was written");
        fmt::print("{:<10} {:>14} {:>14}\n", m->name(), format_rate(size / wsec), format_rate(size / rsec));
        scratch.remove_file(path);
      }
      fmt::print("\nNote: a single run with the pattern generation inside the write loop; "
                 "the full harness (repetitions, cache control, spread) is `iolab run` in a later version.\n");
      return 0;
    };
  });
}

const CommandRegistration registration{20, add_run_command};

}  // namespace
}  // namespace iolab::cli
