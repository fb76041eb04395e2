#include "iolab/base/text_table.h"

#include <algorithm>
#include <cstdint>

namespace iolab {
namespace {

// The code point at s[i] (UTF-8; a malformed byte counts as one column) and its length.
std::pair<std::uint32_t, std::size_t> decode(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) n = 1;
  std::uint32_t cp = n == 1 ? b : b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return {b, 1};
    cp = (cp << 6) | (c & 0x3F);
  }
  return {cp, n};
}

bool combining(std::uint32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0x200B || cp == 0x200D;
}

bool wide(std::uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) || (cp >= 0x1F900 && cp <= 0x1F9FF) ||
         (cp >= 0x20000 && cp <= 0x3FFFD);
}

}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < s.size();) {
    auto [cp, n] = decode(s, i);
    i += n;
    columns += combining(cp) ? 0 : wide(cp) ? 2 : 1;
  }
  return columns;
}

std::string pad(std::string_view text, std::size_t width, bool right_aligned) {
  const std::size_t w = display_width(text);
  std::string out(text);
  if (w >= width) return out;
  return right_aligned ? std::string(width - w, ' ') + out : out + std::string(width - w, ' ');
}

std::size_t TextTable::add(std::vector<std::string> cells, bool sizes_columns) {
  if (sizes_columns) {
    if (width_.size() < cells.size()) width_.resize(cells.size(), 0);
    for (std::size_t c = 0; c < cells.size(); ++c) width_[c] = std::max(width_[c], display_width(cells[c]));
  }
  rows_.push_back(std::move(cells));
  return rows_.size() - 1;
}

std::string TextTable::line(std::size_t i) const {
  const auto& cells = rows_.at(i);
  std::string out;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const bool right = c < align_.size() ? align_[c] == Align::Right : true;
    if (c > 0) out += "  ";
    out += pad(cells[c], width(c), right);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string TextTable::render() const {
  std::string out;
  for (std::size_t i = 0; i < rows_.size(); ++i) out += line(i) + "\n";
  return out;
}

}  // namespace iolab
