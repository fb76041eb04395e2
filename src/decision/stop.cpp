// The stop reasons' names (stop.h).
#include "iolab/decision/stop.h"

#include "iolab/base/names.h"

namespace iolab::decision {

namespace {
constexpr NameTable<Stop, 5> kStops{{{Stop::Selected, "selected"}, {Stop::Budget, "budget"}, {Stop::NotRun, "not run"},
                                     {Stop::Unmeasurable, "unmeasurable"}, {Stop::NoCandidate, "no candidate"}}};
}  // namespace

std::string_view to_string(Stop s) { return name_of(kStops, s); }
std::optional<Stop> stop_named(std::string_view name) { return value_of(kStops, name); }

}  // namespace iolab::decision
