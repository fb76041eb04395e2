// The cost model (cost_model.h) answering the decision between its measured
// sizes (issue 42 item 5): fitted on the decision's own records, at every
// grid size strictly between two measured sizes of a row, each candidate's
// time per byte is predicted and the cheapest is the predicted pick, marked
// "predicted", never counted as measured. At the measured sizes the model is
// asked too, to check it: where it would pick otherwise, that is said.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iolab/decision/schedule.h"
#include "iolab/decision/verdict.h"
#include "iolab/report/cost_model.h"
#include "iolab/results/record.h"

namespace iolab::report {

// A candidate as the model sees it at one size: seconds per byte from the
// point fit.
struct ModelledCandidate {
  std::string label;
  double seconds_per_byte = 0;
};

// What the model says at one size of a row: candidates ranked by predicted
// seconds per byte (the pick first), those within the row's indifference of
// the pick, and how many of the bootstrap resamples give the same pick.
struct ModelRanking {
  std::vector<ModelledCandidate> ranked;  // ascending seconds per byte
  std::size_t within = 1;                 // the first `within` of `ranked`, pick first
  double pick_over_next = 1;              // the next's seconds per byte over the pick's
  std::optional<double> resample_share;   // unset when the fits carry no resamples
  std::size_t resamples = 0;
};

struct LeftOut {
  std::string label, why;
};

// A grid size no condition of the row has, between two measured ones.
struct PredictedCondition {
  decision::Condition condition;
  std::uint64_t from = 0, to = 0;  // the measured sizes on each side
  double indifference = 1.05;      // the row's (the wider of the two neighbours')
  ModelRanking model;
  std::vector<LeftOut> left_out;   // candidates without a fit covering the size
};

// The model at a measured condition, beside the measured pick.
struct ModelCheck {
  std::size_t condition = 0;       // into Decision::conditions
  ModelRanking model;
  bool agrees = true;              // the model's pick is the measured pick
  bool within_measured_zone = true;  // ... or among the measured survivors within the zone
};

struct DecisionPredictions {
  std::vector<PredictedCondition> predicted;  // rows' order, sizes ascending
  std::vector<ModelCheck> checks;             // measured conditions where the model ranks 2 or more candidates
};

// The decision's own records (extra.decision_condition), the ones its model is fitted on.
std::vector<results::Result> decision_records(const std::vector<results::Result>& records);
// Predictions and checks from a model fitted on the decision's records.
DecisionPredictions predict_decision(const CostModel& m, const decision::Decision& d,
                                     const std::vector<results::Result>& records);
// The same, fitting the model on decision_records(records) first.
DecisionPredictions predict_decision(const decision::Decision& d, const std::vector<results::Result>& records);

// Where a row's measured pick changes between two neighbouring measured
// sizes and the model fitted on the decision's records puts the two picks'
// crossover between them (check_crossovers), the grid size nearest that
// crossover the row has no condition at, and why: the conditions `recommend`
// adds on the time left (decision::ScheduleSettings::extra).
std::vector<decision::ExtraCondition> crossing_conditions(const std::vector<results::Result>& records);

// decision::to_json(d) with the predictions: each predicted condition
// appended to `conditions` ("stop": "predicted", "predicted": true), each
// checked measured condition given `model_check` (docs/report.md).
void add_predictions(nlohmann::json& decision_json, const DecisionPredictions& p);

// The console's words: a predicted cell's mark ("(mmap)"), the legend, and
// the why lines of --explain (predictions, then the measured conditions
// where the model picks otherwise).
std::string predicted_cell_text(const PredictedCondition& p);
inline constexpr const char* kPredictedLegend =
    "(x) predicted by the cost model between the measured sizes on each side: not measured, never counted as measured";
std::string prediction_explain_text(const decision::Decision& d, const DecisionPredictions& p);
// "picked by the model in 97% of 200 resamples" (or "no resamples").
std::string resample_text(const ModelRanking& r);

}  // namespace iolab::report
