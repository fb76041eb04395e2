// What one record and one message cost, in CPU nanoseconds, and the floor
// under them on this machine (docs/performance.md, "Per record, per message").
//
//   per_op_cost floor [--size 1k] [--messages 262144] [--batch 16k] [--reps 3] [--dir PARENT]
//       memcpy of the messages' bytes, CRC32C of them, one getppid(2) (the
//       cheapest system call), one pwrite(2) per batch into the page cache
//       (a fresh file, the cost the kernel adds per byte written), per message.
//   per_op_cost store [--engine buffered] [--records 100000] [--reps 5] [--dir PARENT]
//       the store suite's insert and get passes (the same workload, commit
//       every 1,000 ops, page cache only), one engine, CPU per operation:
//       a short program to run under perf record / perf stat.
//
// CPU time is the thread's own (CLOCK_THREAD_CPUTIME_ID): on a shared
// machine, wall time counts the other programs' turns too.
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_cli.h"
#include "iolab/base/crc32c.h"
#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/suites/kv_store.h"
#include "store_data_set.h"

namespace {

using namespace iolab;

double cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

struct Args {
  std::string mode;
  std::size_t size = 1024, batch = 16384;
  std::uint64_t messages = 262144, records = 100000;
  std::string engine = "buffered";
  unsigned reps = 3;
  std::filesystem::path dir;
};

volatile std::uint64_t g_sink = 0;  // keeps the loops' results alive

void floor_bench(const Args& a, io::ScratchDir& scratch) {
  const std::size_t n = a.messages, size = a.size;
  std::vector<std::byte> src(size);
  for (std::size_t i = 0; i < size; ++i) src[i] = static_cast<std::byte>(i * 131 + 7);
  // The destination is the size of one batch, reused (it stays in cache, as
  // a producer's staging buffer does; the page cache's pages do not, which
  // the pwrite figure holds).
  std::vector<std::byte> dst(std::max(a.batch, size) + size);
  const std::size_t per_batch = std::max<std::size_t>(1, a.batch / size);
  auto path = scratch.create_unique_file("floor");
  for (unsigned rep = 0; rep < a.reps; ++rep) {
    double t0 = cpu_ns();
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(dst.data() + at, src.data(), size);
      at = (at + size) % (per_batch * size);
    }
    g_sink = g_sink + static_cast<std::uint64_t>(dst[at]);
    double t1 = cpu_ns();
    std::uint32_t crc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      src[0] = static_cast<std::byte>(i);
      crc ^= crc32c(src);
    }
    g_sink = g_sink + crc;
    double t2 = cpu_ns();
    for (std::size_t i = 0; i < n; ++i) g_sink = g_sink + static_cast<std::uint64_t>(::syscall(SYS_getppid));
    double t3 = cpu_ns();
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0) throw Error("open", path.string(), errno);
    std::uint64_t off = 0;
    std::size_t batch_bytes = per_batch * size, batches = (n + per_batch - 1) / per_batch;
    for (std::size_t b = 0; b < batches; ++b) {
      if (::pwrite(fd, dst.data(), batch_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(batch_bytes))
        throw Error("pwrite", path.string(), errno);
      off += batch_bytes;
    }
    double t4 = cpu_ns();
    ::close(fd);
    double dn = static_cast<double>(n);
    std::printf("floor rep %u: %zu B messages, %llu of them; CPU ns per message: memcpy %.1f, crc32c %.1f (%s), "
                "getppid(2) %.1f per call, pwrite(2) of %zu B batches into fresh page cache %.1f per message "
                "(%.0f per call)\n",
                rep + 1, size, static_cast<unsigned long long>(n), (t1 - t0) / dn, (t2 - t1) / dn,
                crc32c_hardware() ? "sse4.2" : "table", (t3 - t2) / dn, batch_bytes, (t4 - t3) / dn,
                (t4 - t3) / static_cast<double>(batches));
  }
  scratch.remove_file(path);
}

void store_bench(const Args& a, io::ScratchDir& scratch) {
  using namespace suites::store_suite;
  StoreDataSet w = make_data_set(a.records, 0x10AB);
  suites::KvStoreOptions options;
  options.sync = false;
  options.batch = 1000;
  options.map_bytes = std::max<std::uint64_t>(64ull << 20, w.data_bytes * 4);
  for (unsigned rep = 0; rep < a.reps; ++rep) {
    auto path = scratch.create_unique_file("store-" + a.engine);
    double t0 = cpu_ns();
    {
      auto engine = suites::open_kv_store(a.engine, path, options);
      double ti = cpu_ns();
      for (const auto& e : w.records) engine->put(e);
      engine->commit();
      engine->close();
      double te = cpu_ns();
      auto reader = suites::open_kv_store(a.engine, path, options);
      GetFold warm = fold_gets(*reader, w);  // faults the file in, as the suite's warm-up does
      double tg = cpu_ns();
      GetFold got = fold_gets(*reader, w);
      double tge = cpu_ns();
      reader->close();
      if (!(got == w.get_fold) || !(warm == w.get_fold)) throw Error("get", path.string(), "the gets found other records");
      double dn = static_cast<double>(w.n);
      std::printf("store %s rep %u: %llu records, commit every 1,000, page cache only; CPU ns per insert %.0f "
                  "(open %.2f ms), per get %.0f\n",
                  a.engine.c_str(), rep + 1, static_cast<unsigned long long>(w.n), (te - ti) / dn, (ti - t0) / 1e6,
                  (tge - tg) / dn);
    }
    scratch.remove_file(path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"CPU per record and per message, and the floor under them (docs/performance.md)"};
  app.require_subcommand(1);
  auto* fl = app.add_subcommand("floor", "memcpy, CRC32C, one system call, pwrite per batch: per message");
  iolab_bench::add_size(*fl, "--size", a.size, "Message size (default 1k)");
  iolab_bench::add_size(*fl, "--batch", a.batch, "Bytes per pwrite (default 16k)");
  fl->add_option("--messages", a.messages, "Messages per rep")->check(CLI::PositiveNumber);
  auto* st = app.add_subcommand("store", "the store suite's insert and get passes, one engine");
  st->add_option("--engine", a.engine, "buffered, mmap, gather, fields, lmdb, sqlite");
  st->add_option("--records", a.records, "Records")->check(CLI::Range(10, 50000000));
  for (auto* s : {fl, st}) {
    s->add_option("--reps", a.reps, "Repetitions")->check(CLI::PositiveNumber);
    s->add_option("--dir", a.dir, "Parent of the scratch directory (default $TMPDIR or /tmp)");
  }
  if (int rc = iolab_bench::parse(app, argc, argv); rc >= 0) return rc;
  try {
    io::ScratchDir scratch(a.dir);
    if (fl->parsed()) floor_bench(a, scratch);
    else store_bench(a, scratch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "per_op_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
