#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {
struct Registered {
  int order;
  SuiteGroup group;
  const Suite* suite;
};
std::vector<Registered>& registry() {
  static std::vector<Registered> suites;
  return suites;
}

// Registered suites (of `group` only, if given), sorted by order.
std::vector<const Suite*> sorted_suites(std::optional<SuiteGroup> group) {
  auto sorted = registry();
  std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.order < b.order; });
  std::vector<const Suite*> out;
  for (auto& r : sorted)
    if (!group || r.group == *group) out.push_back(r.suite);
  return out;
}

}  // namespace

SuiteRegistration::SuiteRegistration(int order, SuiteGroup group, const Suite* suite) {
  registry().push_back({order, group, suite});
}

std::vector<const Suite*> all_suites() { return sorted_suites(std::nullopt); }
std::vector<const Suite*> seed_suites() { return sorted_suites(SuiteGroup::Seeds); }

const Suite& find_suite(std::string_view name) {
  std::string known;
  for (const Suite* s : all_suites()) {
    if (s->name() == name) return *s;
    known += (known.empty() ? "" : ", ") + std::string(s->name());
  }
  throw UsageError("suite '" + std::string(name) + "'", "unknown; known: " + known);
}

namespace {
constexpr NameTable<Scale, 4> kScaleNames{
    {{Scale::Tiny, "tiny"}, {Scale::Quick, "quick"}, {Scale::Default, "default"}, {Scale::Full, "full"}}};
}  // namespace

std::string_view to_string(Scale s) { return name_of(kScaleNames, s); }
Scale parse_scale(std::string_view name) { return parse_name(kScaleNames, name, "scale"); }

}  // namespace iolab::suites
