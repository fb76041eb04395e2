#include "app.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "iolab/error.h"
#include "iolab/io/buffer.h"
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

namespace {

template <typename T, typename Parse>
std::vector<T> list_of(const std::string& text, const char* what, Parse parse) {
  std::vector<T> out;
  for (const auto& item : harness::split_list(text, what)) out.push_back(parse(item));
  return out;
}

}  // namespace

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string s, arg;
  while (std::getline(in, arg, '\0')) {
    bool quote = arg.empty() || arg.find_first_of(" \t\"'$\\") != std::string::npos;
    s += (s.empty() ? "" : " ") + (quote ? "'" + arg + "'" : arg);
  }
  return s;
}

harness::Matrix matrix_from(const MatrixOptions& o) {
  harness::Matrix m;
  if (!o.method.empty()) m.methods = harness::variants_of(harness::split_list(o.method, "--method"));
  if (!o.op.empty()) m.ops = list_of<harness::Op>(o.op, "--op", harness::parse_op);
  if (!o.pattern.empty()) m.patterns = list_of<harness::AccessPattern>(o.pattern, "--pattern", harness::parse_pattern);
  if (!o.bs.empty()) m.block_sizes = list_of<std::uint64_t>(o.bs, "--bs", [](const std::string& s) { return parse_size(s); });
  if (!o.size.empty()) m.file_size = parse_size(o.size);
  if (!o.ops.empty()) m.ops_per_rep = parse_size(o.ops);
  if (!o.cache.empty()) m.caches = list_of<harness::CacheState>(o.cache, "--cache", harness::parse_cache);
  if (!o.buffer.empty())
    m.buffers = list_of<std::optional<io::BufferKind>>(o.buffer, "--buffer",
                                                       [](const std::string& s) { return std::optional(io::parse_buffer_kind(s)); });
  if (!o.sync.empty()) m.syncs = list_of<harness::SyncPolicy>(o.sync, "--sync", harness::parse_sync_policy);
  if (!o.evict.empty()) m.eviction = harness::parse_eviction(o.evict);
  if (!o.qd.empty())
    m.queue_depths = list_of<unsigned>(o.qd, "--qd", [](const std::string& s) {
      std::uint64_t v = parse_size(s);
      if (v == 0 || v > 4096) throw UsageError("--qd " + s, "a queue depth is 1 to 4096");
      return static_cast<unsigned>(v);
    });
  m.latency = !o.no_latency;
  return m;
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
