// A File that passes the calls every File must implement on to another one,
// so a test double overrides only the call it changes. The calls File has a
// default for (read_sequence, submit, stream) keep File's own, which go
// through read_at and write_at: an override of those sees every byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "iolab/io/file.h"

namespace iolab::testing {

class ForwardingFile : public io::File {
 public:
  explicit ForwardingFile(std::unique_ptr<io::File> inner) : io::File(inner->path()), inner_(std::move(inner)) {}
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override { return inner_->read_at(offset, dst); }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override { inner_->write_at(offset, src); }
  void sync(io::Durability d) override { inner_->sync(d); }
  bool supports(io::Durability d) const override { return inner_->supports(d); }
  std::uint64_t size() override { return inner_->size(); }
  void close() override { inner_->close(); }

 protected:
  io::File& inner() { return *inner_; }

 private:
  std::unique_ptr<io::File> inner_;
};

}  // namespace iolab::testing
