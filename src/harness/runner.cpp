// The runner: turns experiments into workloads for the engine. Everything
// that is not the measured operation happens outside the timed region (file
// preparation, cache state, opening, verification); everything the measured
// operation costs is inside it (docs/results-format.md, "The timed region").
#include "iolab/harness/runner.h"

#include <utility>

#include "file_workload.h"
#include "iolab/base/error.h"

namespace iolab::harness {

std::string experiment_label(const results::Result& r) {
  std::string s = r.suite.empty() ? "" : r.suite + "/";
  s += r.experiment.empty() ? r.method : r.experiment + " " + r.method;
  return s;
}

namespace {

Error not_verified(const results::Result& r) {
  return Error("verify", experiment_label(r), "data did not verify; no figure is reported for it", EIO);
}

// A CustomExperiment's callbacks as a one-worker workload.
class CallbackWorkload final : public Workload {
 public:
  explicit CallbackWorkload(const CustomExperiment& e) : e_(e) {}
  std::optional<std::string> setup() override {
    if (e_.labels.skipped) return *e_.labels.skipped;
    if (!e_.timed) throw Error("run", experiment_label(e_.labels), "a custom experiment needs a timed callback", EINVAL);
    return std::nullopt;
  }
  void before_pass(PassKind) override {
    if (e_.prepare) e_.prepare();
  }
  PassBody pass(PassKind kind) override {
    PassBody body;
    if (kind == PassKind::Verify) {
      body.timed = [this](unsigned) {
        if (!e_.verification()) throw not_verified(e_.labels);
        return WorkerTally{};
      };
      return body;
    }
    body.timed = [this](unsigned) {
      Repetition r = e_.timed();
      if (r.io_calls == 0) kernel_counts_ = true;
      return WorkerTally{r.bytes, r.ops, r.io_calls};
    };
    return body;
  }
  void after_pass(PassKind) override {
    if (e_.cleanup) e_.cleanup(data_check());
  }
  bool records_latency() const override { return false; }
  bool has_verification_pass() const override { return static_cast<bool>(e_.verification); }
  bool kernel_counts_calls() const override { return kernel_counts_; }

 private:
  const CustomExperiment& e_;
  bool kernel_counts_ = false;
};

}  // namespace

results::Result labels_of(const FileExperiment& e) {
  results::Result r;
  r.suite = e.suite;
  r.experiment = e.experiment;
  r.method = e.method_label.empty() ? e.method : e.method_label;
  r.op = e.op;
  r.pattern = e.pattern;
  r.block_size = e.block_size;
  r.file_size = e.ops != 0 ? e.ops * e.block_size : e.file_size;
  r.buffer = e.buffer;
  r.cache = e.cache;
  r.sync = e.sync;
  r.reference = e.reference;
  return r;
}

Runner::Runner(RunConfig config, io::ScratchDir& scratch) : config_(std::move(config)), scratch_(scratch) {
  if (config_.reps == 0) throw UsageError("--reps 0", "at least one timed repetition is needed");
  watch_device(scratch_.path());  // records say what the device really read and wrote
}
Runner::~Runner() = default;

EngineSettings Runner::settings() const {
  EngineSettings s;
  s.reps = config_.reps;
  s.warmup = config_.warmup;
  s.min_time = config_.min_time;
  s.max_time = config_.max_time;
  s.calibration_reps = std::max(1u, config_.calibration_reps);
  s.latency = config_.latency;
  s.on_pass = config_.on_pass;
  s.on_pass_begin = config_.on_pass_begin;
  s.on_pass_end = config_.on_pass_end;
  return s;
}

results::Result Runner::skip(results::Result labels, std::string reason) {
  labels.skipped = std::move(reason);
  labels.reps = 0;
  labels.samples_s.clear();
  if (config_.on_result) config_.on_result(labels);
  return labels;
}

results::Result Runner::report(results::Result measured) {
  if (config_.on_result) config_.on_result(measured);
  return measured;
}

results::Result Runner::run(Workload& workload, results::Result labels, Team& team) {
  if (config_.on_experiment) config_.on_experiment(experiment_label(labels));
  measure(workload, team, settings(), labels);
  if (labels.skipped) labels.reps = 0;
  if (config_.on_result) config_.on_result(labels);
  return labels;
}

results::Result Runner::run(Workload& workload, results::Result labels) {
  LocalTeam one(1);
  return run(workload, std::move(labels), one);
}

results::Result Runner::run(const FileExperiment& e) {
  results::Result r = labels_of(e);
  std::unique_ptr<Workload> workload = make_file_workload(e, config_, scratch_, r);
  if (config_.on_experiment) config_.on_experiment(experiment_label(r));
  LocalTeam one(1);
  EngineSettings s = settings();
  s.latency = s.latency && e.latency;
  measure(*workload, one, s, r);
  if (r.skipped) r.reps = 0;
  if (config_.on_result) config_.on_result(r);
  return r;
}

results::Result Runner::run(const CustomExperiment& e) {
  CallbackWorkload workload(e);
  results::Result r = e.labels;
  r.samples_s.clear();
  r.warnings.clear();
  r.verified = false;
  if (config_.on_experiment) config_.on_experiment(experiment_label(r));
  LocalTeam one(1);
  if (measure(workload, one, settings(), r)) {
    r.verified = static_cast<bool>(e.verification);  // it ran: a failure throws
    if (e.verify) {
      if (!e.verify()) throw not_verified(r);
      r.verified = true;
    }
  } else {
    r.reps = 0;
  }
  if (config_.on_result) config_.on_result(r);
  return r;
}

}  // namespace iolab::harness
