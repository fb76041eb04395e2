// A signal ends a run cleanly: the scratch directory (and what libraries made
// in it, fio's files, SQLite's WAL) is removed, the results so far are kept
// marked incomplete, and the process ends by the same signal.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/decision_file.h"
#include "cli/run_program.h"
#include "io/io_test_support.h"

namespace {

namespace fs = std::filesystem;
using namespace iolab::testing;  // run_program.h, decision_file.h, io_test_support.h: the CLI tests' kit

class InterruptedBySignal : public ::testing::TestWithParam<int> {};

TEST_P(InterruptedBySignal, RemovesScratchAndKeepsTheResultsSoFar) {
  const int sig = GetParam();
  Workspace w;
  const fs::path out = w / "r.json";
  // 4 KiB calls (done in a moment), then 1-byte calls (minutes).
  auto run = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "4k,1", "--reps", "1000", "--warmup",
                          "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return run->out_so_far().find("custom / read seq 4k") != std::string::npos; }))
      << "the first experiment never finished";
  ASSERT_FALSE(w.leftovers().empty()) << "the run is under way: its scratch directory exists";
  run->send(sig);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, sig) << "ends by the same signal; exit " << o.exit_code << "\n" << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  const std::string why = "interrupted by " + std::string("SIG") + ::sigabbrev_np(sig);
  EXPECT_NE(o.err.find(why), std::string::npos) << o.err;
  ASSERT_TRUE(fs::exists(out)) << o.err;
  nlohmann::json j = json_of(out);
  EXPECT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["incomplete"], why);
  EXPECT_TRUE(fs::exists(w / "r.csv"));
  EXPECT_TRUE(fs::exists(w / "r.html"));
  for (const auto& name : names_in(w.path())) EXPECT_NE(name.front(), '.') << name;
}

INSTANTIATE_TEST_SUITE_P(Run, InterruptedBySignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGALRM),
                         [](const auto& p) { return std::string(::sigabbrev_np(p.param)); });

// One account of where the records went: "the 1 result so far is in ...",
// never followed by "no experiment had finished, so no results were written".
TEST(Interrupt, CtrlCAfterTheFirstResultSaysWhereItIsAndNothingContrary) {
  Workspace w;
  const fs::path out = w / "r.json";
  auto run = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "4k,1", "--reps", "1000", "--warmup",
                          "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return run->out_so_far().find("custom / read seq 4k") != std::string::npos; }));
  run->send(SIGINT);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGINT) << o.err;
  EXPECT_EQ(o.err_lines(), 1u) << o.err;
  EXPECT_NE(o.err.find("iolab: interrupted by SIGINT; the 1 result so far is in " + out.string() +
                       " (and .csv, .html), marked incomplete\n"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("no experiment had finished"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("no results were written"), std::string::npos) << o.err;
}

// Stopped before its first result: nothing to publish, and neither the
// results nor the lock that held their name stay behind.
TEST(Interrupt, ASignalBeforeTheFirstResultLeavesNoLockFile) {
  Workspace w;
  const fs::path out = w / "r.json", lock = w / ".r.json.lock";
  // 1-byte calls: minutes for the first experiment.
  auto run = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "1", "--reps", "1000", "--warmup",
                          "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return run->out_so_far().find("iolab ") != std::string::npos && fs::exists(lock); }))
      << "the run never started";
  run->send(SIGTERM);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGTERM) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_NE(o.err.find("no experiment had finished, so no results were written"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

// recommend --save stopped mid-measurement: one line on stderr saying so,
// its scratch directory and --save's lock gone.
TEST(Interrupt, RecommendStoppedBySigtermSaysSoAndLeavesNoLockFile) {
  Workspace w;
  const fs::path save = w / "d.json", lock = w / ".d.json.lock";
  auto run = start_iolab({"recommend", "--save", save.string(), "--dir", w.scratch().string(), "--max-file", "64k",
                          "--op", "read", "--cache", "warm"});
  // The lock is taken before measuring, the scratch directory made as it starts.
  ASSERT_TRUE(wait_until([&] { return fs::exists(lock) && !w.leftovers().empty(); })) << "never started measuring";
  run->send(SIGTERM);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGTERM) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_NE(o.err.find("iolab: recommend interrupted by SIGTERM"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_FALSE(fs::exists(save));
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

TEST(Interrupt, CtrlCInTheStoreSuitesSqlitePhaseRemovesItsWal) {
  Workspace w;
  const fs::path out = w / "r.json";
  auto run = start_iolab({"run", "store", "--scale", "tiny", "--records", "20000", "--reps", "1", "--warmup", "0",
                          "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  // SQLite's write-ahead log exists while its phases run (a quarter second each at least).
  auto sqlite_running = [&] {
    for (const auto& name : w.leftovers())
      if (name.ends_with("-wal")) return true;
    return false;
  };
  ASSERT_TRUE(wait_until(sqlite_running)) << "never saw SQLite's -wal";
  run->send(SIGINT);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGINT) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
  nlohmann::json j = json_of(out);
  EXPECT_EQ(j["incomplete"], "interrupted by SIGINT");
  EXPECT_GE(j["results"].size(), 1u) << "the backends measured before SQLite";
}

TEST(Interrupt, OutputIntoAClosedPipeEndsBySigpipeAndRemovesScratch) {
  Workspace w;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // `iolab run | head -1` once head has gone
  iolab::testing::StartOptions into_pipe;
  into_pipe.stdout_fd = fds[1];
  auto run = start_iolab(small_run(w, {"--out", (w / "r.json").string()}), into_pipe);
  ::close(fds[1]);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGPIPE) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

// A "fio" that stands for one in the middle of its run: it says where it is
// (its pid, in a file of the test's), then keeps re-creating its data file as
// fio does between loops, until killed.
void write_endless_fio(const Workspace& p, const fs::path& fake, const fs::path& mark) {
  write_file(fake, "#!/bin/sh\n"
                   "if [ \"$1\" = --version ]; then echo fio-3.33; exit 0; fi\n"
                   "f=; for a; do case \"$a\" in --filename=*) f=\"${a#--filename=}\";; esac; done\n"
                   "echo $$ > " + (p / "fio-pid.tmp").string() + " && mv " + (p / "fio-pid.tmp").string() + " " +
                       mark.string() + "\n"
                   "while :; do : >> \"$f\"; sleep 0.01; done\n");
  fs::permissions(fake, fs::perms::owner_all);
}

TEST(Interrupt, ASignalDuringCrosschecksFioPhaseStopsFioAndRemovesItsFiles) {
  Workspace p;
  const fs::path fake = p / "fio", mark = p / "fio-pid";
  write_endless_fio(p, fake, mark);
  auto run = iolab::testing::start_iolab({"crosscheck", "--fio-program", fake.string(), "--method", "pread", "--bs", "4k",
                                       "--size", "64k", "--rounds", "1", "--reps", "1", "--warmup", "0", "--min-time",
                                       "0", "--dir", p.scratch().string()});
  ASSERT_TRUE(iolab::testing::wait_until([&] { return fs::exists(mark); })) << "fio never started";
  const pid_t fio = std::stoi(read_file(mark));
  run->send(SIGTERM);
  ProgramRun r = run->finish();
  EXPECT_EQ(r.signal, SIGTERM) << "exit " << r.exit_code << ": " << r.err;
  EXPECT_NE(r.err.find("iolab: crosscheck interrupted by SIGTERM"), std::string::npos) << r.err;
  // fio ended with iolab (gone, or a zombie waiting for init), not writing on.
  auto state = [&] {
    std::ifstream in("/proc/" + std::to_string(fio) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? 'X' : text[close + 2];
  };
  const bool ended = iolab::testing::wait_until([&] { return state() == 'X' || state() == 'Z'; }, std::chrono::seconds(10));
  if (!ended) ::kill(fio, SIGKILL);  // leave nothing running
  EXPECT_TRUE(ended) << "fio (pid " << fio << ") still runs after iolab ended";
  EXPECT_TRUE(names_in(p.scratch()).empty()) << "scratch left behind: " << (names_in(p.scratch()).empty() ? "" : names_in(p.scratch()).front());
}

// crosscheck --out stopped mid-run: no comparison, and no lock file beside --out.
TEST(Interrupt, ASignalDuringCrosscheckLeavesNoLockBesideItsOut) {
  Workspace p;
  const fs::path fake = p / "fio", mark = p / "fio-pid", out = p / "c.json", lock = p / ".c.json.lock";
  write_endless_fio(p, fake, mark);
  auto run = start_iolab({"crosscheck", "--fio-program", fake.string(), "--method", "pread", "--bs", "4k", "--size",
                          "64k", "--rounds", "1", "--reps", "1", "--warmup", "0", "--min-time", "0", "--dir",
                          p.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return fs::exists(mark); })) << "fio never started";
  EXPECT_TRUE(fs::exists(lock)) << "--out is locked while the crosscheck runs";
  const pid_t fio = std::stoi(read_file(mark));
  run->send(SIGINT);
  ProgramRun r = run->finish();
  if (!wait_until([&] { return ::kill(fio, 0) != 0; }, std::chrono::seconds(10))) ::kill(fio, SIGKILL);  // leave nothing running
  EXPECT_EQ(r.signal, SIGINT) << "exit " << r.exit_code << ": " << r.err;
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace

// SIGKILL leaves what no handler can remove: the lock beside --out, the
// scratch directory. Neither is in the way of the next run under the same
// name, and that run removes both (the lock is unlocked, the directory's
// owner dead).
TEST(Interrupt, WhatASigkilledRunLeftIsReclaimedByTheNextRunOfTheSameName) {
  Workspace w;
  const fs::path out = w / "r.json", lock = w / ".r.json.lock";
  auto killed = start_iolab({"run", "--method", "pread", "--size", "256k", "--bs", "1", "--reps", "1000", "--warmup",
                             "0", "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out",
                             out.string()});
  // Started: the lock taken, and the run's file made and named in its scratch directory's list.
  // A directory or file is made a moment before it is listed; killed between the two, it is not
  // provably iolab's and rightly stays, so the kill waits until everything there is listed.
  auto all_listed = [&] {
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(w.scratch(), ec)) {
      const fs::path list = d.path() / ".iolab-scratch";
      if (!fs::exists(list)) return false;
      const std::string listed = "\n" + read_file(list);
      bool any = false;
      for (const auto& f : fs::directory_iterator(d.path(), ec)) {
        const std::string name = f.path().filename().string();
        if (name == ".iolab-scratch") continue;
        if (listed.find("\n" + name + "\n") == std::string::npos && listed.find("\n" + name + "/\n") == std::string::npos)
          return false;
        any = true;
      }
      return any;
    }
    return false;
  };
  ASSERT_TRUE(wait_until([&] { return fs::exists(lock) && all_listed(); })) << "the run never started";
  killed->send(SIGKILL);
  ProgramRun k = killed->finish();
  ASSERT_EQ(k.signal, SIGKILL);
  ASSERT_TRUE(fs::exists(lock)) << "SIGKILL runs no handler: the lock stays";
  ASSERT_FALSE(w.leftovers().empty()) << "and so does the scratch directory";
  // A list changed in the last 2 s may be one being made: the next run waits
  // for it to be quiet. Its clock moved on instead of this test sleeping.
  for (const auto& d : fs::directory_iterator(w.scratch())) {
    const fs::path list = d.path() / ".iolab-scratch";
    ASSERT_TRUE(fs::exists(list)) << d.path();
    fs::last_write_time(list, fs::last_write_time(list) - std::chrono::seconds(10));
  }

  ProgramRun o = run_iolab({"run", "--method", "pread", "--size", "64k", "--bs", "4k", "--reps", "2", "--warmup", "0",
                            "--min-time", "0", "--no-latency", "--dir", w.scratch().string(), "--out", out.string()});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(fs::exists(out)) << o.err;
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}
