// The record of seed 000: an employee, keyed by last name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace iolab::store {

struct Employee {
  std::string last;  // the key; UTF-8, 1 byte to 64 KiB
  std::string first;
  std::int32_t id = 0;
  std::int32_t zip = 0;
  bool employed = false;
  std::string comments;

  bool operator==(const Employee&) const = default;
};

// Longest string field (bytes); longer ones are refused with a clear Error.
inline constexpr std::size_t kMaxFieldBytes = 64 * 1024;

// Throws Error("put", ...) when the key is empty or a field exceeds kMaxFieldBytes.
void validate(const Employee& e);

// Bytes of the encoded record data: three length-prefixed strings, id, zip, employed.
std::size_t encoded_size(const Employee& e) noexcept;
// Appends the little-endian encoding (docs/store-format.md) to `out`.
void encode(const Employee& e, std::vector<std::byte>& out);
// Decodes `data` (exactly one record's data) into `out`, reusing its string
// capacity. Returns false when the data is not one well-formed record.
bool decode(std::span<const std::byte> data, Employee& out);

}  // namespace iolab::store
