// How a condition of the decision ended: the one set of stop reasons the
// schedule, the records, the verdicts and the renderers share.
#pragma once

#include <optional>
#include <string_view>

namespace iolab::decision {

enum class Stop {
  Selected,     // the rule: one survivor, or survivors within the zone
  Budget,       // its allowance, its most rounds or the run's budget ended it; the survivors are what was left
  NotRun,       // the budget could not pay for its first stage
  Unmeasurable, // it cannot be measured here (the reason says why)
  NoCandidate,  // every candidate was skipped or withdrawn
};
std::string_view to_string(Stop s);  // "selected", "budget", "not run", "unmeasurable", "no candidate"
std::optional<Stop> stop_named(std::string_view name);

}  // namespace iolab::decision
