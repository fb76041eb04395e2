// read(2)/write(2) at the file position, with lseek only when the requested
// offset differs from it: RandomAccessFile's seek + read/write.
#include <unistd.h>

#include "descriptor_file.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kSyscallFacts{
    "syscall", "read(2)/write(2) at the file position, lseek when it moves; the RandomAccessFile analogue",
    {.positional = false}};

class SyscallFile final : public DescriptorFile {
 public:
  SyscallFile(const std::filesystem::path& p, Access a, const FileOptions&)
      : DescriptorFile(p, sys::open_existing(p, a), kSyscallFacts.name) {}

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    seek(offset);
    pos_ = kUnknown;  // a read that fails midway leaves the position unknown
    std::size_t n = sys::read_full(fd_.get(), dst, path(), counters_);
    pos_ = offset + n;
    return n;
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    seek(offset);
    // On failure the position is unknown: force a seek next time.
    pos_ = kUnknown;
    sys::write_full(fd_.get(), src, path(), counters_);
    pos_ = offset + src.size();
  }

 private:
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};
  void seek(std::uint64_t offset) {
    if (offset == pos_) return;
    sys::seek(fd_.get(), offset, path(), counters_);
    pos_ = offset;
  }
  std::uint64_t pos_ = 0;
};

}  // namespace

const Method& syscall_method() { return the_method<FileMethod<SyscallFile>>(kSyscallFacts); }

}  // namespace iolab::io
