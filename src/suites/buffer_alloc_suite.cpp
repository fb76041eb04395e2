// seed 002 #3: what it costs to get a 128-byte buffer, 100 K to 2 M times.
// Java's heap ByteBuffer is a bump of the thread-local allocation pointer;
// a direct ByteBuffer is malloc + zeroing + a Cleaner, and was much slower.
// Here: operator new[] (heap), posix_memalign to a page (the aligned buffer
// O_DIRECT needs) and an anonymous mmap of one page (a fresh page from the
// kernel each time: two system calls and a page fault). Each buffer is
// allocated, filled, read back and freed; the sum of what was read back is
// checked, so the work cannot be optimised away unnoticed.
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;

constexpr std::size_t kSize = 128;

// Keeps the compiler from eliding an allocation whose pointer it could see does not escape.
inline void escape(void* p) { __asm__ volatile("" : : "g"(p) : "memory"); }

enum class Kind { Heap, Aligned, Mmap };

// One allocation, touched and freed; returns the last byte written (i mod 256).
template <Kind K>
inline unsigned cycle(std::uint64_t i) {
  std::byte* p = nullptr;
  if constexpr (K == Kind::Heap) {
    p = new std::byte[kSize];
  } else if constexpr (K == Kind::Aligned) {
    void* v = nullptr;
    int err = ::posix_memalign(&v, io::kPageSize, kSize);
    if (err != 0) throw Error("posix_memalign", "128-byte buffer", err);
    p = static_cast<std::byte*>(v);
  } else {
    void* v = ::mmap(nullptr, io::kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED) throw Error("mmap", "anonymous page", errno);
    p = static_cast<std::byte*>(v);
  }
  std::memset(p, static_cast<int>(i & 0xff), kSize);
  escape(p);
  unsigned last = static_cast<unsigned>(p[kSize - 1]);
  if constexpr (K == Kind::Heap) {
    delete[] p;
  } else if constexpr (K == Kind::Aligned) {
    std::free(p);
  } else {
    if (::munmap(p, io::kPageSize) != 0) throw Error("munmap", "anonymous page", errno);
  }
  return last;
}

template <Kind K>
std::uint64_t loop(std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += cycle<K>(i);
  return sum;
}

std::uint64_t expected_sum(std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum += i & 0xff;
  return sum;
}

struct Allocator {
  Kind kind;
  const char* method;
  std::optional<io::BufferKind> buffer;  // none for a mapping: neither kind of io buffer
  const char* how;
};
const Allocator kAllocators[] = {
    {Kind::Heap, "new[]", io::BufferKind::Heap, "operator new[] / delete[] (malloc's thread cache)"},
    {Kind::Aligned, "posix_memalign", io::BufferKind::Aligned, "posix_memalign(4096) / free: page-aligned, like a direct buffer"},
    {Kind::Mmap, "mmap-anon", std::nullopt, "anonymous mmap of one page / munmap: a zeroed page from the kernel, one fault"},
};

harness::CustomExperiment allocation(std::string suite, const Allocator& a, std::uint64_t n) {
  auto ok = std::make_shared<bool>(true);
  harness::CustomExperiment c;
  c.labels.suite = std::move(suite);
  c.labels.experiment = count_label(n) + " allocations of 128 B";
  c.labels.method = a.method;
  c.labels.op = results::Op::Alloc;
  c.labels.pattern.reset();
  c.labels.block_size = kSize;
  c.labels.file_size = 0;
  c.labels.buffer = a.buffer;
  c.labels.cache.reset();
  c.labels.extra = {{"allocator", a.how}, {"touched_bytes", kSize}};
  const std::uint64_t want = expected_sum(n);
  const Kind kind = a.kind;
  c.timed = [ok, kind, n, want] {
    std::uint64_t sum = kind == Kind::Heap      ? loop<Kind::Heap>(n)
                        : kind == Kind::Aligned ? loop<Kind::Aligned>(n)
                                                : loop<Kind::Mmap>(n);
    if (sum != want) *ok = false;
    // mmap + munmap per buffer; the heap kinds make no system call once warm.
    return harness::Repetition{kSize * n, n, kind == Kind::Mmap ? 2 * n : 0};
  };
  c.verify = [ok] { return *ok; };
  return c;
}

class BufferAllocSuite final : public Suite {
 public:
  using Suite::Suite;

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    auto counts = by_scale<std::vector<std::uint64_t>>(options.scale, {1000}, {10000}, {100000, 1000000},
                                                       {100000, 1000000, 2000000});
    std::vector<results::Result> out;
    for (std::uint64_t n : counts)
      for (const Allocator& a : kAllocators) {
        // An anonymous mapping costs ~8 us here (two system calls, a fault, a
        // TLB flush): below the full scale it runs once, at most 10 k times.
        if (a.kind == Kind::Mmap && options.scale != Scale::Full) {
          if (n != counts.front()) continue;
          n = std::min<std::uint64_t>(n, 10000);
        }
        out.push_back(runner.run(allocation(std::string(name()), a, n)));
      }
    return out;
  }
};

const SuiteRegistration buffer_alloc_registration{std::make_unique<BufferAllocSuite>(catalogued("buffer-alloc"))};

}  // namespace
}  // namespace iolab::suites
