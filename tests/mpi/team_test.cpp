// The engine across MPI ranks (run by ctest under `mpirun -np 2`): a pass
// lasts from the earliest rank's start to the latest rank's end, so a rank
// that starts its calls late counts in full; tallies and usage are summed
// over ranks; a failure on one rank is every rank's, with its message.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "iolab/base/error.h"
#include "iolab/harness/engine.h"
#include "iolab/mpi/mpi.h"

namespace iolab::mpi {
namespace {

class SleepyRanks final : public harness::Workload {
 public:
  explicit SleepyRanks(unsigned late) : late_(late) {}
  harness::PassBody pass(harness::PassKind kind) override {
    harness::PassBody b;
    b.timed = [this, kind](unsigned w) {
      if (w == late_ && kind == harness::PassKind::Timed) std::this_thread::sleep_for(std::chrono::milliseconds(150));
      if (kind == harness::PassKind::Latency) latency(w).record(1000);
      return harness::WorkerTally{1 << 20, 2, 2};
    };
    return b;
  }

 private:
  unsigned late_;
};

harness::EngineSettings quick() {
  harness::EngineSettings s;
  s.reps = 2;
  s.warmup = 1;
  s.min_time = 0;
  return s;
}

TEST(MpiTeam, ALateRankLengthensThePassOnEveryRank) {
  MpiTeam team;
  ASSERT_GE(team.workers(), 2u) << "run under mpirun -np 2 (or more)";
  SleepyRanks w(team.workers() - 1);
  results::Result r;
  ASSERT_TRUE(harness::measure(w, team, quick(), r));
  if (!team.reports()) return;  // the figures are rank 0's
  ASSERT_EQ(r.samples_s.size(), 2u);
  // A lower bound: the late rank slept at least 150 ms inside the pass.
  for (double s : r.samples_s) EXPECT_GE(s, 0.150);
  EXPECT_EQ(r.bytes, team.workers() * (std::uint64_t{1} << 20));  // summed over ranks
  EXPECT_EQ(r.ops, team.workers() * 2u);
  EXPECT_EQ(r.threads, team.workers());
  EXPECT_GE(r.extra.at("last_done_s").get<double>(), 0.150);
  ASSERT_TRUE(r.latency_ns.has_value());
  EXPECT_EQ(r.latency_ns->samples, team.workers());  // every rank's histogram, combined
}

class FailingRank final : public harness::Workload {
 public:
  harness::PassBody pass(harness::PassKind) override {
    harness::PassBody b;
    b.timed = [](unsigned w) -> harness::WorkerTally {
      if (w == 1) throw Error("pwrite", "rank one's file", "injected failure", EIO);
      return {};
    };
    return b;
  }
};

TEST(MpiTeam, OneRanksFailureIsEveryRanksWithItsMessage) {
  MpiTeam team;
  FailingRank w;
  results::Result r;
  try {
    harness::measure(w, team, quick(), r);
    ADD_FAILURE() << "no rank reported the failure";
  } catch (const AgreedError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: pwrite rank one's file: injected failure"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.exit_code, 1);
  }
}

TEST(MpiTeam, AgreementAndBroadcast) {
  MpiTeam team;
  EXPECT_FALSE(team.all(rank() != 1));
  EXPECT_TRUE(team.all(true));
  EXPECT_EQ(team.max(static_cast<double>(rank())), static_cast<double>(size() - 1));
  EXPECT_EQ(team.broadcast(rank() == 0 ? "from rank 0" : "ignored"), "from rank 0");
  EXPECT_THROW(agree([] {
                 if (rank() == 1) throw UsageError("--bs 0", "must be at least one byte");
               }),
               AgreedError);
}

}  // namespace
}  // namespace iolab::mpi

extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }  // Open MPI's own leaks

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints, so ctest's log holds one report.
  if (iolab::mpi::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
