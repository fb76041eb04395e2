// The cost model's leave-one-size-out figures over every fit, and over
// issue 42's range (cost_model.cpp, docs/model.md). Internal to the report layer.
#pragma once

#include "iolab/report/cost_model.h"

namespace iolab::report::costfit {

// Fills m.validation from the fits' points' leave-one-size-out predictions.
void validate(CostModel& m);

}  // namespace iolab::report::costfit
