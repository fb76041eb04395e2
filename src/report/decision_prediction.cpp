// The cost model between the decision's measured sizes (decision_prediction.h).
#include "iolab/report/decision_prediction.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common.h"
#include "cost_model_check.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace predict {

using decision::CandidateVerdict;
using decision::ConditionVerdict;

// A candidate whose figures the decision trusted at a condition.
bool took_part(const CandidateVerdict& c) { return c.rounds > 0 && c.skipped.empty() && c.withdrawn.empty(); }

const CandidateVerdict* candidate_named(const ConditionVerdict& c, const std::string& label) {
  for (const auto& x : c.candidates)
    if (x.label == label) return &x;
  return nullptr;
}

// The fit of a candidate's record at a condition, if it took part there.
const CostFit* fit_at(const CostModel& m, const ConditionVerdict& c, const std::string& label,
                      const std::vector<results::Result>& records) {
  const CandidateVerdict* x = candidate_named(c, label);
  if (!x || !took_part(*x)) return nullptr;
  const results::Result* r = costcheck::candidate_record(records, c.condition.key(), label);
  return r ? fit_of(m, *r) : nullptr;
}

struct Fitted {
  std::string label;
  const CostFit* fit = nullptr;
};

// The model's ranking of `fitted` at `size`: the point fit's seconds per
// byte, and the share of resamples (the i-th of every fit together: the
// fits' bootstraps are independent) whose cheapest is the same.
std::optional<ModelRanking> rank(const std::vector<Fitted>& fitted, double size, double indifference) {
  ModelRanking r;
  for (const auto& f : fitted)
    if (auto s = f.fit->seconds_per_byte_at(size, f.fit->coefficients); s && *s > 0) r.ranked.push_back({f.label, *s});
  if (r.ranked.size() < 2) return std::nullopt;
  std::stable_sort(r.ranked.begin(), r.ranked.end(),
                   [](const auto& a, const auto& b) { return a.seconds_per_byte < b.seconds_per_byte; });
  const double best = r.ranked.front().seconds_per_byte;
  r.within = 0;
  while (r.within < r.ranked.size() && r.ranked[r.within].seconds_per_byte <= best * indifference) ++r.within;
  r.pick_over_next = r.ranked[1].seconds_per_byte / best;
  std::size_t n = SIZE_MAX;
  for (const auto& f : fitted) n = std::min(n, f.fit->resamples.size());
  if (n == 0 || n == SIZE_MAX) return r;
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::string cheapest;
    double low = 0;
    for (const auto& f : fitted) {
      auto s = f.fit->seconds_per_byte_at(size, f.fit->resamples[i]);
      if (s && (cheapest.empty() || *s < low)) cheapest = f.label, low = *s;
    }
    same += cheapest == r.ranked.front().label;
  }
  r.resamples = n;
  r.resample_share = static_cast<double>(same) / static_cast<double>(n);
  return r;
}

// Between two measured conditions of a row: every candidate of either, the
// ones both measured under one fit ranked, the others left out with why.
std::optional<PredictedCondition> between(const CostModel& m, const ConditionVerdict& a, const ConditionVerdict& b,
                                          std::uint64_t size, const std::vector<results::Result>& records) {
  PredictedCondition p;
  p.condition = decision::Condition{a.condition.row, size};
  p.from = a.condition.size;
  p.to = b.condition.size;
  p.indifference = std::max(a.indifference, b.indifference);
  std::vector<std::string> labels;
  for (const auto* c : {&a, &b})
    for (const auto& x : c->candidates)
      if (std::find(labels.begin(), labels.end(), x.label) == labels.end()) labels.push_back(x.label);
  std::vector<Fitted> fitted;
  for (const auto& label : labels) {
    const CostFit* fa = fit_at(m, a, label, records);
    const CostFit* fb = fit_at(m, b, label, records);
    if (fa && fa == fb) {
      fitted.push_back({label, fa});
      continue;
    }
    std::string why;
    if (!candidate_named(a, label) || !took_part(*candidate_named(a, label)))
      why = "not measured at " + exact_size(a.condition.size);
    else if (!candidate_named(b, label) || !took_part(*candidate_named(b, label)))
      why = "not measured at " + exact_size(b.condition.size);
    else
      why = "no fit of its records covers the size (a fit needs 3 measured sizes)";
    p.left_out.push_back({label, why});
  }
  auto r = rank(fitted, static_cast<double>(size), p.indifference);
  if (!r) return std::nullopt;
  p.model = std::move(*r);
  return p;
}

// The model asked at a measured condition, among the candidates that took part with a fit.
std::optional<ModelCheck> check(const CostModel& m, const decision::Decision& d, std::size_t ci,
                                const std::vector<results::Result>& records) {
  const ConditionVerdict& c = d.conditions[ci];
  std::vector<Fitted> fitted;
  for (const auto& x : c.candidates)
    if (const CostFit* f = fit_at(m, c, x.label, records)) fitted.push_back({x.label, f});
  auto r = rank(fitted, static_cast<double>(c.condition.size), c.indifference);
  if (!r) return std::nullopt;
  const std::string& measured = c.candidates[*c.pick].label;
  // Only a ranking that includes the measured pick can agree or not.
  if (std::none_of(r->ranked.begin(), r->ranked.end(), [&](const auto& x) { return x.label == measured; }))
    return std::nullopt;
  ModelCheck k;
  k.condition = ci;
  k.agrees = r->ranked.front().label == measured;
  k.within_measured_zone = std::any_of(c.within.begin(), c.within.end(), [&](std::size_t w) {
    return c.candidates[w].label == r->ranked.front().label;
  });
  k.model = std::move(*r);
  return k;
}

// Every size the row has a condition at, measured or not: neither predicted nor added there.
std::set<std::uint64_t> sizes_taken(const decision::Decision& d, const decision::RowVerdict& row) {
  std::set<std::uint64_t> taken;
  for (std::size_t ci : row.conditions) taken.insert(d.conditions[ci].condition.size);
  return taken;
}

}  // namespace predict

std::vector<results::Result> decision_records(const std::vector<results::Result>& records) {
  std::vector<results::Result> out;
  for (const auto& r : records)
    if (r.extra.contains(decision::keys::kCondition)) out.push_back(r);
  return out;
}

DecisionPredictions predict_decision(const CostModel& m, const decision::Decision& d,
                                     const std::vector<results::Result>& records) {
  DecisionPredictions out;
  for (const auto& row : d.rows) {
    const std::set<std::uint64_t> taken = predict::sizes_taken(d, row);
    std::vector<std::size_t> measured;
    for (std::size_t ci : row.conditions)
      if (d.conditions[ci].measured() && d.conditions[ci].pick) measured.push_back(ci);
    for (std::size_t k = 0; k < measured.size(); ++k) {
      if (auto x = predict::check(m, d, measured[k], records)) out.checks.push_back(std::move(*x));
      if (k + 1 == measured.size()) continue;
      const auto& a = d.conditions[measured[k]];
      const auto& b = d.conditions[measured[k + 1]];
      for (std::uint64_t size : decision::kGrid)
        if (size > a.condition.size && size < b.condition.size && !taken.count(size))
          if (auto p = predict::between(m, a, b, size, records)) out.predicted.push_back(std::move(*p));
    }
  }
  return out;
}

DecisionPredictions predict_decision(const decision::Decision& d, const std::vector<results::Result>& records) {
  const std::vector<results::Result> own = decision_records(records);
  return predict_decision(fit_cost_model(own), d, own);
}

std::vector<decision::ExtraCondition> crossing_conditions(const std::vector<results::Result>& records) {
  const std::vector<results::Result> own = decision_records(records);
  if (!decision::holds_decision(own)) return {};
  const decision::Decision d = decision::decision_from_records(own);
  const CostModel m = fit_cost_model(own);
  std::vector<decision::ExtraCondition> out;
  for (const auto& x : check_crossovers(m, d, own)) {
    if (!x.between) continue;
    auto row = std::find_if(d.rows.begin(), d.rows.end(), [&](const auto& r) { return r.row.key() == x.row; });
    if (row == d.rows.end()) continue;
    const std::set<std::uint64_t> taken = predict::sizes_taken(d, *row);
    std::optional<std::uint64_t> nearest;
    for (std::uint64_t g : decision::kGrid)
      if (g > x.from && g < x.to && !taken.count(g) &&
          (!nearest || std::fabs(std::log(static_cast<double>(g) / x.model->estimate)) <
                           std::fabs(std::log(static_cast<double>(*nearest) / x.model->estimate))))
        nearest = g;
    if (!nearest) continue;
    out.push_back({decision::Condition{row->row, *nearest},
                   "where the model puts " + x.below + "/" + x.above + " crossing (" +
                       bytes_text(static_cast<std::uint64_t>(std::llround(x.model->low))) + ".." +
                       bytes_text(static_cast<std::uint64_t>(std::llround(x.model->high))) + ")"});
  }
  return out;
}

namespace predict {

nlohmann::json ranking_json(const ModelRanking& r) {
  nlohmann::json per_byte = nlohmann::json::object();
  for (const auto& x : r.ranked) per_byte[x.label] = x.seconds_per_byte;
  return {{"seconds_per_byte", per_byte},
          {"pick_over_next", r.pick_over_next},
          {"resample_share", r.resample_share ? nlohmann::json(*r.resample_share) : nlohmann::json(nullptr)},
          {"resamples", r.resamples}};
}

nlohmann::json within_json(const ModelRanking& r) {
  nlohmann::json w = nlohmann::json::array();
  for (std::size_t i = 0; i < r.within; ++i) w.push_back(r.ranked[i].label);
  return w;
}

}  // namespace predict

void add_predictions(nlohmann::json& j, const DecisionPredictions& p) {
  auto& conditions = j["conditions"];
  for (const auto& k : p.checks) {
    nlohmann::json c = predict::ranking_json(k.model);
    c["pick"] = k.model.ranked.front().label;
    c["within"] = predict::within_json(k.model);
    c["agrees"] = k.agrees;
    c["within_measured_zone"] = k.within_measured_zone;
    conditions.at(k.condition)["model_check"] = std::move(c);
  }
  for (const auto& x : p.predicted) {
    nlohmann::json e = {{"op", results::to_string(x.condition.row.op)},
                        {"size", x.condition.size},
                        {"flush", x.condition.row.flush},
                        {"column", decision::to_string(x.condition.row.column)},
                        {"stop", "predicted"},
                        {"predicted", true},
                        {"pick", x.model.ranked.front().label},
                        {"within", predict::within_json(x.model)},
                        {"between", {x.from, x.to}},
                        {"indifference", x.indifference}};
    e.update(predict::ranking_json(x.model));
    nlohmann::json left = nlohmann::json::array();
    for (const auto& l : x.left_out) left.push_back({{"method", l.label}, {"why", l.why}});
    e["left_out"] = std::move(left);
    conditions.push_back(std::move(e));
  }
}

}  // namespace iolab::report
