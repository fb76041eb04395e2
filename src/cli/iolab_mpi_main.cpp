// iolab-mpi: seed 003's parallel workload across MPI ranks. Each rank owns a
// disjoint region of one shared file (or a file of its own), writes it, reads
// it back, and checks it. Methods: posix (pwrite/pread), mpiio (independent
// MPI_File_write_at/read_at) and mpiio-collective (..._at_all). Rank 0
// gathers the timings (min over ranks = first done, max = last done) and
// writes iolab's results JSON, so `iolab report` and `compare` read it.
//
//   mpirun -np 4 iolab-mpi parallel --size 64m --bs 1m --out results/mpi.json
#define OMPI_SKIP_MPICXX 1  // the C API only: the C++ bindings are deprecated and not -Wpedantic clean
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "iolab/error.h"
#include "iolab/harness/result.h"
#include "iolab/harness/runner.h"
#include "iolab/harness/usage.h"
#include "iolab/io/buffer.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/parallel.h"
#include "iolab/units.h"
#include "iolab/version.h"

namespace iolab::mpi {
namespace {

namespace par = suites::parallel;

int g_rank = 0, g_size = 1;

struct Settings {
  std::string size = "64m", block = "1m", dir, out, layout = "shared-file";
  std::vector<std::string> methods = {"posix", "mpiio", "mpiio-collective"};
  unsigned reps = 5, warmup = 1;
  bool fsync = false;
  std::uint64_t seed = 0x10AB;
  // Parsed:
  std::uint64_t region = 0, bs = 0;
  bool shared = true;
};

// Runs `f` on every rank, then agrees on the outcome. When any rank failed,
// rank 0 prints the first failing rank's message as one line and the whole
// job aborts with 2 (bad usage) or 1 (a failure while running). `f` must
// reach the same collective calls on every rank, or not fail between them.
template <typename F>
void step(F&& f) {
  std::string message;
  int code = 0;
  try {
    f();
  } catch (const UsageError& e) {
    message = e.what();
    code = 2;
  } catch (const std::exception& e) {
    message = e.what();
    code = 1;
  }
  int mine = code != 0 ? g_rank : g_size, first = g_size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == g_size) return;
  if (g_rank == first && first != 0) {
    int len = static_cast<int>(message.size());
    MPI_Send(&code, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(&len, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    MPI_Send(message.data(), len, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
  }
  if (g_rank == 0) {
    if (first != 0) {
      int len = 0;
      MPI_Recv(&code, 1, MPI_INT, first, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(&len, 1, MPI_INT, first, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      message.assign(static_cast<std::size_t>(len), '\0');
      MPI_Recv(message.data(), len, MPI_CHAR, first, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    std::string where = first != 0 ? fmt::format("rank {}: ", first) : "";
    std::fprintf(stderr, "iolab-mpi: error: %s%s\n", where.c_str(), one_line(message).c_str());
    std::fflush(stderr);
    io::remove_all_scratch_dirs();  // MPI_Abort runs no destructors
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  // Every other rank waits here to be ended by the abort.
  MPI_Barrier(MPI_COMM_WORLD);
  io::remove_all_scratch_dirs();
  MPI_Abort(MPI_COMM_WORLD, code);
}

// MPI calls return codes on files (MPI_ERRORS_RETURN); turn them into Errors.
void check(int rc, const char* op, const std::string& subject) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(op, subject, std::string(text, static_cast<std::size_t>(len)));
}

std::string bcast_string(std::string s, int root, MPI_Comm comm) {
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, comm);
  s.resize(static_cast<std::size_t>(len));
  MPI_Bcast(s.data(), len, MPI_CHAR, root, comm);
  return s;
}


void flush_file(const std::filesystem::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error("open", p.string(), errno);
  int r = ::fdatasync(fd), err = errno;
  ::close(fd);
  if (r != 0) throw Error("fdatasync", p.string(), err);
}

// One rank's open file, through one of the three methods.
class RankFile {
 public:
  RankFile(const std::string& method, const std::filesystem::path& path, bool write, MPI_Comm comm)
      : method_(method), path_(path) {
    if (method == "posix") {
      posix_ = io::find_file_method("pread").open(path, write ? io::Access::ReadWrite : io::Access::Read);
      return;
    }
    int rc = MPI_File_open(comm, path.c_str(), write ? MPI_MODE_RDWR : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh_);
    check(rc, "MPI_File_open", path.string());
    MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
    open_ = true;
  }
  ~RankFile() {
    if (open_) MPI_File_close(&fh_);
  }
  RankFile(const RankFile&) = delete;
  RankFile& operator=(const RankFile&) = delete;

  void write(std::uint64_t offset, std::span<const std::byte> data) {
    if (posix_) return posix_->write_at(offset, data);
    MPI_Status st;
    int count = static_cast<int>(data.size());
    int rc = method_ == "mpiio-collective"
                 ? MPI_File_write_at_all(fh_, static_cast<MPI_Offset>(offset), data.data(), count, MPI_BYTE, &st)
                 : MPI_File_write_at(fh_, static_cast<MPI_Offset>(offset), data.data(), count, MPI_BYTE, &st);
    check(rc, method_ == "mpiio-collective" ? "MPI_File_write_at_all" : "MPI_File_write_at", path_.string());
    expect_count(st, count, "write", offset);
  }
  void read(std::uint64_t offset, std::span<std::byte> data) {
    if (posix_) {
      std::size_t got = posix_->read_at(offset, data);
      if (got != data.size()) short_transfer("read", offset, static_cast<long long>(got), data.size());
      return;
    }
    MPI_Status st;
    int count = static_cast<int>(data.size());
    int rc = method_ == "mpiio-collective"
                 ? MPI_File_read_at_all(fh_, static_cast<MPI_Offset>(offset), data.data(), count, MPI_BYTE, &st)
                 : MPI_File_read_at(fh_, static_cast<MPI_Offset>(offset), data.data(), count, MPI_BYTE, &st);
    check(rc, method_ == "mpiio-collective" ? "MPI_File_read_at_all" : "MPI_File_read_at", path_.string());
    expect_count(st, count, "read", offset);
  }
  // Inside the timing when --fsync: fdatasync, or MPI_File_sync (collective over the file's ranks).
  void sync() {
    if (posix_) return posix_->sync(io::Durability::Fdatasync);
    check(MPI_File_sync(fh_), "MPI_File_sync", path_.string());
  }
  void close() {
    if (posix_) {
      posix_->close();
      return;
    }
    if (open_) {
      open_ = false;
      check(MPI_File_close(&fh_), "MPI_File_close", path_.string());
    }
  }

 private:
  void expect_count(MPI_Status& st, int want, const char* op, std::uint64_t offset) {
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != want) short_transfer(op, offset, got, static_cast<std::size_t>(want));
  }
  [[noreturn]] void short_transfer(const char* op, std::uint64_t offset, long long got, std::size_t want) {
    throw Error(op, path_.string(),
                fmt::format("short {}: {} of {} bytes at offset {} (the file is shorter than the regions)", op, got,
                            want, offset),
                EIO);
  }
  std::string method_;
  std::filesystem::path path_;
  std::unique_ptr<io::File> posix_;
  MPI_File fh_{};
  bool open_ = false;
};

// A rank that fails a call keeps making the remaining ones, so every rank
// reaches the same collective calls (MPI-IO collectives, sync, close); the
// first failure is thrown after the last of them.
class Deferred {
 public:
  template <typename F>
  void attempt(F&& f) {
    try {
      f();
    } catch (...) {
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
};

// Per-rank figures of one pass, reduced over ranks on rank 0.
struct RankPass {
  double seconds = 0;
  harness::Usage usage;
};

par::PassTiming reduce_pass(const RankPass& mine, std::uint64_t bytes, std::uint64_t ops) {
  par::PassTiming t;
  MPI_Reduce(&mine.seconds, &t.first_done_s, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine.seconds, &t.last_done_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  t.worker_s.resize(static_cast<std::size_t>(g_size));
  MPI_Gather(&mine.seconds, 1, MPI_DOUBLE, t.worker_s.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const harness::Usage& u = mine.usage;
  double local[] = {u.user_s,
                    u.sys_s,
                    static_cast<double>(u.minor_faults),
                    static_cast<double>(u.major_faults),
                    static_cast<double>(u.voluntary_ctx),
                    static_cast<double>(u.involuntary_ctx),
                    static_cast<double>(u.syscalls_read + u.syscalls_write),
                    static_cast<double>(u.storage_read_bytes),
                    static_cast<double>(u.storage_write_bytes)};
  double sum[std::size(local)] = {};
  MPI_Reduce(local, sum, static_cast<int>(std::size(local)), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  t.usage.user_s = sum[0];
  t.usage.sys_s = sum[1];
  t.usage.minor_faults = static_cast<std::int64_t>(sum[2]);
  t.usage.major_faults = static_cast<std::int64_t>(sum[3]);
  t.usage.voluntary_ctx = static_cast<std::int64_t>(sum[4]);
  t.usage.involuntary_ctx = static_cast<std::int64_t>(sum[5]);
  t.io_calls = static_cast<std::uint64_t>(sum[6]);  // read/write system calls (/proc/self/io) over all ranks
  t.usage.storage_read_bytes = static_cast<std::uint64_t>(sum[7]);
  t.usage.storage_write_bytes = static_cast<std::uint64_t>(sum[8]);
  t.bytes = bytes;
  t.ops = ops;
  return t;
}

bool all_ranks(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}

class Workload {
 public:
  explicit Workload(const Settings& s) : s_(s), buffer_(static_cast<std::size_t>(s.region), io::BufferKind::Aligned) {
    comm_ = s.shared ? MPI_COMM_WORLD : MPI_COMM_SELF;
    // Shared: rank 0 owns the directory and every other rank opens the same
    // path (a filesystem all nodes see). Per rank: each rank its own, on its own node.
    step([&] {
      if (s.shared && g_rank != 0) return;
      scratch_.emplace(s.dir);
    });
    if (s.shared) dir_ = bcast_string(g_rank == 0 ? scratch_->path().string() : "", 0, MPI_COMM_WORLD);
    else dir_ = scratch_->path().string();
    offset_ = s.shared ? static_cast<std::uint64_t>(g_rank) * s.region : 0;
    file_seed_ = s.seed + (s.shared ? 0 : static_cast<std::uint64_t>(g_rank));
  }

  const std::string& dir() const { return dir_; }

  // Timed write passes (after untimed warm-ups), each to a fresh preallocated file, each verified.
  std::vector<par::PassTiming> writes(const std::string& method) {
    std::vector<par::PassTiming> out;
    for (unsigned i = 0; i < s_.warmup + s_.reps; ++i) {
      fresh_file(method);
      std::optional<RankFile> f;
      step([&] {
        io::fill_pattern(file_seed_, offset_, buffer_.span());
        f.emplace(method, file_, true, comm_);
      });
      RankPass mine;
      step([&] {
        harness::UsageMeter meter(harness::UsageMeter::Scope::Process);
        MPI_Barrier(MPI_COMM_WORLD);
        meter.start();
        auto t0 = std::chrono::steady_clock::now();
        Deferred failure;
        for_blocks([&](std::uint64_t pos, std::size_t n) {
          failure.attempt([&] { f->write(offset_ + pos, buffer_.span().subspan(pos, n)); });
        });
        if (s_.fsync) failure.attempt([&] { f->sync(); });
        mine.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        mine.usage = meter.stop();
        failure.attempt([&] { f->close(); });
        failure.rethrow();
      });
      par::PassTiming t = reduce_pass(mine, total_bytes(), total_ops());
      bool ok = false;
      step([&] { ok = region_matches(); });
      if (!all_ranks(ok))
        step([&] { throw Error("verify", file_.string(), "a region written by " + method + " does not match the pattern"); });
      if (i >= s_.warmup) out.push_back(t);
    }
    return out;
  }

  // Timed read passes of the file the last write pass left (flushed, then read once as a warm-up).
  std::vector<par::PassTiming> reads(const std::string& method, double& least_resident) {
    std::vector<par::PassTiming> out;
    step([&] {
      if (!s_.shared || g_rank == 0) flush_file(file_);
    });
    least_resident = 1;
    for (unsigned i = 0; i < s_.warmup + s_.reps; ++i) {
      std::optional<RankFile> f;
      double resident = 1;
      step([&] {
        std::memset(buffer_.data(), 0, buffer_.size());  // a read that moved nothing cannot pass
        resident = harness::resident_fraction(file_);
        f.emplace(method, file_, false, comm_);
      });
      RankPass mine;
      step([&] {
        harness::UsageMeter meter(harness::UsageMeter::Scope::Process);
        MPI_Barrier(MPI_COMM_WORLD);
        meter.start();
        auto t0 = std::chrono::steady_clock::now();
        Deferred failure;
        for_blocks([&](std::uint64_t pos, std::size_t n) {
          failure.attempt([&] { f->read(offset_ + pos, buffer_.span().subspan(pos, n)); });
        });
        mine.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        mine.usage = meter.stop();
        failure.attempt([&] { f->close(); });
        failure.rethrow();
      });
      par::PassTiming t = reduce_pass(mine, total_bytes(), total_ops());
      double least = 1;
      MPI_Allreduce(&resident, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      bool ok = io::matches_pattern(file_seed_, offset_, buffer_.span());
      if (!all_ranks(ok))
        step([&] { throw Error("verify", file_.string(), "data read by " + method + " does not match the pattern"); });
      if (i >= s_.warmup) {
        out.push_back(t);
        least_resident = std::min(least_resident, least);
      }
    }
    return out;
  }

  void remove_file() {
    step([&] {
      if (!file_.empty() && (!s_.shared || g_rank == 0)) scratch_->remove_file(file_);
    });
    file_.clear();
  }

  std::uint64_t total_bytes() const { return s_.region * static_cast<std::uint64_t>(g_size); }
  std::uint64_t total_ops() const {
    return (s_.region + s_.bs - 1) / s_.bs * static_cast<std::uint64_t>(g_size);
  }

 private:
  template <typename F>
  void for_blocks(F&& f) {
    for (std::uint64_t pos = 0; pos < s_.region; pos += s_.bs)
      f(pos, static_cast<std::size_t>(std::min(s_.bs, s_.region - pos)));
  }

  void fresh_file(const std::string& method) {
    remove_file();
    step([&] {
      if (s_.shared && g_rank != 0) return;
      file_ = scratch_->create_unique_file("mpi-" + method);
      io::preallocate(file_, s_.shared ? total_bytes() : s_.region);
    });
    if (s_.shared) file_ = bcast_string(g_rank == 0 ? file_.string() : "", 0, MPI_COMM_WORLD);
  }

  bool region_matches() {
    auto f = io::find_file_method("pread").open(file_, io::Access::Read);
    io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(s_.region, 1 << 20)), io::BufferKind::Aligned);
    for (std::uint64_t pos = 0; pos < s_.region;) {
      auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), s_.region - pos)));
      if (f->read_at(offset_ + pos, part) != part.size()) return false;
      if (!io::matches_pattern(file_seed_, offset_ + pos, part)) return false;
      pos += part.size();
    }
    f->close();
    return true;
  }

  const Settings& s_;
  io::Buffer buffer_;
  MPI_Comm comm_;
  std::optional<io::ScratchDir> scratch_;
  std::string dir_;
  std::filesystem::path file_;
  std::uint64_t offset_ = 0, file_seed_ = 0;
};

std::string utc_stamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// Distinct host names over all ranks (rank 0's answer).
unsigned count_nodes() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(g_rank == 0 ? static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * static_cast<std::size_t>(g_size) : 1);
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank != 0) return 0;
  std::set<std::string> hosts;
  for (int r = 0; r < g_size; ++r) hosts.insert(std::string(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME));
  return static_cast<unsigned>(hosts.size());
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  return s.substr(0, s.find_first_of(",\n"));
}

int run(int argc, char** argv) {
  Settings s;
  CLI::App app{"iolab-mpi: seed 003's parallel workload across MPI ranks (start it with mpirun)", "iolab-mpi"};
  app.set_version_flag("--version", std::string("iolab-mpi ") + kVersion);
  app.require_subcommand(1);
  auto* cmd = app.add_subcommand("parallel", "Each rank writes, then reads, a disjoint region of one shared file (or its own file)");
  cmd->add_option("--size", s.size, "Region per rank (default 64m)");
  cmd->add_option("--bs", s.block, "Bytes per call (default 1m; at most 1g)");
  cmd->add_option("--reps", s.reps, "Timed passes per method and op (default 5)");
  cmd->add_option("--warmup", s.warmup, "Untimed passes before them (default 1)");
  cmd->add_option("--dir", s.dir, "Parent of the scratch directory (shared-file: on a filesystem every node sees)");
  cmd->add_option("--out", s.out, "Results JSON (default results/mpi-<UTC time>.json)");
  cmd->add_option("--method", s.methods, "posix, mpiio, mpiio-collective (default all)")->delimiter(',');
  cmd->add_option("--layout", s.layout, "shared-file (default) or file-per-rank (IOR -F; no shared filesystem needed)");
  cmd->add_flag("--fsync", s.fsync, "End each rank's writes with fdatasync / MPI_File_sync, inside the timing");
  app.footer("Example:\n  mpirun -np 4 iolab-mpi parallel --size 64m --bs 1m --out results/mpi.json\n"
             "Across nodes: mpirun --hostfile hosts -np 8 iolab-mpi parallel --dir /shared/scratch");

  bool done = false;
  int exit_code = 0;
  step([&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      if (g_rank == 0) std::fputs(app.help().c_str(), stdout);
      done = true;
      return;
    } catch (const CLI::CallForVersion&) {
      if (g_rank == 0) std::puts((std::string("iolab-mpi ") + kVersion).c_str());
      done = true;
      return;
    } catch (const CLI::ParseError& e) {
      throw UsageError("command line", one_line(e.what()));
    }
    s.region = parse_size(s.size);
    s.bs = parse_size(s.block);
    if (s.bs == 0) throw UsageError("--bs 0", "must be at least one byte");
    if (s.bs > (std::uint64_t{1} << 30)) throw UsageError("--bs " + s.block, "at most 1g (MPI counts are int)");
    if (s.reps == 0) throw UsageError("--reps 0", "at least one timed pass");
    if (s.layout == "shared-file" || s.layout == "shared") s.shared = true;
    else if (s.layout == "file-per-rank" || s.layout == "per-rank") s.shared = false;
    else throw UsageError("--layout " + s.layout, "expected shared-file or file-per-rank");
    for (const auto& m : s.methods)
      if (m != "posix" && m != "mpiio" && m != "mpiio-collective")
        throw UsageError("--method " + m, "unknown; known: posix, mpiio, mpiio-collective");
    // The same checks as the thread workload: an empty region, 0 ranks, a total past a file offset.
    par::plan_regions(static_cast<unsigned>(g_size), s.region, par::Layout::SharedFile);
    if (s.out.empty()) s.out = "results/mpi-" + utc_stamp() + ".json";
  });
  if (done) return exit_code;

  const unsigned nodes = count_nodes();
  Workload work(s);
  harness::Results results;
  if (g_rank == 0) {
    results.environment = harness::collect_environment(work.dir());
    std::string command = "mpirun -np " + std::to_string(g_size);
    for (int i = 0; i < argc; ++i) command += std::string(" ") + argv[i];
    results.environment.command = command;
    fmt::print("iolab-mpi: {} rank{} on {} node{}, {} per rank, {} blocks, {} in {}, {} rep{} (+{} warm-up){}\n", g_size,
               g_size > 1 ? "s" : "", nodes, nodes > 1 ? "s" : "", format_bytes(static_cast<double>(s.region)),
               format_bytes(static_cast<double>(s.bs)), s.shared ? "one shared file" : "a file per rank", work.dir(),
               s.reps, s.reps > 1 ? "s" : "", s.warmup, s.fsync ? ", writes end with a sync" : "");
    fmt::print("{:<17} {:<5} {:>14} {:>12} {:>12}  {}\n", "METHOD", "OP", "AGGREGATE", "FIRST DONE", "LAST DONE", "VERIFIED");
    std::fflush(stdout);
  }
  const std::string library = mpi_library();
  for (const auto& method : s.methods) {
    for (bool write : {true, false}) {
      double least_resident = 1;
      std::vector<par::PassTiming> passes = write ? work.writes(method) : work.reads(method, least_resident);
      if (g_rank != 0) continue;
      harness::Result r;
      r.suite = "parallel";
      r.experiment = s.shared ? "mpi-shared-file" : "mpi-file-per-rank";
      r.method = method;
      r.op = write ? "write" : "read";
      r.pattern = "seq";
      r.block_size = std::min(s.bs, s.region);
      r.file_size = work.total_bytes();
      r.buffer = "aligned";
      r.threads = static_cast<unsigned>(g_size);
      r.cache = write ? "" : "warm";
      r.cache_method = write ? "fresh file, preallocated" : "written, flushed, read once";
      if (!write) r.resident_fraction = least_resident;
      r.sync = write && s.fsync ? (method == "posix" ? "end:fdatasync" : "end:MPI_File_sync") : "none";
      par::fill_result(r, passes);
      r.verified = true;  // every pass of every rank checked; a mismatch aborts the run instead
      r.extra["ranks"] = g_size;
      r.extra["nodes"] = nodes;
      r.extra["region_size"] = s.region;
      r.extra["layout"] = s.shared ? "shared-file" : "file-per-rank";
      r.extra["mpi_library"] = library;
      r.extra["io_calls_source"] = "read/write system calls from /proc/self/io, summed over ranks";
      if (!write && least_resident < 0.95)
        r.warnings.push_back(fmt::format("not warm: only {}% of the file was resident before a timed pass",
                                         static_cast<int>(least_resident * 100)));
      fmt::print("{:<17} {:<5} {:>14} {:>12} {:>12}  {}\n", method, r.op, format_rate(r.median_mib_per_s() * 1048576.0),
                 format_duration(r.extra["first_done_s"].get<double>()),
                 format_duration(r.extra["last_done_s"].get<double>()), r.verified ? "yes" : "no");
      std::fflush(stdout);
      results.results.push_back(std::move(r));
    }
    work.remove_file();
  }
  step([&] {
    if (g_rank != 0) return;
    harness::write_json(results, s.out);
    fmt::print("results: {}\n", s.out);
  });
  return 0;
}

}  // namespace
}  // namespace iolab::mpi

// Under AddressSanitizer (IOLAB_SANITIZE), Open MPI's own allocations kept
// until exit, many from components it has already unloaded (so no suppression
// can name them), would fail every run as leaks. The workload's code is
// leak-checked through the thread suite's tests instead. Unused without ASan.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &iolab::mpi::g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &iolab::mpi::g_size);
  iolab::io::remove_scratch_dirs_on_signals();
  int code = iolab::mpi::run(argc, argv);
  MPI_Finalize();
  return code;
}
