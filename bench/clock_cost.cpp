// What one std::chrono::steady_clock::now() costs here (clock_gettime
// CLOCK_MONOTONIC through the vDSO): the price of iolab's per-call latency
// timing, one clock read per call. Prints nanoseconds per call, best of 5.
#include <chrono>
#include <cstdio>

int main() {
  using Clock = std::chrono::steady_clock;
  constexpr int kCalls = 10'000'000;
  double best = 1e9;
  long long sink = 0;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) sink += Clock::now().time_since_epoch().count() & 1;
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kCalls;
    if (ns < best) best = ns;
  }
  std::printf("steady_clock::now(): %.1f ns per call (best of 5 x %d; checksum %lld)\n", best, kCalls, sink);
  return 0;
}
