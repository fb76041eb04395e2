// A file method that counts the bytes it delivers as it goes, so a sampler
// thread can draw throughput per second while the engine times the pass.
// It wraps a registered method and forwards every call; the count is one
// relaxed store per call (no clock read, no locked instruction: one thread
// reads through a File at a time), the same for every method measured.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "iolab/io/file.h"

namespace iolab::suites::memory {

class ProgressMethod final : public io::Method {
 public:
  // `inner` must outlive this; `bytes` is what the sampler reads.
  ProgressMethod(const io::Method& inner, std::atomic<std::uint64_t>& bytes) : inner_(inner), bytes_(bytes) {}
  std::string_view name() const override { return inner_.name(); }
  std::string_view description() const override { return inner_.description(); }
  io::MethodTraits traits(const io::FileOptions& options) const override { return inner_.traits(options); }
  io::Availability supports_options(const io::FileOptions& options, const std::filesystem::path& dir) const override {
    return inner_.supports_options(options, dir);
  }
  io::Availability probe(const std::filesystem::path& dir) const override { return inner_.probe(dir); }
  std::unique_ptr<io::File> open(const std::filesystem::path& path, io::Access access,
                                 const io::FileOptions& options) const override;

 private:
  const io::Method& inner_;
  std::atomic<std::uint64_t>& bytes_;
};

}  // namespace iolab::suites::memory
