#include "app.h"

#include <algorithm>
#include <new>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <tuple>
#include <fcntl.h>
#include <exception>
#include <sys/resource.h>
#include <unistd.h>

#include "iolab/base/error.h"
#include "iolab/harness/limits.h"
#include "iolab/io/buffer.h"
#include "iolab/io/scratch.h"
#include "iolab/base/units.h"
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

template <typename T, typename Parse>
std::vector<T> list_of(const std::string& text, const char* what, Parse parse) {
  std::vector<T> out;
  for (const auto& item : harness::split_list(text, what)) out.push_back(parse(item));
  return out;
}

}  // namespace

bool stdout_written() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
  const int err = errno;
  std::fprintf(stderr, "iolab: write standard output: %s\n", std::strerror(err != 0 ? err : EIO));
  return false;
}

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
  if (!o.op.empty()) m.ops = list_of<results::Op>(o.op, "--op", results::parse_op);
  if (!o.pattern.empty()) m.patterns = list_of<results::AccessPattern>(o.pattern, "--pattern", results::parse_pattern);
  if (!o.bs.empty()) m.block_sizes = list_of<std::uint64_t>(o.bs, "--bs", [](const std::string& s) { return parse_size(s, "--bs"); });
  if (!o.size.empty()) m.file_size = parse_size(o.size, "--size");
  if (!o.ops.empty()) {
    m.ops_per_rep = parse_size(o.ops, "--ops");
    if (m.ops_per_rep == 0) throw UsageError("--ops " + o.ops, "at least one call per repetition");
    if (!o.size.empty())
      throw UsageError("--ops with --size", "give one: with --ops the file size is ops x block size");
  }
  if (!o.cache.empty()) m.caches = list_of<results::CacheState>(o.cache, "--cache", results::parse_cache);
  if (!o.buffer.empty())
    m.buffers = list_of<std::optional<io::BufferKind>>(o.buffer, "--buffer",
                                                       [](const std::string& s) { return std::optional(io::parse_buffer_kind(s)); });
  if (!o.sync.empty()) m.syncs = list_of<io::FlushPolicy>(o.sync, "--sync", io::parse_flush_policy);
  if (!o.evict.empty()) m.eviction = results::parse_eviction(o.evict);
  if (!o.qd.empty())
    m.queue_depths = list_of<unsigned>(
        o.qd, "--qd", [](const std::string& s) { return static_cast<unsigned>(parse_count(s, "--qd", harness::kQueueDepthBounds.min, harness::kQueueDepthBounds.max)); });
  m.latency = !o.no_latency;
  return m;
}

void add_matrix_options(CLI::App* group, MatrixOptions& o, const MatrixHelp& help) {
  const std::tuple<const char*, std::string*, const char*> options[] = {
      {"--method", &o.method, help.method}, {"--op", &o.op, help.op}, {"--pattern", &o.pattern, help.pattern},
      {"--bs", &o.bs, help.bs}, {"--size", &o.size, help.size}, {"--ops", &o.ops, help.ops},
      {"--cache", &o.cache, help.cache}, {"--buffer", &o.buffer, help.buffer}, {"--sync", &o.sync, help.sync},
      {"--qd", &o.qd, help.qd}};
  for (const auto& [name, value, text] : options)
    if (text != nullptr) group->add_option(name, *value, text);
}

void add_fio_file_options(CLI::App* cmd, FioFileOptions& o, const char* fio_help, const char* set_help,
                          const char* lenient_help) {
  cmd->add_option("--fio", o.fio_job, fio_help)->type_name("JOB.fio");
  cmd->add_option("--fio-set", o.fio_set, set_help)->type_name("KEY=VALUE");
  cmd->add_flag("--fio-lenient", o.fio_lenient, lenient_help);
}

void refuse_fio_settings_alone(const FioFileOptions& o) {
  if (o.fio_job.empty() && (!o.fio_set.empty() || o.fio_lenient))
    throw UsageError(o.fio_set.empty() ? "--fio-lenient" : "--fio-set", "applies to a fio job file (--fio JOB.fio)");
}

fio::FioJobsInOneDirectory fio_file_jobs(const FioFileOptions& o, const std::string& dir) {
  if (o.fio_job.empty()) return {{}, dir};
  fio::FioMapSettings settings;
  settings.overrides = o.fio_set;
  settings.lenient = o.fio_lenient;
  return fio::map_fio_jobs_in_one_directory(o.fio_job, settings, dir);
}

std::string version_line() {
  return std::string("iolab ") + kVersion + " (commit " + git_commit() + ", " + kBuildType + ", " + kCompiler + ")";
}

void build_app(CLI::App& app, Action& action) {
  app.description("iolab: measure how the ways of moving bytes between a program and a file perform on this machine,\n"
                  "explain why, and recommend one.");
  app.name("iolab");
  app.set_version_flag("--version", version_line());
  app.require_subcommand(1);
  app.footer("Examples:\n  iolab methods\n  iolab run --quick\n  iolab run --method pread,mmap --op read --bs 4k,1m --size 256m");
  app.parse_complete_callback([&app] { reject_empty_values(app); });
  std::sort(registry().begin(), registry().end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, add] : registry()) add(app, action);
}

ParsedCommandLine parse_command_line(const std::vector<std::string>& args) {
  CLI::App app;
  ParsedCommandLine parsed;
  build_app(app, parsed.action);
  // CLI11 says "a subcommand is required" for a misspelt one; name it instead.
  if (!args.empty() && !args.front().starts_with('-')) {
    bool known = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) known |= sub->get_name() == args.front();
    if (!known) throw CommandLineError("unknown command '" + printable(args.front()) + "' (see iolab --help)");
  }
  // CLI11 2.1 takes an empty word for an option group (whose name is empty)
  // and, with an unknown option after it, loops forever (`crosscheck '' -x`,
  // found by fuzz/cli_args_fuzz): in a command with option groups and no
  // positional argument, an empty word that is no option's value is refused first.
  // The command is the first word naming one, wherever it is: `iolab -- crosscheck '' -x` loops too.
  const CLI::App* sub = nullptr;
  std::size_t at = 0;
  for (; sub == nullptr && at < args.size(); ++at)
    for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
      if (s->get_name() == args[at]) sub = s;
  if (sub != nullptr) {
    bool groups = false, positional = false;
    for (const CLI::App* group : sub->get_subcommands([](const CLI::App* g) { return g->get_name().empty(); })) {
      groups = true;
      for (const CLI::Option* opt : group->get_options()) positional |= opt->get_positional();
    }
    for (const CLI::Option* opt : sub->get_options()) positional |= opt->get_positional();
    for (std::size_t i = at; groups && !positional && i < args.size(); ++i) {
      if (!args[i].empty()) continue;
      const std::string& before = args[i - 1];
      const CLI::Option* opt = before.starts_with('-') ? sub->get_option_no_throw(before) : nullptr;
      if (opt == nullptr || opt->get_expected_min() == 0)
        throw CommandLineError("The following argument was not expected: '' (see iolab --help)");
    }
  }
  std::vector<const char*> argv{"iolab"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    parsed = ParsedCommandLine{ParsedCommandLine::Kind::Help, app.help(), "", {}};
    return parsed;
  } catch (const CLI::CallForAllHelp&) {
    parsed = ParsedCommandLine{ParsedCommandLine::Kind::Help, app.help("", CLI::AppFormatMode::All), "", {}};
    return parsed;
  } catch (const CLI::CallForVersion& e) {
    parsed = ParsedCommandLine{ParsedCommandLine::Kind::Version, std::string(e.what()) + "\n", "", {}};
    return parsed;
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a missing subcommand before an unknown option, so
    // "iolab --frobnicate" would not name --frobnicate.
    if (auto rest = app.remaining(); !rest.empty() && rest.front().starts_with('-'))
      throw CommandLineError("unknown option '" + printable(rest.front()) + "' (see iolab --help)");
    throw CommandLineError(one_line(e.what()) + " (see iolab --help)");
  }
  parsed.command = app.get_subcommands().front()->get_name();
  return parsed;
}

namespace {
int run_main(int argc, char** argv);

// Called in a catch block: says why iolab stops, in one line on stderr, and
// returns the exit code: 2 for bad usage, 1 for anything else. `doing` ends
// the out-of-memory line.
int exit_code_of_failure(const char* doing) {
  try {
    throw;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "iolab: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "iolab: out of memory (std::bad_alloc)%s\n", doing);
    return 1;
  } catch (const std::exception& e) {  // iolab::Error, and what libraries throw
    // A write that failed because a signal is ending the process (SIGPIPE)
    // is not the story: the signal's cleanup is, and it ends the process.
    if (io::interrupting_signal() != 0) io::wait_for_signal_cleanup();
    std::fprintf(stderr, "iolab: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
}  // namespace

// Memory can run out anywhere, building the command line's parser included
// (`ulimit -v`): one line and exit 1, never std::terminate's abort (rc 134).
int main(int argc, char** argv) {
  // Under an address-space limit, the runtime itself may fail to allocate an
  // exception (libstdc++ then calls std::terminate with none active): that
  // is running out of memory too, said in one line. Anything else aborts as before.
  std::set_terminate([] {
    struct rlimit as {};
    bool memory = false;
    try {
      if (auto e = std::current_exception()) std::rethrow_exception(e);
      memory = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
    } catch (const std::bad_alloc&) {
      memory = true;
    } catch (...) {
    }
    if (memory) {
      std::fputs("iolab: out of memory (the address-space limit, ulimit -v, is too low to start)\n", stderr);
      ::_exit(1);
    }
    std::abort();
  });
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("iolab: out of memory (std::bad_alloc) before the command could start\n", stderr);
    return 1;
  } catch (const std::exception& e) {
    std::fputs("iolab: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
    return 1;
  }
}

namespace {
int run_main(int argc, char** argv) {
  // A closed stdout or stderr: the next file opened would take its number,
  // and what iolab prints would land in it (a results file, a scratch file).
  if (::fcntl(STDERR_FILENO, F_GETFD) < 0) ::open("/dev/null", O_WRONLY);  // nowhere to say anything
  if (::fcntl(STDOUT_FILENO, F_GETFD) < 0) {
    ::open("/dev/null", O_WRONLY);
    std::fprintf(stderr, "iolab: standard output is closed: nothing iolab prints could be read (redirect it to a "
                         "file or /dev/null)\n");
    return 1;
  }
  // Past `ulimit -f` a write fails with EFBIG, handled as ENOSPC is (the
  // results so far kept, one line), instead of SIGXFSZ ending iolab silently.
  std::signal(SIGXFSZ, SIG_IGN);
  ParsedCommandLine parsed;
  try {
    parsed = parse_command_line(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
  } catch (const std::exception&) {
    return exit_code_of_failure(" parsing the command line");
  }
  if (parsed.kind != ParsedCommandLine::Kind::Command) {  // --help, --version: as CLI11's App::exit prints them
    std::cout << parsed.text << std::flush;
    return 0;
  }
  const Action& action = parsed.action;

  try {
    // Inside the try: under `ulimit -v` its thread may not start (a one-line error, not std::terminate).
    io::remove_scratch_dirs_on_signals();
    if (action.recheck) action.recheck();
    const int code = action ? action.run() : 0;
    return stdout_written() ? code : 1;
  } catch (const std::exception&) {
    return exit_code_of_failure("");
  }
}
}  // namespace

}  // namespace iolab::cli
