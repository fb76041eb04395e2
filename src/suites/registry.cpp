#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {
std::vector<std::pair<int, const Suite*>>& registry() {
  static std::vector<std::pair<int, const Suite*>> suites;
  return suites;
}

// Registered suites with order below `end`, sorted by order.
std::vector<const Suite*> suites_before(int end) {
  auto sorted = registry();
  std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<const Suite*> out;
  for (auto& [order, s] : sorted)
    if (order < end) out.push_back(s);
  return out;
}

}  // namespace

SuiteRegistration::SuiteRegistration(int order, const Suite* suite) { registry().emplace_back(order, suite); }

std::vector<const Suite*> all_suites() { return suites_before(std::numeric_limits<int>::max()); }
std::vector<const Suite*> seed_suites() { return suites_before(kSeedsGroupEnd); }

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
