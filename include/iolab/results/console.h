// Terminal output of a run: a progress line with ETA on stderr (only when it
// is a terminal), and per experiment group a table of methods: median
// throughput, spread, ops/s, p99 latency, CPU, "x vs best", skipped rows with
// their reason, and the seed's published figure labelled as theirs.
// No ANSI codes when NO_COLOR is set or the stream is not a terminal.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::results {

// True when `stream` is a terminal, TERM is not "dumb", and NO_COLOR is unset or empty (no-color.org).
bool use_color(std::FILE* stream);

// The tables for `results`, grouped by (suite, experiment) in first-seen order.
std::string format_tables(const std::vector<Result>& results, bool color);

// A one-line progress display on stderr, redrawn in place. Disabled (no
// output at all) when stderr is not a terminal.
class ProgressLine {
 public:
  // `planned`: experiments expected in total (0 when unknown: no overall ETA).
  // `ansi`: may use escape codes to erase the line (false under NO_COLOR).
  ProgressLine(bool enabled, unsigned planned, bool ansi = true);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void set_context(std::string context);  // e.g. "suite 2/7 seq-read"
  void begin(const std::string& label);
  // Passes of the current experiment done, and expected in all (the engine
  // learns the total once it has timed a pass).
  void pass(unsigned done, unsigned total);
  void end();
  // Erases the line so ordinary output can be printed; the next update redraws.
  void clear();
  bool enabled() const noexcept { return enabled_; }

 private:
  void draw();
  std::string erase() const;
  bool enabled_;
  unsigned planned_, finished_ = 0, reps_ = 0, rep_done_ = 0;
  std::string context_, label_;
  std::chrono::steady_clock::time_point start_, exp_start_, last_draw_;
  bool drawn_ = false;
  bool ansi_ = true;
  std::size_t last_width_ = 0;
};

}  // namespace iolab::results
