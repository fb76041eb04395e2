// The paper's ways of putting an int32 array into a file and back (seed 003),
// each with its C++ counterpart. File order is big-endian, as Java's
// DataOutputStream writes it; Raw moves the array's own bytes.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/io/registry.h"
#include "iolab/suites/parallel.h"

namespace iolab::suites::parallel {

namespace {

constexpr std::array<ArrayWay, 6> kWays = {ArrayWay::Raw,     ArrayWay::Encode,      ArrayWay::ElementStream,
                                           ArrayWay::BufferedElementStream, ArrayWay::ArrayStream, ArrayWay::Bulk};

inline std::array<std::byte, 4> to_big_endian(std::int32_t v) {
  auto u = static_cast<std::uint32_t>(v);
  return {static_cast<std::byte>(u >> 24), static_cast<std::byte>(u >> 16), static_cast<std::byte>(u >> 8),
          static_cast<std::byte>(u)};
}

inline std::int32_t from_big_endian(const std::byte* b) {
  return static_cast<std::int32_t>((std::to_integer<std::uint32_t>(b[0]) << 24) |
                                   (std::to_integer<std::uint32_t>(b[1]) << 16) |
                                   (std::to_integer<std::uint32_t>(b[2]) << 8) | std::to_integer<std::uint32_t>(b[3]));
}

// Bulk: one pass over the whole array with a byte swap per element; a loop
// simple enough for the compiler to vectorize (std::byteswap is C++23). The
// x86-64 baseline (SSE2) has no byte shuffle, so an AVX2 clone is built too
// and picked at load time where the CPU has it. Not under ThreadSanitizer:
// the clones' resolver runs before its runtime starts and crashes in it.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define IOLAB_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define IOLAB_VECTOR_CLONES
#endif

IOLAB_VECTOR_CLONES void swap_copy(std::span<const std::int32_t> in, std::span<std::uint32_t> out) {
  const std::int32_t* src = in.data();
  std::uint32_t* dst = out.data();
  const std::size_t n = in.size();
  if constexpr (std::endian::native == std::endian::big) {
    std::memcpy(dst, src, n * 4);  // the file order is already the machine's
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = __builtin_bswap32(static_cast<std::uint32_t>(src[i]));
  }
}

IOLAB_VECTOR_CLONES void swap_in_place(std::span<std::int32_t> a) {
  if constexpr (std::endian::native != std::endian::big) {
    auto* p = reinterpret_cast<std::uint32_t*>(a.data());
    const std::size_t n = a.size();
    for (std::size_t i = 0; i < n; ++i) p[i] = __builtin_bswap32(p[i]);
  }
}

// ArrayStream: Java's DataOutputStream over a ByteArrayOutputStream, one call per element.
class ByteArrayOutput {
 public:
  explicit ByteArrayOutput(std::size_t initial) { bytes_.reserve(initial); }
  void write_int(std::int32_t v) {
    auto be = to_big_endian(v);
    bytes_.insert(bytes_.end(), be.begin(), be.end());
  }
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

// ... and its reading side: DataInputStream over a ByteArrayInputStream, bounds-checked per element.
class ByteArrayInput {
 public:
  explicit ByteArrayInput(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::int32_t read_int() {
    if (bytes_.size() - pos_ < 4) throw Error("read int", "byte array", "end of the array", EIO);
    std::int32_t v = from_big_endian(bytes_.data() + pos_);
    pos_ += 4;
    return v;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

const char* method_for(ArrayWay way) {
  switch (way) {
    case ArrayWay::ElementStream: return "syscall";         // write(2) at the file position: RandomAccessFile
    case ArrayWay::BufferedElementStream: return "stdio";   // FILE* with setvbuf: BufferedOutputStream
    default: return "pread";                                // one positioned call for the whole array
  }
}

}  // namespace

std::span<const ArrayWay> all_array_ways() { return kWays; }

namespace {
constexpr NameTable<ArrayWay, 6> kArrayWayNames{
    {{ArrayWay::Raw, "raw"}, {ArrayWay::Encode, "encode"}, {ArrayWay::ElementStream, "element-stream"},
     {ArrayWay::BufferedElementStream, "buffered-element-stream"}, {ArrayWay::ArrayStream, "array-stream"},
     {ArrayWay::Bulk, "bulk"}}};
}  // namespace

std::string_view to_string(ArrayWay w) { return name_of(kArrayWayNames, w); }

ArrayWay parse_array_way(std::string_view name) {
  return parse_name(kArrayWayNames, name, "array way", "unknown; known: " + choices_of(kArrayWayNames, ", "));
}

bool per_element(ArrayWay w) { return w == ArrayWay::ElementStream || w == ArrayWay::BufferedElementStream; }
bool chunked(ArrayWay w) { return w == ArrayWay::Raw || w == ArrayWay::Encode || w == ArrayWay::Bulk; }

std::vector<std::byte> encode_reference(ArrayWay way, std::span<const std::int32_t> values) {
  std::vector<std::byte> out(values.size() * 4);
  if (way == ArrayWay::Raw) {
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto be = to_big_endian(values[i]);
    std::copy(be.begin(), be.end(), out.begin() + static_cast<std::ptrdiff_t>(4 * i));
  }
  return out;
}

bool matches_encoding(ArrayWay way, std::span<const std::int32_t> values, std::span<const std::byte> bytes) {
  if (bytes.size() != values.size() * 4) return false;
  if (bytes.empty()) return true;
  if (way == ArrayWay::Raw) return std::memcmp(bytes.data(), values.data(), bytes.size()) == 0;
  // A page of the encoding at a time, so a large array needs no second copy of itself.
  std::array<std::byte, 4096> expected;
  for (std::size_t i = 0; i < values.size();) {
    const std::size_t n = std::min(values.size() - i, expected.size() / 4);
    for (std::size_t j = 0; j < n; ++j) {
      auto be = to_big_endian(values[i + j]);
      std::copy(be.begin(), be.end(), expected.begin() + static_cast<std::ptrdiff_t>(4 * j));
    }
    if (std::memcmp(expected.data(), bytes.data() + 4 * i, 4 * n) != 0) return false;
    i += n;
  }
  return true;
}

IntArrayFile::IntArrayFile(ArrayWay way, const std::filesystem::path& path, io::Access access, std::size_t max_ints,
                           std::size_t stream_buffer)
    : way_(way) {
  io::FileOptions o;
  o.stream_buffer = stream_buffer;
  if (way == ArrayWay::BufferedElementStream && stream_buffer == 0)
    throw UsageError("stream buffer 0", "buffered-element-stream needs a buffer");
  file_ = io::find_file_method(method_for(way)).open(path, access, o);
  // Scratch space belongs to the setup, not to the timed calls.
  if (way == ArrayWay::Encode) bytes_.resize(std::min(max_ints, kArrayChunkInts) * 4);
  if (way == ArrayWay::Bulk) swapped_.resize(std::min(max_ints, kArrayChunkInts));
}

IntArrayFile::~IntArrayFile() = default;

const io::IoCounters& IntArrayFile::counters() const noexcept { return file_->counters(); }

void IntArrayFile::write(std::uint64_t offset, std::span<const std::int32_t> values) {
  const std::size_t n = values.size();
  auto too_long = [&](std::size_t have) {
    return Error("write ints", file_->path().string(),
                 std::to_string(n) + " ints, more than the " + std::to_string(have) + " this file was opened for", EINVAL);
  };
  switch (way_) {
    case ArrayWay::Raw:
      for (std::size_t i = 0; i < n; i += kArrayChunkInts)
        file_->write_at(offset + 4 * i, std::as_bytes(values.subspan(i, std::min(kArrayChunkInts, n - i))));
      return;
    case ArrayWay::Encode: {
      if (n > 0 && bytes_.empty()) throw too_long(0);
      std::byte* b = bytes_.data();
      for (std::size_t i = 0; i < n; i += bytes_.size() / 4) {
        const std::size_t m = std::min(bytes_.size() / 4, n - i);
        for (std::size_t k = 0; k < m; ++k) {  // the paper's loop, shifts and masks per byte
          auto u = static_cast<std::uint32_t>(values[i + k]);
          b[4 * k + 0] = static_cast<std::byte>((u >> 24) & 255);
          b[4 * k + 1] = static_cast<std::byte>((u >> 16) & 255);
          b[4 * k + 2] = static_cast<std::byte>((u >> 8) & 255);
          b[4 * k + 3] = static_cast<std::byte>(u & 255);
        }
        file_->write_at(offset + 4 * i, std::span<const std::byte>(b, m * 4));
      }
      return;
    }
    case ArrayWay::ElementStream:
    case ArrayWay::BufferedElementStream:
      for (std::size_t i = 0; i < n; ++i) {
        auto be = to_big_endian(values[i]);
        file_->write_at(offset + 4 * i, be);
      }
      return;
    case ArrayWay::ArrayStream: {
      ByteArrayOutput out(n * 4);  // ByteArrayOutputStream(size), as in the paper's code
      for (std::size_t i = 0; i < n; ++i) out.write_int(values[i]);
      file_->write_at(offset, out.bytes());
      return;
    }
    case ArrayWay::Bulk: {
      if (n > 0 && swapped_.empty()) throw too_long(0);
      for (std::size_t i = 0; i < n; i += swapped_.size()) {
        const std::size_t m = std::min(swapped_.size(), n - i);
        std::span<std::uint32_t> chunk(swapped_.data(), m);
        swap_copy(values.subspan(i, m), chunk);
        file_->write_at(offset + 4 * i, std::as_bytes(chunk));
      }
      return;
    }
  }
}

void IntArrayFile::read(std::uint64_t offset, std::span<std::int32_t> out) {
  const std::size_t n = out.size();
  auto read_exact = [&](std::uint64_t at, std::span<std::byte> dst) {
    std::size_t got = file_->read_at(at, dst);
    if (got != dst.size())
      throw Error("read ints", file_->path().string(),
                  "short read: " + std::to_string(got) + " of " + std::to_string(dst.size()) + " bytes at offset " +
                      std::to_string(at),
                  EIO);
  };
  switch (way_) {
    case ArrayWay::Raw:
      for (std::size_t i = 0; i < n; i += kArrayChunkInts)
        read_exact(offset + 4 * i, std::as_writable_bytes(out.subspan(i, std::min(kArrayChunkInts, n - i))));
      return;
    case ArrayWay::Encode: {
      if (n > 0 && bytes_.empty())
        throw Error("read ints", file_->path().string(), "more ints than this file was opened for", EINVAL);
      for (std::size_t i = 0; i < n; i += bytes_.size() / 4) {
        const std::size_t m = std::min(bytes_.size() / 4, n - i);
        std::span<std::byte> raw(bytes_.data(), m * 4);
        read_exact(offset + 4 * i, raw);
        const std::byte* b = raw.data();
        for (std::size_t k = 0; k < m; ++k)  // the paper's decode loop
          out[i + k] = static_cast<std::int32_t>((std::to_integer<std::uint32_t>(b[4 * k + 3]) & 255) |
                                                 ((std::to_integer<std::uint32_t>(b[4 * k + 2]) & 255) << 8) |
                                                 ((std::to_integer<std::uint32_t>(b[4 * k + 1]) & 255) << 16) |
                                                 ((std::to_integer<std::uint32_t>(b[4 * k + 0]) & 255) << 24));
      }
      return;
    }
    case ArrayWay::ElementStream:
    case ArrayWay::BufferedElementStream:
      for (std::size_t i = 0; i < n; ++i) {
        std::array<std::byte, 4> be;
        read_exact(offset + 4 * i, be);
        out[i] = from_big_endian(be.data());
      }
      return;
    case ArrayWay::ArrayStream: {
      std::vector<std::byte> bytes(n * 4);  // new byte[size], then one read
      read_exact(offset, bytes);
      ByteArrayInput in(bytes);
      for (std::size_t i = 0; i < n; ++i) out[i] = in.read_int();
      return;
    }
    case ArrayWay::Bulk:
      for (std::size_t i = 0; i < n; i += kArrayChunkInts) {
        auto chunk = out.subspan(i, std::min(kArrayChunkInts, n - i));
        read_exact(offset + 4 * i, std::as_writable_bytes(chunk));
        swap_in_place(chunk);  // while the chunk is still in cache
      }
      return;
  }
}

void IntArrayFile::close() { file_->close(); }

}  // namespace iolab::suites::parallel
