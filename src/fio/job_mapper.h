// One fio job mapped to one iolab experiment, option by option: each
// option in effect becomes what iolab does the same way, or the job is
// refused with the reason (docs/fio-jobs.md). Its parts are in
// mapping.cpp (the job as a whole), mapping_io.cpp (what the I/O is) and
// mapping_run.cpp (how it runs: workers, repetitions, paths, reports).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/fio/job.h"
#include "iolab/io/file.h"
#include "options.h"

namespace iolab::fio::detail {

struct MapContext {
  std::filesystem::path cwd;
};

class JobMapper {
 public:
  JobMapper(const FioSection& section, const JobOptions& options, std::vector<FioMappedOption> ignored,
            const MapContext& context)
      : section_(section), options_(options), context_(context) {
    job_.section = section.name;
    job_.name = section.name;
    job_.place = section.place;
    job_.ignored = std::move(ignored);
  }

  FioMappedJob map();

 private:
  const Setting* get(std::string_view key) const { return options_.get(key); }
  void say(const Setting* s, std::string text) {
    if (s) mapped_[s] = std::move(text);
  }
  // A default of fio's that decides something, listed with the options.
  void say_default(std::string option, std::string text) {
    defaults_.push_back({std::move(option), FioPlace{"fio's default", 0}, std::move(text)});
  }
  [[noreturn]] void refuse(const Setting* s, const std::string& why) const {
    if (s) fail(s->option.place, "'" + shown(s->option) + "': " + why);
    fail(section_.place, "job [" + printable(section_.name) + "]: " + why);
  }
  bool on(std::string_view key) const {
    const Setting* s = get(key);
    return s && s->value.number != 0;
  }
  std::uint64_t number(std::string_view key, std::uint64_t fallback) const {
    const Setting* s = get(key);
    return s ? s->value.number : fallback;
  }

  // The job's parts, in the order map() takes them.
  void names();
  void direction();
  void engine();
  void block_size();
  void file_size();
  void depth();
  void cache();
  void flushes();
  void threads();
  void repetitions();
  void paths();
  void reporting();

  const FioSection& section_;
  const JobOptions& options_;
  const MapContext& context_;
  FioMappedJob job_;
  bool direct_ = false;
  io::MethodTraits traits_;
  std::map<const Setting*, std::string> mapped_;
  std::vector<FioMappedOption> defaults_;
};

}  // namespace iolab::fio::detail
