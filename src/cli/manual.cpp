#include "manual.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "iolab/base/error.h"
#include "iolab/version.h"

namespace iolab::cli {
namespace {

namespace fs = std::filesystem;

// One option as the pages show it, with the group it sits in ("" = the command's own).
struct OptionEntry {
  const CLI::Option* opt;
  std::string group, group_description;
};

std::vector<OptionEntry> options_of(const CLI::App& app, const std::string& group = "", const std::string& about = "") {
  std::vector<OptionEntry> out;
  for (const CLI::Option* o : app.get_options()) out.push_back({o, group, about});
  // Option groups are nameless subcommands (CLI11); their options belong to the command.
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return s->get_name().empty(); }))
    for (auto& e : options_of(*sub, sub->get_group(), sub->get_description())) out.push_back(e);
  return out;
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
}

// "UINT:UINT in [1 - 1000]" (a checked value): the type alone; the description gives the range.
std::string value_name(const CLI::Option& o) {
  std::string t = o.get_type_name();
  t = t.substr(0, t.find(':'));
  return t.empty() ? "VALUE" : t;
}

bool takes_value(const CLI::Option& o) { return o.get_expected_min() != 0 || o.get_positional(); }

std::vector<std::string> names_of(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const auto& s : o.get_snames()) names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) names.push_back("--" + l);
  return names;
}

// A value that names a file or directory, so completion offers paths.
enum class PathKind { None, File, Directory };
PathKind path_kind(const CLI::Option& o) {
  const std::string n = o.get_positional() ? o.get_name(true) : o.get_lnames().empty() ? "" : o.get_lnames().front();
  const std::string t = o.get_type_name();
  if (n == "dir" || t.find("DIR") != std::string::npos) return PathKind::Directory;
  if (n == "out" || n == "fio" || n == "job" || n == "save" || n == "results" || n == "csv" || n == "json" || n == "baseline" || n == "candidate" ||
      t.find("FILE") != std::string::npos || t.find(".fio") != std::string::npos || t.find("PATH") != std::string::npos)
    return PathKind::File;
  return PathKind::None;
}

// roff: backslashes and hyphens escaped, no line may start with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A description as one line, for NAME (whatis reads one line).
std::string single_line(std::string s) {
  for (char& c : s) if (c == '\n') c = ' ';
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The footer ("Examples:\n  iolab run ...") without its heading.
std::string examples_of(const CLI::App& app) {
  std::string f = app.get_footer();
  if (f.starts_with("Example")) f = f.find('\n') == std::string::npos ? "" : f.substr(f.find('\n') + 1);
  while (!f.empty() && f.back() == '\n') f.pop_back();
  return f;
}

std::string option_heading(const CLI::Option& o) {
  if (o.get_positional()) return "\\fI" + roff(o.get_name(true)) + "\\fR" + (o.get_items_expected_max() > 1 ? "..." : "");
  std::string h;
  for (const auto& n : names_of(o)) h += (h.empty() ? "" : ", ") + ("\\fB" + roff(n) + "\\fR");
  if (takes_value(o)) h += " \\fI" + roff(value_name(o)) + "\\fR";
  return h;
}

std::string options_section(const CLI::App& app) {
  std::string out, positionals, group = "";
  for (const auto& e : options_of(app))
    if (e.opt->get_positional())
      positionals += ".TP\n" + option_heading(*e.opt) + "\n" + roff(e.opt->get_description()) + "\n";
  if (!positionals.empty()) out += ".SH ARGUMENTS\n" + positionals;
  out += ".SH OPTIONS\n";
  for (const auto& e : options_of(app)) {
    if (e.opt->get_positional()) continue;
    if (e.group != group) {
      group = e.group;
      out += ".SS " + roff(group) + "\n" + (e.group_description.empty() ? "" : roff(e.group_description) + "\n");
    }
    out += ".TP\n" + option_heading(*e.opt) + "\n" + roff(e.opt->get_description()) + "\n";
  }
  return out;
}

std::string exit_status() {
  return ".SH EXIT STATUS\n.TP\n0\nsuccess\n.TP\n1\na failure while running (the one-line message names the operation, the file and errno)\n"
         ".TP\n2\nbad usage: an unknown command or option, or a bad value (one line on stderr naming it)\n";
}

std::string header(const std::string& page, const std::string& name, const std::string& summary) {
  return fmt::format(".\\\" Generated by iolab-docgen from the command line iolab parses; do not edit.\n"
                     ".TH {} 1 \"\" \"iolab {}\" \"iolab manual\"\n.SH NAME\n{} \\- {}\n",
                     upper(page), kVersion, roff(name), roff(summary));
}

const char* kDocs =
    ".SH SEE ALSO\nThe documentation installed with iolab: README.md and docs/*.md in share/doc/iolab under the\n"
    "installation prefix (/usr/share/doc/iolab from the Debian package): docs/results\\-format.md for the results\n"
    "files, docs/suites.md for the suites, docs/io\\-methods.md for the methods, docs/fio\\-jobs.md for fio job files.\n";

std::string main_page(const CLI::App& app) {
  std::string d = app.get_description();
  std::string summary = d.starts_with("iolab: ") ? d.substr(7) : d;
  std::string out = header("iolab", "iolab", single_line(summary));
  out += ".SH SYNOPSIS\n.B iolab\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B iolab\n\\-\\-version | \\-\\-help\n";
  out += ".SH DESCRIPTION\n" + roff(summary) + "\n.PP\nEach command has its own page, iolab\\-\\fICOMMAND\\fR(1), and its own \\-\\-help.\n";
  out += ".SH COMMANDS\n";
  for (const CLI::App* c : commands_of(app))
    out += ".TP\n\\fB" + roff(c->get_name()) + "\\fR\n" + roff(c->get_description()) + "\n(iolab\\-" + roff(c->get_name()) + "(1))\n";
  out += options_section(app);
  if (std::string ex = examples_of(app); !ex.empty()) out += ".SH EXAMPLES\n.nf\n" + roff(ex) + "\n.fi\n";
  out += exit_status();
  out += ".SH ENVIRONMENT\n.TP\nTMPDIR\nwhere scratch directories go when no \\-\\-dir is given\n"
         ".TP\nNO_COLOR\nset: no colour on a terminal\n.TP\nPATH\nwhere crosscheck finds fio\n";
  out += kDocs;
  out += ".PP\n";
  std::string refs;
  for (const CLI::App* c : commands_of(app)) refs += (refs.empty() ? "" : ",\n") + ("\\fBiolab\\-" + roff(c->get_name()) + "\\fR(1)");
  out += refs + ",\n\\fBiolab\\-mpi\\fR (the parallel workload across MPI ranks; iolab\\-mpi \\-\\-help, docs/parallel.md),\n\\fBfio\\fR(1)\n";
  return out;
}

std::string command_page(const CLI::App& c) {
  const std::string name = "iolab-" + c.get_name();
  std::string out = header(name, name, single_line(c.get_description()));
  std::string synopsis = ".SH SYNOPSIS\n.B iolab " + roff(c.get_name()) + "\n[\\fIOPTIONS\\fR]";
  for (const auto& e : options_of(c))
    if (e.opt->get_positional())
      synopsis += " " + std::string(e.opt->get_required() ? "" : "[") + "\\fI" + roff(e.opt->get_name(true)) + "\\fR" +
                  (e.opt->get_items_expected_max() > 1 ? "..." : "") + (e.opt->get_required() ? "" : "]");
  out += synopsis + "\n.SH DESCRIPTION\n" + roff(c.get_description()) + "\n";
  out += options_section(c);
  if (std::string ex = examples_of(c); !ex.empty()) out += ".SH EXAMPLES\n.nf\n" + roff(ex) + "\n.fi\n";
  out += exit_status();
  out += kDocs;
  out += ".PP\n\\fBiolab\\fR(1)\n";
  return out;
}

// bash: a word list is safe inside double quotes (option names and command names only).
std::string words(const std::vector<std::string>& list) {
  std::string s;
  for (const auto& w : list) s += (s.empty() ? "" : " ") + w;
  return s;
}

// One case arm: how to complete the words after `iolab <cmd>` (cmd "" = before a command).
std::string bash_arm(const std::string& pattern, const CLI::App& app, const std::string& positional_words) {
  std::vector<std::string> opts, valued, dirs, files;
  PathKind positional = PathKind::None;
  for (const auto& e : options_of(app)) {
    if (e.opt->get_positional()) {
      positional = path_kind(*e.opt);
      continue;
    }
    for (const auto& n : names_of(*e.opt)) {
      opts.push_back(n);
      if (!takes_value(*e.opt)) continue;
      valued.push_back(n);
      if (path_kind(*e.opt) == PathKind::Directory) dirs.push_back(n);
      if (path_kind(*e.opt) == PathKind::File) files.push_back(n);
    }
  }
  auto alternatives = [](const std::vector<std::string>& v) { return v.empty() ? std::string("-no-such-option-") : fmt::format("{}", fmt::join(v, "|")); };
  std::string rest = positional == PathKind::File ? "COMPREPLY=($(compgen -f -- \"$cur\"))"
                     : positional == PathKind::Directory ? "COMPREPLY=($(compgen -d -- \"$cur\"))"
                     : !positional_words.empty() ? "COMPREPLY=($(compgen -W \"" + positional_words + "\" -- \"$cur\"))"
                                                 : "COMPREPLY=()";
  return fmt::format(
      "    {})\n"
      "      case $prev in\n"
      "        {}) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
      "        {}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
      "        {}) COMPREPLY=(); return ;;\n"
      "      esac\n"
      "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); else {}; fi ;;\n",
      pattern, alternatives(dirs), alternatives(files), alternatives(valued), words(opts), rest);
}

std::string bash_completion(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* c : commands_of(app)) names.push_back(c->get_name());
  std::string out =
      "# bash completion for iolab. Generated by iolab-docgen from the command line iolab parses; do not edit.\n"
      "_iolab() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
      "  done\n"
      "  case $cmd in\n";
  out += bash_arm("\"\"", app, words(names));
  for (const CLI::App* c : commands_of(app)) out += bash_arm(c->get_name(), *c, "");
  out += "  esac\n}\ncomplete -F _iolab iolab\n";
  return out;
}

// zsh: inside single quotes, a quote is '\''; in an _arguments description, brackets and colons are escaped.
std::string zsh_quoted(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else if (c == '[' || c == ']' || c == ':' || c == '\\') out += std::string("\\") + c;
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// An _describe item "name:description": only the name's colons would need escaping.
std::string zsh_item(const std::string& name, const std::string& description) {
  std::string out = name + ":";
  for (char c : first_line(description)) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out;
}

std::string zsh_specs(const CLI::App& app, const std::string& indent) {
  std::string out;
  for (const auto& e : options_of(app)) {
    const CLI::Option& o = *e.opt;
    const std::string desc = zsh_quoted(first_line(o.get_description()));
    const std::string action = path_kind(o) == PathKind::Directory ? "_files -/" : path_kind(o) == PathKind::File ? "_files" : " ";
    if (o.get_positional()) {
      out += indent + "'" + std::string(o.get_items_expected_max() > 1 ? "*" : "1") + ":" + zsh_quoted(o.get_name(true)) + ":" +
             action + "' \\\n";
      continue;
    }
    for (const auto& n : names_of(o)) {
      if (!takes_value(o)) out += indent + "'" + n + "[" + desc + "]' \\\n";
      else out += indent + "'*" + n + "[" + desc + "]:" + zsh_quoted(value_name(o)) + ":" + action + "' \\\n";
    }
  }
  return out;
}

std::string zsh_completion(const CLI::App& app) {
  std::string out =
      "#compdef iolab\n"
      "# zsh completion for iolab. Generated by iolab-docgen from the command line iolab parses; do not edit.\n"
      "_iolab() {\n"
      "  local curcontext=$curcontext state line\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (const CLI::App* c : commands_of(app))
    out += "    '" + zsh_item(c->get_name(), c->get_description()) + "'\n";
  out += "  )\n  _arguments -C \\\n" + zsh_specs(app, "    ") +
         "    '1:command:->command' \\\n    '*::argument:->argument'\n"
         "  case $state in\n"
         "    command) _describe -t commands 'iolab command' commands ;;\n"
         "    argument)\n"
         "      case $line[1] in\n";
  for (const CLI::App* c : commands_of(app))
    out += "        " + c->get_name() + ")\n          _arguments \\\n" + zsh_specs(*c, "            ") + "            ;;\n";
  out += "      esac ;;\n  esac\n}\n_iolab \"$@\"\n";
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error("write", path.string(), errno);
}

}  // namespace

void write_manual(const CLI::App& app, const fs::path& out_dir) {
  // The page set follows the commands: none left over from a removed one.
  fs::remove_all(out_dir / "man1");
  write_file(out_dir / "man1" / "iolab.1", main_page(app));
  for (const CLI::App* c : commands_of(app)) write_file(out_dir / "man1" / ("iolab-" + c->get_name() + ".1"), command_page(*c));
  write_file(out_dir / "bash-completion" / "iolab", bash_completion(app));
  write_file(out_dir / "zsh" / "_iolab", zsh_completion(app));
}

}  // namespace iolab::cli
