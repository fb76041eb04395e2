#include "iolab/store/employee.h"

#include <cstring>

#include "iolab/base/error.h"
#include "iolab/base/le.h"

namespace iolab::store {

void validate(const Employee& e) {
  if (e.last.empty()) throw Error("put", "employee", "the key (last name) is empty");
  auto check = [&](const std::string& s, const char* field) {
    if (s.size() > kMaxFieldBytes)
      throw Error("put", "employee '" + e.last.substr(0, 40) + "'",
                  std::string(field) + " is " + std::to_string(s.size()) + " bytes; at most " +
                      std::to_string(kMaxFieldBytes) + " (64 KiB) allowed");
  };
  check(e.last, "last");
  check(e.first, "first");
  check(e.comments, "comments");
}

std::size_t encoded_size(const Employee& e) noexcept {
  return 4 + e.last.size() + 4 + e.first.size() + 4 + 4 + 1 + 4 + e.comments.size();
}

void encode(const Employee& e, std::vector<std::byte>& out) {
  std::size_t at = out.size();
  out.resize(at + encoded_size(e));
  std::byte* p = out.data() + at;
  auto put_string = [&p](const std::string& s) {
    p = le::put32(p, static_cast<std::uint32_t>(s.size()));
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  put_string(e.last);
  put_string(e.first);
  p = le::put32(p, static_cast<std::uint32_t>(e.id));
  p = le::put32(p, static_cast<std::uint32_t>(e.zip));
  *p++ = std::byte{e.employed ? std::uint8_t{1} : std::uint8_t{0}};
  put_string(e.comments);
}

bool decode(std::span<const std::byte> data, Employee& out) {
  const std::byte* p = data.data();
  std::size_t left = data.size();
  auto get_string = [&](std::string& s) {
    if (left < 4) return false;
    std::uint32_t n = le::get32(p);
    p += 4;
    left -= 4;
    if (n > left || n > kMaxFieldBytes) return false;
    s.assign(reinterpret_cast<const char*>(p), n);
    p += n;
    left -= n;
    return true;
  };
  if (!get_string(out.last) || out.last.empty() || !get_string(out.first)) return false;
  if (left < 9) return false;
  out.id = static_cast<std::int32_t>(le::get32(p));
  out.zip = static_cast<std::int32_t>(le::get32(p + 4));
  auto employed = static_cast<std::uint8_t>(p[8]);
  if (employed > 1) return false;
  out.employed = employed == 1;
  p += 9;
  left -= 9;
  return get_string(out.comments) && left == 0;
}

}  // namespace iolab::store
