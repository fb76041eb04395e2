// Internal: a decision candidate's record at a condition, what matches it to
// the cost model's fit (cost_model_check.cpp; decision_prediction.cpp).
#pragma once

#include <string>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report::costcheck {

const results::Result* candidate_record(const std::vector<results::Result>& records, const std::string& condition,
                                        const std::string& label);

}  // namespace iolab::report::costcheck
