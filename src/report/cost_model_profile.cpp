// The per-machine profile of `iolab model --save` (cost_model.h,
// docs/model.md): the fitted model with the machine its records were
// measured on and the files they came from.
#include <ctime>

#include "iolab/base/error.h"
#include "iolab/report/cost_model.h"

namespace iolab::report {

namespace {

// What says which machine measured: the environment's fields that do not
// change from one run to the next on it (not the time, command or scratch directory).
constexpr const char* kMachineFields[] = {"hostname", "cpu_model", "cores",     "ram_bytes",   "kernel",   "fs_type",
                                          "mount_options", "device", "rotational", "scheduler", "block_queue", "vm_dirty"};

nlohmann::json machine_of(const results::Environment& e) {
  const nlohmann::json all = results::to_json(e);
  nlohmann::json m = nlohmann::json::object();
  for (const char* k : kMachineFields)
    if (auto it = all.find(k); it != all.end()) m[k] = *it;
  return m;
}

}  // namespace

bool is_model_profile(std::string_view head) {
  return head.starts_with("{") &&
         head.find(std::string("\"format\": \"") + std::string(kModelProfileFormat) + "\"") != std::string_view::npos;
}

nlohmann::json profile_json(const CostModel& m, const std::vector<ProfileSource>& sources, const ProfileMaker& maker) {
  if (sources.empty()) throw UsageError("--save", "a profile needs the results files it is fitted from");
  const nlohmann::json machine = machine_of(*sources.front().environment);
  nlohmann::json from = nlohmann::json::array();
  for (const auto& s : sources) {
    const nlohmann::json other = machine_of(*s.environment);
    // One machine's profile: files from another host or CPU are not averaged into it.
    for (const char* k : {"hostname", "cpu_model"})
      if (other.value(k, nlohmann::json()) != machine.value(k, nlohmann::json()))
        throw UsageError("--save", s.file + " was measured on another machine (" + k + " " + other.value(k, nlohmann::json()).dump() +
                                       ", not " + machine.value(k, nlohmann::json()).dump() +
                                       "): a profile is one machine's; save each machine's files apart");
    from.push_back({{"file", s.file},
                    {"created", s.environment->created},
                    {"command", s.environment->command},
                    {"git_commit", s.environment->git_commit},
                    {"iolab_version", s.environment->iolab_version}});
  }
  nlohmann::json j{{"format", kModelProfileFormat},
                   {"schema_version", 1},
                   {"created", maker.created},
                   {"made_by", {{"iolab_version", maker.iolab_version}, {"git_commit", maker.git_commit}}},
                   {"machine", machine},
                   {"sources", std::move(from)},
                   {"model", to_json(m)}};
  return j;
}

}  // namespace iolab::report
