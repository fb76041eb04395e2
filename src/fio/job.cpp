#include "iolab/fio/job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/base/proc.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

#include "options.h"

namespace iolab::fio {

std::string to_string(const FioPlace& place) {
  return place.line == 0 ? place.file : place.file + ":" + std::to_string(place.line);
}

namespace detail {
namespace {



// fio's strip_blank_end: the line ends at its first ';' or '#' (a comment),
// and trailing blanks and control characters go.
std::string_view strip_end(std::string_view s) {
  if (auto c = s.find_first_of(";#"); c != std::string_view::npos) s = s.substr(0, c);
  while (!s.empty() && (blank(s.back()) || static_cast<unsigned char>(s.back()) < 0x20)) s.remove_suffix(1);
  return s;
}


// ---- parsing ---------------------------------------------------------------

class Parser {
 public:
  explicit Parser(const FioParseContext& context) : context_(context) {}

  FioJobFile run(std::string_view text, const std::string& source) {
    FioJobFile file;
    file.path = source;
    stack_.push_back(std::filesystem::path(source).lexically_normal());
    total_ = text.size();
    parse(text, source, file, std::nullopt, 0);
    return file;
  }

 private:
  // Parses `text` (from `source`) into `file`; `nested` is the section an
  // include splices into (fio: no sections there).
  void parse(std::string_view text, const std::string& source, FioJobFile& file, std::optional<std::size_t> nested,
             unsigned depth) {
    if (!valid_utf8(source)) fail({printable(source), 0}, "the file's name is not UTF-8");
    if (text.find('\0') != std::string_view::npos)
      fail({source, 0}, "holds a NUL byte: not a text job file");
    std::optional<std::size_t> current = nested;
    unsigned number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      start = end + 1;
      ++number;
      const FioPlace place{source, number};
      if (line.size() > kFioMaxLineBytes)
        fail(place, "a line longer than " + std::to_string(kFioMaxLineBytes) + " bytes (fio's limit)");
      if (!valid_utf8(line)) fail(place, "not UTF-8 text");
      line = strip_end(trim_front(line));
      if (line.empty()) continue;
      if (line.front() == '[') {
        if (nested) fail(place, "a [section] in an included file (fio refuses them)");
        if (line.back() != ']' || line.size() < 3)
          fail(place, "'" + printable(line) + "': a section header is [name]");
        std::string name(line.substr(1, line.size() - 2));
        if (name.size() > 255) fail(place, "a section name longer than 255 characters (fio's limit)");
        if (file.sections.size() >= kFioMaxJobs)
          fail(place, "more than " + std::to_string(kFioMaxJobs) + " sections in one job file");
        FioSection s;
        s.global = name.starts_with("global");  // fio: strncmp(name, "global", 6)
        s.name = std::move(name);
        s.place = place;
        file.sections.push_back(std::move(s));
        current = file.sections.size() - 1;
        continue;
      }
      if (!current)
        fail(place, "'" + printable(line) + "' outside of a [section] (every option belongs to a job or [global])");
      if (line.starts_with("include") && line.size() > 7 && blank(line[7])) {
        include(std::string(trim_front(line.substr(8))), place, file, *current, depth);
        continue;
      }
      file.sections[*current].options.push_back(option(line, place));
    }
  }

  FioOption option(std::string_view line, const FioPlace& place) const {
    FioOption o;
    o.text = std::string(line);
    o.place = place;
    const std::size_t eq = line.find('=');
    std::string_view key = line.substr(0, eq);
    while (!key.empty() && blank(key.back())) key.remove_suffix(1);
    if (key.empty()) fail(place, "'" + printable(line) + "': an option without a name");
    o.key = std::string(key);
    if (eq != std::string_view::npos) o.value = expand(line.substr(eq + 1), place);
    return o;
  }

  // fio's substitutions in a value: ${NAME} from the environment (unset:
  // empty), then its keywords $pagesize, $mb_memory, $ncpus. fio leaves any
  // other $NAME as written (filename_format's $jobnum is fio's own), and so
  // does iolab: an option that needs a number then refuses it, saying so.
  std::string expand(std::string_view value, const FioPlace& place) const {
    std::string out;
    bool keyword = false;
    for (std::size_t i = 0; i < value.size();) {
      if (out.size() > kFioMaxLineBytes)  // before a long variable repeated grows it further
        fail(place, "the value is longer than " + std::to_string(kFioMaxLineBytes) + " bytes once expanded");
      if (value[i] != '$') {
        out += value[i++];
        continue;
      }
      if (i + 1 < value.size() && value[i + 1] == '{') {
        const std::size_t close = value.find('}', i + 2);
        if (close == std::string_view::npos)
          fail(place, "'" + printable(value) + "': '${' without its '}'");
        const std::string name(value.substr(i + 2, close - i - 2));
        if (auto v = name.empty() || !context_.getenv ? std::nullopt : context_.getenv(name)) out += *v;
        i = close + 1;
        continue;
      }
      bool replaced = false;
      for (const auto& [word, number] : {std::pair<std::string_view, std::uint64_t>{"$pagesize", context_.page_size},
                                         {"$mb_memory", context_.mb_memory},
                                         {"$ncpus", context_.ncpus}}) {
        if (value.substr(i).starts_with(word)) {
          out += std::to_string(number);
          i += word.size();
          replaced = keyword = true;
          break;
        }
      }
      if (replaced) continue;
      out += value[i++];
    }
    if (keyword && out.find_first_of("+-*/%^()") != std::string::npos)
      fail(place, "'" + printable(value) + "': arithmetic on fio's keywords is not supported; write the number");
    if (!out.empty() && trim_front(out).starts_with('('))
      fail(place, "'" + printable(value) + "': fio's arithmetic expressions are not supported; write the number");
    if (out.size() > kFioMaxLineBytes)
      fail(place, "the value is longer than " + std::to_string(kFioMaxLineBytes) + " bytes once expanded");
    if (!valid_utf8(out)) fail(place, "'" + printable(value) + "': not UTF-8 once ${...} is expanded");
    return out;
  }

  void include(const std::string& name, const FioPlace& place, FioJobFile& file, std::size_t section,
               unsigned depth) {
    if (name.empty()) fail(place, "'include' without a file name");
    if (depth + 1 > kFioMaxIncludeDepth)
      fail(place, "includes nested deeper than " + std::to_string(kFioMaxIncludeDepth) + " files");
    if (!context_.read_include) fail(place, "include " + printable(name) + ": includes are not read here");
    // fio looks for the file as written first, then beside the file that includes it.
    std::filesystem::path path(name);
    if (path.is_relative() && !(context_.exists && context_.exists(path))) {
      std::filesystem::path beside = std::filesystem::path(place.file).parent_path() / path;
      if (!std::filesystem::path(place.file).parent_path().empty()) path = beside;
    }
    const std::filesystem::path key = path.lexically_normal();
    for (const auto& open : stack_)
      if (open == key) fail(place, "include " + printable(path.string()) + ": includes itself (an include loop)");
    std::string text;
    try {
      text = context_.read_include(path);
    } catch (const UsageError& e) {
      // The reader names the file; say it once.
      std::string why = e.what();
      const std::string prefix = "invalid fio job " + printable(path.string()) + ": ";
      if (why.starts_with(prefix)) why = why.substr(prefix.size());
      fail(place, "include " + printable(path.string()) + ": " + why);
    }
    total_ += text.size();
    if (total_ > kFioMaxTotalBytes)
      fail(place, "include " + printable(path.string()) + ": the job file and its includes exceed " +
                      format_bytes(static_cast<double>(kFioMaxTotalBytes)));
    stack_.push_back(key);
    parse(text, path.string(), file, section, depth + 1);
    stack_.pop_back();
  }

  const FioParseContext& context_;
  std::vector<std::filesystem::path> stack_;  // the files being read, outermost first
  std::uint64_t total_ = 0;
};

}  // namespace
}  // namespace detail

std::string read_fio_text(const std::filesystem::path& file, std::uint64_t limit) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw UsageError("fio job " + file.string(), "is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > limit)
    throw UsageError("fio job " + file.string(),
                     "larger than " + format_bytes(static_cast<double>(limit)) + " (a job file is text)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  std::string text(static_cast<std::size_t>(limit) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw UsageError("fio job " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limit)  // it grew while being read
    throw UsageError("fio job " + file.string(), "larger than " + format_bytes(static_cast<double>(limit)));
  return text;
}

FioParseContext system_fio_context() {
  FioParseContext c;
  c.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  c.read_include = [](const std::filesystem::path& p) { return read_fio_text(p); };
  c.exists = [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
  };
  const long page = ::sysconf(_SC_PAGESIZE);
  c.page_size = page > 0 ? static_cast<std::uint64_t>(page) : 4096;
  c.mb_memory = proc::physical_memory_bytes() / (1024 * 1024);
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  c.ncpus = cpus > 0 ? static_cast<std::uint64_t>(cpus) : 1;
  return c;
}

FioJobFile parse_fio_job(std::string_view text, const std::string& source, const FioParseContext& context) {
  using namespace detail;
  if (text.size() > kFioMaxFileBytes)
    fail({source, 0}, "larger than " + format_bytes(static_cast<double>(kFioMaxFileBytes)) + " (a job file is text)");
  return Parser(context).run(text, source);
}

FioJobFile read_fio_job(const std::filesystem::path& file, const FioParseContext& context) {
  return parse_fio_job(read_fio_text(file), file.string(), context);
}

FioJobsInOneDirectory map_fio_jobs_in_one_directory(const std::filesystem::path& file, FioMapSettings settings,
                                                    const std::filesystem::path& dir) {
  // A given directory puts every job's files there, as --fio-set directory= would.
  // --dir is iolab's own option, one directory whatever it holds: a ':' in
  // it is escaped, as fio's own syntax writes one within a name.
  if (!dir.empty()) {
    std::string escaped;
    for (char c : dir.string()) {
      if (c == ':') escaped += '\\';
      escaped += c;
    }
    settings.overrides.push_back("directory=" + escaped);
  }
  FioJobsInOneDirectory out;
  out.jobs = map_fio_jobs(read_fio_job(file), settings);
  const FioMappedJob& first = out.jobs.front();  // map_fio_jobs refuses a file without jobs
  out.dir = dir.empty() ? first.scratch_parent : dir;
  for (const auto& j : out.jobs)
    if (dir.empty() && j.scratch_parent != first.scratch_parent)
      throw UsageError("fio job " + to_string(j.place),
                       "its files go in " + j.scratch_parent.string() + ", job [" + first.section + "]'s in " +
                           first.scratch_parent.string() +
                           ": iolab measures one filesystem per run (--dir, or --fio-set directory=, puts them "
                           "together)");
  return out;
}

}  // namespace iolab::fio
