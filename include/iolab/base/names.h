// The one way an enum has names (for options, job files and results): a
// table of {value, name} pairs, read both ways.
//
//   constexpr NameTable<Op, 2> kOps{{{Op::Read, "read"}, {Op::Write, "write"}}};
//   to_string(op) -> name_of(kOps, op); parse -> parse_name(kOps, text, "op")
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "iolab/base/error.h"

namespace iolab {

template <typename E>
struct Named {
  E value;
  std::string_view name;
};
template <typename E, std::size_t N>
using NameTable = std::array<Named<E>, N>;

// The name of `value`; "?" for a value the table lacks.
template <typename E, std::size_t N>
constexpr std::string_view name_of(const NameTable<E, N>& table, E value) noexcept {
  for (const auto& [v, n] : table)
    if (v == value) return n;
  return "?";
}

// The value named `text`, if any.
template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const NameTable<E, N>& table, std::string_view text) noexcept {
  for (const auto& [v, n] : table)
    if (n == text) return v;
  return std::nullopt;
}

// "a, b or c": the names, for messages (`last` before the last one).
template <typename E, std::size_t N>
std::string choices_of(const NameTable<E, N>& table, std::string_view last = " or ") {
  std::string s;
  for (std::size_t i = 0; i < N; ++i) s += std::string(i == 0 ? "" : i + 1 == N ? last : ", ") + std::string(table[i].name);
  return s;
}

// The value named `text`, or a UsageError: "<what> '<text>': <cause>".
template <typename E, std::size_t N>
E parse_name(const NameTable<E, N>& table, std::string_view text, std::string_view what, std::string_view cause) {
  if (auto v = value_of(table, text)) return *v;
  throw UsageError(std::string(what) + " '" + std::string(text) + "'", std::string(cause));
}

// The value named `text`, or a UsageError: "<what> '<text>': expected a, b or c".
template <typename E, std::size_t N>
E parse_name(const NameTable<E, N>& table, std::string_view text, std::string_view what) {
  if (auto v = value_of(table, text)) return *v;
  return parse_name(table, text, what, "expected " + choices_of(table));
}

}  // namespace iolab
