// fio jobs as iolab experiments: each option in effect mapped to what iolab
// does the same way, or refused with the reason (docs/fio-jobs.md).
#include "iolab/fio/job.h"

#include <unordered_map>

#include <fmt/format.h>

#include "iolab/base/units.h"
#include "job_mapper.h"

namespace iolab::fio {
namespace detail {

FioMappedJob JobMapper::map() {
  harness::FileExperiment& e = job_.experiment;
  e.suite = "fio";
  names();
  direction();
  engine();
  block_size();
  file_size();
  depth();
  cache();
  flushes();
  threads();
  repetitions();
  paths();
  reporting();
  e.experiment = job_.name + " · " + std::string(to_string(e.op)) + " " + std::string(to_string(e.pattern)) + " " +
                 size_label(e.block_size) + " " +
                 (e.cache == results::CacheState::Direct ? "direct" : e.op == results::Op::Read ? std::string(to_string(e.cache)) : "buffered");
  if (e.sync.flushes()) e.experiment += " sync " + to_string(e.sync);
  if (job_.threads > 1) e.experiment += " x" + std::to_string(job_.threads);
  job_.notes.push_back(traits_.needs_alignment
                           ? "buffers: page-aligned, as fio's for O_DIRECT"
                           : "buffers: iolab's heap buffer starts 64 bytes past a page boundary; fio's starts where "
                             "malloc put it (page-aligned only for O_DIRECT or mem_align)");
  if (e.op == results::Op::Write && job_.threads == 1)
    job_.notes.push_back(
        "writes: iolab writes a fresh file every pass, its blocks allocated as it writes; fio writes into the file "
        "it created (preallocated by its default fallocate=native) and overwrites it in later loops");
  job_.notes.push_back("latency: iolab's percentiles come from a separate pass timing every call, never from the "
                       "throughput passes; fio times every I/O of its run");
  for (const Setting* s : options_.in_effect()) {
    auto it = mapped_.find(s);
    job_.options.push_back({s->option.text, s->option.place, it == mapped_.end() ? "no effect here" : it->second});
  }
  for (auto& d : defaults_) job_.options.push_back(std::move(d));
  return job_;
}

}  // namespace detail


namespace {

// Options --fio-lenient ignores, once per option name with a count, so a
// job file repeating one 200,000 times is one line, one warning, one entry.
class Ignored {
 public:
  static constexpr std::size_t kMaxNames = 64;  // fio has some 400 options; iolab maps the common ones
  void add(const FioOption& o) {
    if (auto it = index_.find(o.key); it != index_.end()) {
      ++list_[it->second].count;
      return;
    }
    if (list_.size() >= kMaxNames)
      detail::fail(o.place, "more than " + std::to_string(kMaxNames) + " different options iolab does not map "
                                "(--fio-lenient ignores some, not a whole other workload)");
    index_.emplace(o.key, list_.size());
    list_.push_back({o.text.size() > 120 ? o.text.substr(0, 120) + "..." : o.text, o.place,
                     "ignored (--fio-lenient): iolab does not map this option"});
  }
  std::vector<FioMappedOption> take() && {
    for (auto& i : list_)
      if (i.count > 1) i.mapping += " (written " + std::to_string(i.count) + " times; the first shown)";
    return std::move(list_);
  }

 private:
  std::vector<FioMappedOption> list_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace

std::vector<FioMappedJob> map_fio_jobs(const FioJobFile& file, const FioMapSettings& settings) {
  using namespace detail;
  const MapContext context{settings.cwd};
  std::vector<FioOption> overrides;
  for (const auto& text : settings.overrides) {
    FioOption o = override_option(text);
    setting(o, 1024, false);  // an unknown option or a bad value fails before any job is looked at
    overrides.push_back(std::move(o));
  }
  unsigned override_kb = 0;
  for (const auto& o : overrides)
    if (find_spec(o.key)->kind == Kind::KbBase) override_kb = static_cast<unsigned>(parse_value(*find_spec(o.key), o, 1024).number);

  JobOptions globals;
  Ignored global_ignored;
  unsigned global_kb = 1024;
  std::vector<FioMappedJob> jobs;
  for (const FioSection& section : file.sections) {
    const unsigned kb = override_kb ? override_kb : own_kb_base(section).value_or(global_kb);
    JobOptions options = section.global ? JobOptions() : globals;
    Ignored ignored = global_ignored;
    std::vector<Setting> own;
    for (const auto& o : section.options) {
      if (auto s = setting(o, kb, settings.lenient)) own.push_back(std::move(*s));
      else ignored.add(o);
    }
    if (section.global) {
      for (auto& s : own) globals.add(std::move(s));
      global_ignored = std::move(ignored);
      global_kb = kb;
      continue;
    }
    for (auto& s : own) options.add(std::move(s));
    for (const auto& o : overrides) options.add(*setting(o, kb, false));
    jobs.push_back(JobMapper(section, options, std::move(ignored).take(), context).map());
  }
  if (jobs.empty()) fail({file.path, 0}, "no job: only [global] sections (fio: \"No job(s) defined\")");
  // fio starts the jobs between two stonewalls together; iolab runs each alone.
  for (std::size_t first = 0; first < jobs.size();) {
    std::size_t end = first + 1;
    while (end < jobs.size() && !jobs[end].stonewall) ++end;
    if (end - first > 1)
      for (std::size_t i = first; i < end; ++i) {
        // At most three named: a note per job naming all of 4,096 others would be quadratic.
        std::vector<std::string> others;
        for (std::size_t k = first; k < end && others.size() < 3; ++k)
          if (k != i) others.push_back("[" + jobs[k].section + "]");
        const std::size_t more = end - first - 1 - others.size();
        jobs[i].notes.push_back(fmt::format(
            "fio runs this job at the same time as {}{} (no stonewall between them), their I/O competing; iolab runs "
            "each job alone, one after another",
            fmt::join(others, ", "), more ? fmt::format(" and {} more", more) : ""));
      }
    first = end;
  }
  return jobs;
}

nlohmann::json to_json(const FioMappedJob& job, const std::string& job_file) {
  auto list = [](const std::vector<FioMappedOption>& options) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& o : options) {
      a.push_back({{"option", o.option}, {"at", to_string(o.place)}, {"mapped", o.mapping}});
      if (o.count > 1) a.back()["count"] = o.count;
    }
    return a;
  };
  nlohmann::json j{{"job_file", job_file},
                   {"section", job.section},
                   {"name", job.name},
                   {"description", job.description},
                   {"at", to_string(job.place)},
                   {"threads", job.threads},
                   {"scratch_parent", job.scratch_parent.string()},
                   {"stonewall", job.stonewall},
                   {"options", list(job.options)},
                   {"ignored", list(job.ignored)},
                   {"notes", job.notes}};
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["reps"] = optional(job.reps);
  j["min_time_s"] = optional(job.min_time);
  j["max_time_s"] = optional(job.max_time);
  j["time_based_s"] = optional(job.time_based_s);
  return j;
}

}  // namespace iolab::fio
