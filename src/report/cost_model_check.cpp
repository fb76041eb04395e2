// The model's crossovers against the decision map (issue 42's last "done
// when"): where a row's pick changes between two measured sizes, does the
// model put the two methods' crossover between them? (cost_model.h)
#include <fmt/core.h>

#include <cmath>

#include "common.h"
#include "cost_model_check.h"
#include "iolab/base/units.h"
#include "iolab/report/cost_model.h"

namespace iolab::report {

namespace costcheck {

// The record of a decision candidate at a condition: what matches it to a fit.
const results::Result* candidate_record(const std::vector<results::Result>& records, const std::string& condition,
                                        const std::string& label) {
  for (const auto& r : records) {
    auto c = r.extra.find(decision::keys::kCondition);
    auto l = r.extra.find(decision::keys::kCandidate);
    if (c != r.extra.end() && l != r.extra.end() && c->is_string() && l->is_string() &&
        c->get<std::string>() == condition && l->get<std::string>() == label)
      return &r;
  }
  return nullptr;
}

}  // namespace costcheck

namespace {

// Whether `label` is among the condition's survivors within the zone (the pick included).
bool among_within(const decision::ConditionVerdict& c, const std::string& label) {
  for (std::size_t i : c.within)
    if (c.candidates.at(i).label == label) return true;
  return false;
}

}  // namespace

std::vector<CrossoverCheck> check_crossovers(const CostModel& m, const decision::Decision& d,
                                             const std::vector<results::Result>& records) {
  std::vector<CrossoverCheck> out;
  for (const auto& row : d.rows) {
    const decision::ConditionVerdict* before = nullptr;
    for (std::size_t ci : row.conditions) {
      const auto& c = d.conditions.at(ci);
      if (!c.measured() || !c.pick) continue;
      if (before && before->candidates[*before->pick].label != c.candidates[*c.pick].label) {
        CrossoverCheck x;
        x.row = row.row.key();
        x.from = before->condition.size;
        x.to = c.condition.size;
        x.below = before->candidates[*before->pick].label;
        x.above = c.candidates[*c.pick].label;
        const results::Result* ra = costcheck::candidate_record(records, before->condition.key(), x.below);
        const results::Result* rb = costcheck::candidate_record(records, c.condition.key(), x.above);
        const CostFit* a = ra ? fit_of(m, *ra) : nullptr;
        const CostFit* b = rb ? fit_of(m, *rb) : nullptr;
        x.below_fitted = a != nullptr;
        x.above_fitted = b != nullptr;
        // The model's crossover of the pair nearest the two sizes, either direction.
        const double mid = std::sqrt(static_cast<double>(x.from) * static_cast<double>(x.to));
        for (const auto& k : m.crossovers) {
          if (!a || !b || k.op != a->op || k.column != a->column || k.flush != a->compared_flush) continue;
          const bool same = k.below == a->method && k.above == b->method;
          const bool reversed = k.below == b->method && k.above == a->method;
          if (!same && !reversed) continue;
          if (!x.model || std::fabs(std::log(k.size_bytes.estimate / mid)) < std::fabs(std::log(x.model->estimate / mid))) {
            x.model = k.size_bytes;
            x.model_reversed = reversed;
          }
        }
        x.between = x.model && !x.model_reversed && x.model->estimate > static_cast<double>(x.from) &&
                    x.model->estimate < static_cast<double>(x.to);
        x.told_apart = !among_within(*before, x.above) && !among_within(c, x.below);
        out.push_back(std::move(x));
      }
      before = &c;
    }
  }
  return out;
}

std::string crossover_check_text(const std::vector<CrossoverCheck>& checks) {
  if (checks.empty()) return "Crossovers against the decision map: no row's pick changes between two measured sizes\n";
  std::size_t between = 0, told = 0;
  for (const auto& x : checks) {
    told += x.told_apart;
    between += x.told_apart && x.between;
  }
  std::string out =
      told == 0 ? std::string("Crossovers against the decision map: no pick change the rounds told apart\n")
                : fmt::format("Crossovers against the decision map: {} of {} pick changes the rounds told apart have the "
                              "model's crossover between the two sizes ({})\n",
                              between, told, format_percent(static_cast<double>(between) / static_cast<double>(told)));
  if (told < checks.size())
    out += fmt::format("  ({} more between picks the rounds did not tell apart, each among the other's survivors within "
                       "the zone: listed, not counted)\n",
                       checks.size() - told);
  for (const auto& x : checks) {
    std::string model;
    if (!x.below_fitted || !x.above_fitted)
      model = fmt::format("no fit of {}", !x.below_fitted ? visible(x.below) : visible(x.above));
    else if (!x.model)
      model = "the model's lines do not cross";
    else
      model = fmt::format("model: {} {}{}", x.model_reversed ? "the other way round, at" : "at",
                          bytes_text(static_cast<std::uint64_t>(std::llround(x.model->estimate))),
                          x.between ? " (between)" : " (outside)");
    out += fmt::format("  {} {}..{}: {} -> {}; {}{}\n", visible(x.row), bytes_text(x.from), bytes_text(x.to),
                       visible(x.below), visible(x.above), model, x.told_apart ? "" : " [not told apart]");
  }
  return out;
}

nlohmann::json to_json(const std::vector<CrossoverCheck>& checks) {
  nlohmann::json rows = nlohmann::json::array();
  std::size_t between = 0, told = 0;
  for (const auto& x : checks) {
    told += x.told_apart;
    between += x.told_apart && x.between;
    nlohmann::json model = nullptr;
    if (x.model) model = {{"estimate", x.model->estimate}, {"low", x.model->low}, {"high", x.model->high}, {"reversed", x.model_reversed}};
    rows.push_back({{"row", x.row}, {"from", x.from}, {"to", x.to}, {"below", x.below}, {"above", x.above},
                    {"below_fitted", x.below_fitted}, {"above_fitted", x.above_fitted}, {"model", model}, {"between", x.between},
                    {"told_apart", x.told_apart}});
  }
  return {{"changes", checks.size()},
          {"told_apart", told},
          {"between", between},
          {"share_between", told == 0 ? nlohmann::json(nullptr) : nlohmann::json(double(between) / double(told))},
          {"rows", std::move(rows)}};
}

}  // namespace iolab::report
