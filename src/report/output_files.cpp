#include "iolab/report/output_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/io/publish.h"
#include "iolab/io/scratch.h"

namespace iolab::report {
namespace {

namespace fs = std::filesystem;

std::string head_of(const fs::path& file, std::size_t bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// "<program>-20261130T211017.123Z-4242.json" (the set's first extension):
// millisecond time and the process id, so two commands started together
// never choose the same name (and publishing refuses a taken one anyway).
std::string default_name(const std::string& program, const std::string& extension) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &utc);
  return fmt::format("{}-{}.{:03}Z-{}{}", program, stamp, ms, ::getpid(), extension);
}

fs::path directory_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

}  // namespace

bool iolab_wrote(const OutputKind& kind, const fs::path& existing) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(existing, ec)) && kind.wrote(head_of(existing, 64 * 1024));
}

OutputKind output_kind(const Exporter& e) {
  return {std::string(e.extension()), [&e](std::string_view head) { return e.wrote(head); }};
}

std::vector<OutputKind> output_kinds(const std::vector<const Exporter*>& exporters) {
  std::vector<OutputKind> kinds;
  for (const auto* e : exporters) kinds.push_back(output_kind(*e));
  return kinds;
}

OutputFiles::OutputFiles(OutputRequest request) : request_(std::move(request)) {
  if (!named()) {
    json_ = fs::path("results") / default_name(request_.program, request_.kinds.front().extension);
    return;
  }
  const std::string given = request_.option + " " + request_.given;
  json_ = request_.given;
  const std::string& extension = request_.kinds.front().extension;
  if (json_.extension() != extension || json_.stem().empty())
    throw UsageError(given, extension != ".json" ? "name the file, ending in " + extension
                            : request_.kinds.size() > 1
                                ? "name the results JSON, ending in .json (the other files go beside it, same stem)"
                                : "name the results JSON, ending in .json");
  const auto set = files();
  for (std::size_t i = 0; i < set.size(); ++i) {
    const fs::path& file = set[i];
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) continue;
    if (fs::is_directory(fs::status(file, ec))) throw UsageError(given, file.string() + " is a directory");
    for (const auto& input : request_.inputs)
      if (!input.empty() && fs::equivalent(file, input, ec))
        throw UsageError(given, file.string() + " is " + request_.input_kind + "; results never replace an input");
    if (!replaceable(i, file))
      throw UsageError(given, file.string() + " exists and is not one iolab wrote; iolab replaces only its own "
                                              "results (choose another name, or remove it)");
  }
}

// The ownership rule, checked before any work and again at the moment of
// publishing (io::publish_file): a link (to /dev/stdout, to a user's file),
// a device, a FIFO, an input, or a file of someone else's is never replaced.
bool OutputFiles::replaceable(std::size_t kind, const fs::path& existing) const {
  std::error_code ec;
  for (const auto& input : request_.inputs)
    if (!input.empty() && fs::equivalent(existing, input, ec)) return false;
  return iolab_wrote(request_.kinds[kind], existing);
}

OutputFiles::~OutputFiles() { release(); }

std::vector<fs::path> OutputFiles::set_for(const fs::path& json) const {
  std::vector<fs::path> set;
  for (const auto& k : request_.kinds) set.push_back(fs::path(json).replace_extension(k.extension));
  return set;
}

std::vector<fs::path> OutputFiles::files() const { return set_for(json_); }

void OutputFiles::prepare() {
  const fs::path dir = directory_of(json_);
  io::check_publishable(dir);
  if (!named() || lock_fd_ >= 0) return;
  // ".NAME.json.lock" beside it, held (flock) until the set is published: a
  // lock file replaced while we waited for it is not ours, so try again.
  std::string name = "." + json_.filename().string().substr(0, NAME_MAX - 7) + ".lock";
  lock_path_ = dir / name;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw Error("lock", json_.string(), errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      ::close(fd);
      if (e == EWOULDBLOCK)
        throw Error("write", json_.string(), "another iolab command is writing results under this name now (" +
                                                 lock_path_.string() + " is locked); choose another --out", EBUSY);
      throw Error("lock", lock_path_.string(), e);
    }
    struct stat held {}, named_now {};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path_.c_str(), &named_now) == 0 && held.st_ino == named_now.st_ino &&
        held.st_dev == named_now.st_dev) {
      lock_fd_ = fd;
      release_on_signal_ = std::make_unique<io::InterruptHook>([this](int) { release(); });
      return;
    }
    ::close(fd);
  }
  throw Error("lock", lock_path_.string(), EAGAIN);
}

void OutputFiles::release() {
  const int fd = lock_fd_.exchange(-1);  // one caller drops it: the main thread or a signal's cleanup
  if (fd < 0) return;
  ::unlink(lock_path_.c_str());  // while held: a waiter then sees a new file, not this one
  ::close(fd);
}

void OutputFiles::write_set(const fs::path& json, bool replace, const Render& render,
                            std::vector<fs::path>& written) const {
  const auto set = set_for(json);
  try {
    for (std::size_t i = 0; i < set.size(); ++i) {
      // A given name: iolab's own file there is replaced, one that appeared
      // during the run (or was changed by hand) is kept, decided as it is published.
      if (replace)
        io::publish_file(set[i], render(i, json), [&](const fs::path& existing) { return replaceable(i, existing); });
      else
        io::publish_file(set[i], render(i, json), io::IfExists::Refuse);
      written.push_back(set[i]);
    }
  } catch (const Error& e) {
    // A default name taken part way: this set is not ours, take it back.
    if (e.error_number() == EEXIST && !replace) {
      for (const auto& f : written) ::unlink(f.c_str());
      written.clear();
    }
    throw;
  }
}

std::vector<fs::path> OutputFiles::write_default(const fs::path& dir, const Render& render) const {
  const fs::path first = dir / default_name(request_.program, request_.kinds.front().extension);
  for (int attempt = 1;; ++attempt) {
    fs::path json = first;
    if (attempt > 1)
      json.replace_filename(first.stem().string() + "-" + std::to_string(attempt) + request_.kinds.front().extension);
    std::vector<fs::path> written;
    try {
      write_set(json, false, render, written);
      return written;
    } catch (const Error& e) {
      if (e.error_number() != EEXIST || attempt >= 100 || !written.empty()) {
        if (!written.empty()) return written;  // the JSON is there; what failed after it is said by the caller
        throw;
      }
    }
  }
}

OutputFiles::Published OutputFiles::publish(const Render& render, const std::vector<fs::path>& fallback_dirs) {
  Published p;
  try {
    if (named()) write_set(json_, true, render, p.files);
    else p.files = write_default(directory_of(json_), render);
    if (p.files.size() < request_.kinds.size())
      p.problem = "could not write " + set_for(p.files.front())[p.files.size()].string();
    return p;
  } catch (const Error& e) {
    const std::string failed = one_line(e.what());
    if (!p.files.empty()) {  // the JSON is written: the rest can be made from it (iolab report)
      p.problem = failed + "; the results are in " + p.files.front().string();
      return p;
    }
    // The name taken meanwhile by a file iolab may not replace: the set goes
    // beside it, under a default name; elsewhere only when that fails too.
    std::vector<fs::path> dirs = fallback_dirs;
    if (e.error_number() == EEXIST && named()) dirs.insert(dirs.begin(), directory_of(json_));
    for (const auto& dir : dirs) {
      try {
        p.files = write_default(dir, render);
        p.problem = failed + "; the results are in " + p.files.front().string() + " instead";
        return p;
      } catch (const Error&) {  // the next place
      }
    }
    const int err = e.error_number() != 0 ? e.error_number() : EIO;
    throw Error("write", json_.string(), std::string(std::strerror(err)) + "; no other place would take the results either",
                err);
  }
}

std::vector<fs::path> fallback_dirs(const fs::path& scratch_parent) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  if (!scratch_parent.empty()) dirs.push_back(scratch_parent.is_absolute() ? scratch_parent : fs::absolute(scratch_parent, ec));
  const char* tmp = std::getenv("TMPDIR");
  dirs.push_back(tmp && *tmp ? fs::path(tmp) : fs::path("/tmp"));
  return dirs;
}

OutputRequest results_request(const std::string& given, const std::string& input, const std::string& input_kind) {
  OutputRequest request;
  request.given = given;
  request.kinds = output_kinds(results_exporters());
  if (!input.empty()) request.inputs.push_back(input);
  request.input_kind = input_kind;
  return request;
}

OutputFiles::Published publish_results(OutputFiles& out, const results::Results& results,
                                       const std::vector<const Exporter*>& exporters,
                                       const std::filesystem::path& scratch_parent, std::string_view program) {
  auto p = out.publish(
      [&](std::size_t i, const std::filesystem::path& json) {
        return exporters[i]->render(results, ExportContext{json, std::string(program) + " " + json.stem().string(), false});
      },
      fallback_dirs(scratch_parent));
  out.release();
  return p;
}

}  // namespace iolab::report
