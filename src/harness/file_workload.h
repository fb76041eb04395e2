// Inside the harness: the workload a FileExperiment becomes, and the label
// every error and progress line names an experiment by.
#pragma once

#include <memory>
#include <string>

#include "iolab/harness/engine.h"
#include "iolab/harness/runner.h"

namespace iolab::harness {

// "suite/experiment method".
std::string experiment_label(const Result& r);

// `record` receives what the workload learns (cache method, warnings, flush
// counts); it must outlive the workload.
std::unique_ptr<Workload> make_file_workload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch,
                                             Result& record);

}  // namespace iolab::harness
