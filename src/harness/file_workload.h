// Inside the harness: the workload a FileExperiment becomes (its setup in
// file_workload.cpp, its passes in file_passes.cpp), and the label every
// error and progress line names an experiment by.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iolab/harness/engine.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/runner.h"
#include "iolab/io/background_flusher.h"
#include "iolab/io/registry.h"
#include "full_cache.h"

namespace iolab::harness {

// "suite/experiment method".
std::string experiment_label(const results::Result& r);

// `record` receives what the workload learns (cache method, warnings, flush
// counts); it must outlive the workload.
std::unique_ptr<Workload> make_file_workload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch,
                                             results::Result& record);

// Files this experiment created; removed on every way out.
class ExperimentFiles {
 public:
  explicit ExperimentFiles(io::ScratchDir& s) : scratch_(s) {}
  ~ExperimentFiles() { remove_all(); }
  ExperimentFiles(const ExperimentFiles&) = delete;
  ExperimentFiles& operator=(const ExperimentFiles&) = delete;
  std::filesystem::path create(const std::string& stem) {
    files_.push_back(scratch_.create_unique_file(stem));
    return files_.back();
  }
  void remove(const std::filesystem::path& f) {
    files_.erase(std::remove(files_.begin(), files_.end(), f), files_.end());
    scratch_.remove_file(f);
  }
  void remove_all() noexcept {
    for (const auto& f : files_) {
      try {
        scratch_.remove_file(f);
      } catch (...) {  // already gone: nothing left to clean
      }
    }
    files_.clear();
  }

 private:
  io::ScratchDir& scratch_;
  std::vector<std::filesystem::path> files_;
};

// io::FlushSchedule::AsyncBytes: each write tells the background flusher how far the file has been written.
class FlushOnWrite final : public WriteObserver {
 public:
  explicit FlushOnWrite(io::BackgroundFlusher& f) : flusher_(f) {}
  void wrote(std::uint64_t total) override { flusher_.wrote(total); }

 private:
  io::BackgroundFlusher& flusher_;
};

// A file experiment as a one-worker workload.
class FileWorkload final : public Workload {
 public:
  FileWorkload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch, results::Result& record)
      : e_(e),
        config_(config),
        record_(record),
        scratch_(scratch),
        files_(scratch),
        method_(e.method_object ? *e.method_object : io::find_file_method(e.method)) {}

  std::optional<std::string> setup() override;
  void before_pass(PassKind kind) override;
  PassBody pass(PassKind kind) override;
  void after_pass(PassKind kind) override;
  void teardown() override;

  bool kernel_counts_calls() const override { return traits_.library_calls; }
  // Written files are read back after every pass: no verification pass.
  bool has_verification_pass() const override { return e_.op == results::Op::Read; }
  bool verifies_after_timing() const override { return e_.op == results::Op::Read; }
  results::LatencySource latency_source() const override {
    return queued_ ? results::LatencySource::EveryRequest : results::LatencySource::EveryCall;
  }

  void describe(results::Result& r) const override;

 private:
  std::optional<std::string> setup_reads();
  void next_window(std::uint64_t n);
  std::optional<std::string> setup_writes();
  std::optional<std::string> preflight(const std::filesystem::path& file, io::Access access, const void* buffer,
                                       std::optional<io::Durability> sync);

  const FileExperiment& e_;
  const RunConfig& config_;
  results::Result& record_;
  io::ScratchDir& scratch_;
  ExperimentFiles files_;
  const io::Method& method_;
  io::FileOptions opts_;
  io::MethodTraits traits_;
  bool direct_ = false, queued_ = false;
  io::BufferKind buffer_ = io::BufferKind::Heap;
  results::Eviction eviction_ = results::Eviction::PerFile;
  io::FlushPolicy sync_;
  RequestPlan plan_;
  std::unique_ptr<ReadSlots> slots_;
  std::unique_ptr<PatternContent> content_;
  std::unique_ptr<WriteSource> source_;
  std::filesystem::path file_;
  std::unique_ptr<io::File> file_open_;
  std::unique_ptr<io::BackgroundFlusher> flusher_;
  std::unique_ptr<FlushOnWrite> on_write_;
  LoopOutcome outcome_;
  std::string cache_method_;
  double least_resident_ = 1.0, most_resident_ = 0.0;
  std::vector<std::uint64_t> order_;  // windows: the whole permutation, a pass taking the next window of it
  std::uint64_t cursor_ = 0, verified_bytes_ = 0;
  // Verify passes run, and the bytes the last one checked (the pass after timing).
  unsigned verify_passes_ = 0;
  std::uint64_t verified_again_bytes_ = 0;
  std::optional<FullCache> full_;  // CacheState::Full: made and proven before every pass
  std::vector<double> flushes_, bytes_per_flush_, poller_ns_;
};

}  // namespace iolab::harness
