// Internal: one backend's way of writing and reading journal records.
// The format, the index, the free list and the sync policy live in
// record_store.cpp; a backend only moves bytes, through an io::EnvFile (so
// the store runs on the real file system or on the fault env alike).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/io/env.h"
#include "iolab/io/file.h"
#include "iolab/store/employee.h"
#include "iolab/store/record_store.h"

namespace iolab::store {

struct JournalCounters {
  std::uint64_t syscalls = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t bytes_read = 0;
};

class Journal {
 public:
  explicit Journal(std::unique_ptr<io::EnvFile> file) : file_(std::move(file)) {}
  virtual ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Writes a record image (header, data, zero padding to the slot) at the
  // end of the journal, `offset`.
  virtual void append(std::uint64_t offset, std::span<const std::byte> image) = 0;
  // Writes a record image into a hole at `offset`: the data first, then the
  // free header of the remainder (`leftover`, empty when the hole fits
  // exactly) right after the image, the record header last, so a crash
  // part-way leaves the hole's old free header in charge.
  virtual void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                             std::span<const std::byte> leftover) = 0;
  // Overwrites one 16-byte record header (marking a record free).
  virtual void write_header(std::uint64_t offset, std::span<const std::byte> header) = 0;
  // Overwrites the checkpoint (kCheckpointSize bytes at kCheckpointOffset)
  // in one call or store; the next sync makes it durable.
  virtual void write_checkpoint(std::span<const std::byte> checkpoint);
  // Reads the active record at `offset`, checks its header and CRC (throws
  // Error when they fail) and decodes it into `out`.
  virtual void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) = 0;
  // The key (first field) of the active record at `offset`, not checked
  // against its CRC: the index compares it with the key it was asked for on
  // a hash match. May point into `scratch` or into the journal's memory
  // (valid until the next write); empty when the field does not fit.
  virtual std::string_view key(std::uint64_t offset, std::uint32_t data_length, std::string& scratch);
  // Hands user-space staged data to the kernel.
  virtual void flush() {}
  // Makes everything written so far durable with `call` (Fdatasync or Fsync).
  virtual void sync(io::Durability call);
  // Flushes, trims the file to `end`, closes it. Twice is harmless.
  virtual void close(std::uint64_t end);

  // The key field at the front of a record's data; empty when it does not fit.
  static std::string_view key_in(std::span<const std::byte> data) noexcept;

  JournalCounters counters() const;
  const std::filesystem::path& path() const noexcept { return file_->path(); }

 protected:
  // Checks a record read into `buf` (header + data) and decodes it.
  void check_and_decode(std::uint64_t offset, std::uint32_t data_length, std::span<const std::byte> buf,
                        Employee& out) const;
  // Reads exactly dst.size() bytes at `offset` (or at the file position);
  // fewer is an Error naming the offset.
  void pread_exact(std::span<std::byte> dst, std::uint64_t offset);
  void read_exact(std::span<std::byte> dst);

  std::unique_ptr<io::EnvFile> file_;
  std::uint64_t mapped_bytes_written_ = 0;  // stored through a mapping: no call counts them
  bool closed_ = false;
};

std::unique_ptr<Journal> make_fields_journal(std::unique_ptr<io::EnvFile> file);
std::unique_ptr<Journal> make_gather_journal(std::unique_ptr<io::EnvFile> file);
std::unique_ptr<Journal> make_mmap_journal(std::unique_ptr<io::EnvFile> file, std::uint64_t end, std::size_t grow_step);
std::unique_ptr<Journal> make_buffered_journal(std::unique_ptr<io::EnvFile> file, std::uint64_t end,
                                               std::size_t stage_bytes);

// `file` is open read-write on the journal, whose logical end is `end`.
std::unique_ptr<Journal> make_journal(const StoreOptions& options, std::unique_ptr<io::EnvFile> file,
                                      std::uint64_t end);

}  // namespace iolab::store
