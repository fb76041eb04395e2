// The MPI adapter: MPI ranks as a Team of the engine (one worker per rank),
// and MPI-IO as io methods. iolab-mpi is argument parsing and output on top
// of these and of the region workload the thread suite uses.
#pragma once

#define OMPI_SKIP_MPICXX 1  // the C API only: the C++ bindings are deprecated and not -Wpedantic clean
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "iolab/harness/engine.h"
#include "iolab/io/file.h"

namespace iolab::mpi {

int rank(MPI_Comm comm = MPI_COMM_WORLD);
int size(MPI_Comm comm = MPI_COMM_WORLD);

// A failure every rank agreed on: what() is the first failing rank's error
// ("rank 3: ..." when not rank 0); exit_code 2 for bad usage, 1 otherwise.
struct AgreedError : std::runtime_error {
  AgreedError(const std::string& what, int code) : std::runtime_error(what), exit_code(code) {}
  int exit_code;
};

// Runs `f` on every rank and agrees on the outcome: when any rank threw,
// every rank throws AgreedError with the first failing rank's message.
// `f` must reach the same collective calls on every rank, or fail before them.
void agree(const std::function<void()>& f, MPI_Comm comm = MPI_COMM_WORLD);

// The job's ranks as the engine's workers: worker w is rank w. A pass lasts
// from the earliest rank's start to the latest rank's end, read on one clock:
// MPI_Wtime reduced with min and max when the clock is global (MPI says so,
// or every rank runs on one host); otherwise rank 0's time from a barrier
// before the pass to a barrier after it. Usage is summed over ranks.
class MpiTeam final : public harness::Team {
 public:
  explicit MpiTeam(MPI_Comm comm = MPI_COMM_WORLD);
  unsigned workers() const override { return static_cast<unsigned>(size_); }
  std::vector<unsigned> local_workers() const override { return {static_cast<unsigned>(rank_)}; }
  harness::PassTiming run(const harness::PassBody& body) override;
  bool reports() const override { return rank_ == 0; }
  std::string clock_description() const override;
  bool all(bool mine) override;
  double max(double mine) override;
  void combine(LatencyHistogram& h) override;
  std::string broadcast(const std::string& value) override;
  // Distinct hosts among the ranks.
  unsigned nodes() const noexcept { return nodes_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  unsigned nodes_ = 1;
  bool global_clock_ = false;
};

// Rank 0's process, for the other ranks of its host to wait on when a
// signal ends the job. mpirun passes SIGTERM to every rank, then SIGKILLs
// what is left as soon as one rank ends (its one-second wait is cut short by
// the SIGCHLD): a rank that ended first would cut short rank 0's publishing
// of the results so far. Rank 0 is told apart by host and process: the same
// boot and PID namespace, then a pidfd, so a recycled PID is never waited on.
class RankZeroProcess {
 public:
  explicit RankZeroProcess(MpiTeam& team);  // collective
  ~RankZeroProcess();
  RankZeroProcess(const RankZeroProcess&) = delete;
  RankZeroProcess& operator=(const RankZeroProcess&) = delete;
  // Blocks until rank 0's process has ended or `limit` has passed; returns
  // at once on rank 0 itself and on another host. Safe on the signal cleanup thread.
  void wait_for_end(int limit_ms) const noexcept;

 private:
  int pidfd_ = -1;
};

// MPI-IO as an io method: independent (MPI_File_read_at/write_at) or
// collective (..._at_all) calls on files opened over `comm` (MPI_COMM_WORLD
// for one shared file, MPI_COMM_SELF for a file per rank). open, sync and
// close are collective over `comm`. An error inside a data call is kept and
// thrown at close(), after every rank has made the same collective calls.
std::unique_ptr<io::Method> mpiio_method(MPI_Comm comm, bool collective);

}  // namespace iolab::mpi
