// C stdio: FILE* over the file's descriptor with setvbuf; stream_buffer 0
// means unbuffered (every fread/fwrite is a system call).
#include <cstdio>
#include <memory>

#include "iolab/io/buffer.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kStdioFacts{
    "stdio", "C FILE* with setvbuf (settable buffer; 0 = unbuffered); the buffered/unbuffered stream analogue",
    {.user_space_buffer = true,
     .library_calls = true,  // fread/fwrite decide when to call the kernel
     .positional = false}};

class StdioFile final : public File {
 public:
  StdioFile(const std::filesystem::path& p, Access a, const FileOptions& o) : File(p) {
    const std::size_t buffer_size = o.stream_buffer;
    sys::Fd fd = sys::open_existing(p, a);
    // Allocated before the FILE exists: a throwing constructor runs no
    // destructor, so nothing may be left to fclose.
    if (buffer_size > 0) buffer_ = Buffer(buffer_size, BufferKind::Heap);
    file_ = ::fdopen(fd.get(), a == Access::Read ? "rb" : "r+b");
    if (file_ == nullptr) sys::fail("fdopen", p);
    fd.release();  // the FILE owns it now
    int r = buffer_size == 0 ? ::setvbuf(file_, nullptr, _IONBF, 0)
                             : ::setvbuf(file_, reinterpret_cast<char*>(buffer_.data()), _IOFBF, buffer_size);
    if (r != 0) {
      ::fclose(file_);
      throw Error("setvbuf", p.string(), "cannot set a " + std::to_string(buffer_size) + "-byte buffer", EINVAL);
    }
  }
  ~StdioFile() override {
    if (file_ != nullptr) ::fclose(file_);
  }

  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    position(offset, Last::Read);
    std::size_t n = ::fread(dst.data(), 1, dst.size(), file_);
    if (n < dst.size() && ::ferror(file_)) {
      int err = errno;
      ::clearerr(file_);
      pos_ = kUnknown;
      sys::fail("fread", path(), err);
    }
    ::clearerr(file_);  // EOF is not sticky for the next call
    pos_ += n;
    counters_.bytes_read += n;
    return n;
  }

  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    position(offset, Last::Write);
    std::size_t n = ::fwrite(src.data(), 1, src.size(), file_);
    if (n < src.size()) {
      int err = errno;
      ::clearerr(file_);
      pos_ = kUnknown;
      sys::fail("fwrite", path(), err);
    }
    pos_ += n;
    counters_.bytes_written += n;
  }

  void sync(Durability d) override {
    if (!supports(d)) sys::unsupported(d, kStdioFacts.name, path());
    if (d == Durability::None) return;
    flush();
    sys::sync_fd(::fileno(file_), d, path(), counters_);
  }
  bool supports(Durability d) const override { return sys::fd_supports(d); }
  std::uint64_t size() override {
    flush();
    return sys::file_size(::fileno(file_), path());
  }
  void close() override {
    if (file_ == nullptr) return;
    FILE* f = file_;
    file_ = nullptr;
    if (::fclose(f) != 0) sys::fail("fclose", path());  // reports a failed final flush
  }

 private:
  enum class Last { None, Read, Write };
  static constexpr std::uint64_t kUnknown = ~std::uint64_t{0};

  // C requires a positioning call between a write and a read; one is made
  // only then, or when the offset moves.
  void position(std::uint64_t offset, Last next) {
    if (offset != pos_ || (last_ != Last::None && last_ != next)) {
      if (::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) sys::fail("fseeko", path());
      pos_ = offset;
    }
    last_ = next;
  }
  void flush() {
    if (::fflush(file_) != 0) sys::fail("fflush", path());
  }

  FILE* file_ = nullptr;
  Buffer buffer_;
  std::uint64_t pos_ = 0;
  Last last_ = Last::None;
};

}  // namespace

const Method& stdio_method() { return the_method<FileMethod<StdioFile>>(kStdioFacts); }

}  // namespace iolab::io
