// Internal: how the report groups results into charts. A chart joins the
// points of one experiment family only: per suite, records that share op,
// pattern, cache state and flush policy, from experiments that measured the
// same contenders (method, buffer, sync call, queue depth, results file) and
// differ in one parameter, which becomes x: block size, threads, or the work
// per pass. Experiments with different contenders (the 128 B calls and the
// 1-4 KiB calls of write-buffering) are different families: separate charts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iolab/results/record.h"

namespace iolab::report {

// One results file and the name it goes by in the report.
struct Source {
  const results::Results* results = nullptr;
  std::string label;
};

enum class Axis { BlockSize, Threads, WorkPerPass, TotalDepth, WorkingSetRatio, None };

struct FamilyChart;

struct Point {
  const results::Result* result = nullptr;
  std::size_t source = 0;
  std::string series;
  double x = 0;
};

struct Family {
  std::string suite;
  std::string title;
  Axis axis = Axis::None;
  bool bytes_metric = true;  // y is MiB/s; otherwise operations per second
  std::vector<Point> points;
  std::vector<std::string> series;       // first-seen order
  std::vector<std::string> experiments;  // first-seen order
  // A family with a chart of its own (family_charts.h); null: the generic one.
  const FamilyChart* chart = nullptr;
};

struct SuiteView {
  std::string suite;
  std::vector<Family> families;
  // Every record of the suite, measured or not, for warnings and skips.
  std::vector<std::pair<const results::Result*, std::size_t>> records;
};

std::vector<SuiteView> group_results(const std::vector<Source>& sources);

// "block size (bytes per call)", "threads", "bytes per pass", "requests in flight" ...
std::string axis_title(const Family& f);
// The x value of a point as text ("4 KiB", "8 threads", "32 in flight").
std::string x_text(const Family& f, double x);

}  // namespace iolab::report
