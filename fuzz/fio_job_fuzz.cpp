// libFuzzer target for fio job files (iolab run --fio): any text, with a
// second file it may include, is either refused with a UsageError (one line
// naming "fio job" and where) or parsed and mapped into jobs whose values
// are within their limits. The input is the job file, then (after a NUL
// byte) the text of "inc.fio", which the job file may include (and that
// file itself, for loops).
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/fio/job.h"

using namespace iolab::fio;

using iolab::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\0');
  const std::string_view job = input.substr(0, cut);
  const std::string include = cut == std::string_view::npos ? std::string() : std::string(input.substr(cut + 1));
  FioParseContext context;
  context.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "SIZE") return "64k";
    return std::nullopt;
  };
  context.read_include = [&](const std::filesystem::path& p) {
    if (p.filename() != "inc.fio") throw iolab::UsageError("fio job " + p.string(), "cannot be read: no such file");
    return include;
  };
  context.exists = [](const std::filesystem::path& p) { return p == "inc.fio"; };
  context.mb_memory = 2048;
  context.ncpus = 2;
  auto check_refusal = [](const iolab::UsageError& e) {
    const std::string_view what = e.what();
    require(what.starts_with("invalid fio job "));
    require(what.find('\n') == std::string_view::npos);
  };
  FioJobFile file;
  try {
    file = parse_fio_job(job, "fuzz.fio", context);
  } catch (const iolab::UsageError& e) {
    check_refusal(e);
    return 0;
  }
  for (const auto& s : file.sections)
    for (const auto& o : s.options) {
      require(!o.key.empty());
      require(o.place.line >= 1);
    }
  FioMapSettings settings;
  settings.cwd = "/tmp";
  settings.lenient = !file.sections.empty() && file.sections.front().name.size() % 2 == 1;
  try {
    for (const auto& j : map_fio_jobs(file, settings)) {
      require(j.experiment.block_size >= 1);
      require(j.experiment.file_size >= 1);
      require(j.threads >= 1 && j.threads <= 1024);
      require(j.experiment.options.queue_depth >= 1 && j.experiment.options.queue_depth <= 4096);
      require(!j.experiment.method.empty());
      to_json(j, "fuzz.fio").dump();
    }
  } catch (const iolab::UsageError& e) {
    check_refusal(e);
  }
  return 0;
}
