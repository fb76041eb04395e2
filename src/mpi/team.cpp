// MPI ranks as the engine's team: one clock for the whole pass, usage summed
// over ranks, errors agreed on by every rank.
#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <set>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/mpi/mpi.h"

namespace iolab::mpi {

int rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int size(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

namespace {

std::string bcast_string(std::string s, int root, MPI_Comm comm) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  s.resize(static_cast<std::size_t>(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, root, comm);
  return s;
}

// The outcome of one rank's step, as data every rank can agree on.
struct Failure {
  int code = 0;  // 0 none, 1 error, 2 usage error
  std::string message;
};

Failure capture(const std::function<void()>& f) {
  Failure out;
  try {
    f();
  } catch (const UsageError& e) {
    out = {2, e.what()};
  } catch (const AgreedError& e) {
    out = {e.exit_code, e.what()};
  } catch (const std::exception& e) {
    out = {1, e.what()};
  }
  return out;
}

// Every rank learns whether some rank failed; all throw the first one's error.
void settle(const Failure& mine, MPI_Comm comm) {
  int me = rank(comm), n = size(comm);
  int candidate = mine.code != 0 ? me : n, first = n;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == n) return;
  int code = mine.code;
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  std::string message = bcast_string(mine.message, first, comm);
  throw AgreedError((first != 0 ? "rank " + std::to_string(first) + ": " : "") + one_line(message), code);
}

}  // namespace

void agree(const std::function<void()>& f, MPI_Comm comm) { settle(capture(f), comm); }

MpiTeam::MpiTeam(MPI_Comm comm) : comm_(comm), rank_(rank(comm)), size_(size(comm)) {
  // Hosts: ranks on one host read one clock, so their MPI_Wtime values compare.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * static_cast<std::size_t>(size_));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm_);
  std::set<std::string> hosts;
  for (int r = 0; r < size_; ++r)
    hosts.insert(std::string(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME));
  nodes_ = static_cast<unsigned>(hosts.size());
  int* is_global = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &is_global, &found);
  global_clock_ = nodes_ == 1 || (found && is_global && *is_global);
}

std::string MpiTeam::clock_description() const {
  return global_clock_ ? "MPI_Wtime: the earliest rank's start to the latest rank's end"
                       : "rank 0's MPI_Wtime from a barrier before the pass to a barrier after it (clocks not global)";
}

harness::PassTiming MpiTeam::run(const harness::PassBody& body) {
  const unsigned w = static_cast<unsigned>(rank_);
  settle(capture([&] {
           if (body.prepare) body.prepare(w);
         }),
         comm_);
  harness::PassTiming t;
  harness::UsageMeter meter(harness::UsageMeter::Scope::Process);
  MPI_Barrier(comm_);
  meter.start();
  double t0 = MPI_Wtime();
  Failure timed = capture([&] { t.tally = body.timed(w); });
  double t1 = MPI_Wtime();
  harness::Usage mine = meter.stop();
  if (!global_clock_) MPI_Barrier(comm_);
  double t_end_barrier = MPI_Wtime();
  // The timed step's failure waits until every rank has left the timed region.
  Failure finish = capture([&] {
    if (body.finish) body.finish(w);
  });
  settle(timed.code != 0 ? timed : finish, comm_);

  double start = t0, end = t1;
  MPI_Allreduce(&t0, &start, 1, MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(&t1, &end, 1, MPI_DOUBLE, MPI_MAX, comm_);
  double own = global_clock_ ? t1 - start : t1 - t0;
  t.worker_s.resize(static_cast<std::size_t>(size_));
  MPI_Allgather(&own, 1, MPI_DOUBLE, t.worker_s.data(), 1, MPI_DOUBLE, comm_);
  t.first_done_s = *std::min_element(t.worker_s.begin(), t.worker_s.end());
  t.last_done_s = *std::max_element(t.worker_s.begin(), t.worker_s.end());
  if (global_clock_) {
    t.seconds = end - start;
  } else {
    double pass = t_end_barrier - t0;  // rank 0's barrier to barrier, sent to all
    MPI_Bcast(&pass, 1, MPI_DOUBLE, 0, comm_);
    t.seconds = pass;
  }
  t.last_done_s = std::max(t.last_done_s, t.seconds);

  // Usage and tallies summed over ranks.
  double local[] = {mine.user_s,
                    mine.sys_s,
                    static_cast<double>(mine.minor_faults),
                    static_cast<double>(mine.major_faults),
                    static_cast<double>(mine.voluntary_ctx),
                    static_cast<double>(mine.involuntary_ctx),
                    static_cast<double>(mine.syscalls_read),
                    static_cast<double>(mine.syscalls_write),
                    static_cast<double>(mine.storage_read_bytes),
                    static_cast<double>(mine.dirtied_bytes),
                    static_cast<double>(t.tally.bytes),
                    static_cast<double>(t.tally.ops),
                    static_cast<double>(t.tally.io_calls),
                    mine.have_proc_io ? 1.0 : 0.0};
  double sum[std::size(local)] = {};
  MPI_Allreduce(local, sum, static_cast<int>(std::size(local)), MPI_DOUBLE, MPI_SUM, comm_);
  t.usage.seconds = t.seconds;
  t.usage.user_s = sum[0];
  t.usage.sys_s = sum[1];
  t.usage.minor_faults = static_cast<std::int64_t>(sum[2]);
  t.usage.major_faults = static_cast<std::int64_t>(sum[3]);
  t.usage.voluntary_ctx = static_cast<std::int64_t>(sum[4]);
  t.usage.involuntary_ctx = static_cast<std::int64_t>(sum[5]);
  t.usage.syscalls_read = static_cast<std::uint64_t>(sum[6]);
  t.usage.syscalls_write = static_cast<std::uint64_t>(sum[7]);
  t.usage.storage_read_bytes = static_cast<std::uint64_t>(sum[8]);
  t.usage.dirtied_bytes = static_cast<std::uint64_t>(sum[9]);
  // The device's counters are the whole machine's: every rank on a host sees
  // the same ones, so the largest is taken, not the sum.
  double device[2] = {static_cast<double>(mine.device_read_bytes), static_cast<double>(mine.device_write_bytes)};
  double most[2] = {};
  int have = mine.have_device ? 1 : 0, all_have = 0;
  MPI_Allreduce(device, most, 2, MPI_DOUBLE, MPI_MAX, comm_);
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_LAND, comm_);
  t.usage.device_read_bytes = static_cast<std::uint64_t>(most[0]);
  t.usage.device_write_bytes = static_cast<std::uint64_t>(most[1]);
  t.usage.have_device = all_have != 0;
  t.tally.bytes = static_cast<std::uint64_t>(sum[10]);
  t.tally.ops = static_cast<std::uint64_t>(sum[11]);
  t.tally.io_calls = static_cast<std::uint64_t>(sum[12]);
  t.usage.have_proc_io = sum[13] == static_cast<double>(size_);
  return t;
}

bool MpiTeam::all(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_);
  return out != 0;
}

double MpiTeam::max(double mine) {
  double out = mine;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return out;
}

void MpiTeam::combine(LatencyHistogram& h) {
  std::array<std::uint64_t, LatencyHistogram::kBuckets> counts{};
  MPI_Allreduce(h.buckets().data(), counts.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM, comm_);
  std::uint64_t n = h.count(), lo = h.count() ? h.min() : UINT64_MAX, hi = h.max();
  std::uint64_t total = 0, least = 0, most = 0;
  MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, comm_);
  MPI_Allreduce(&lo, &least, 1, MPI_UINT64_T, MPI_MIN, comm_);
  MPI_Allreduce(&hi, &most, 1, MPI_UINT64_T, MPI_MAX, comm_);
  h.assign(counts, total, least, most);
}

std::string MpiTeam::broadcast(const std::string& value) { return bcast_string(value, 0, comm_); }

}  // namespace iolab::mpi
