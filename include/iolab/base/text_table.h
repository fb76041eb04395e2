// Text laid out in columns for a terminal: each column as wide as its widest
// cell, measured in display columns (a UTF-8 code point is one column, a
// combining mark none, an East Asian wide character two), not bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace iolab {

// Terminal columns `text` takes.
std::size_t display_width(std::string_view text);
// `text` padded with spaces to `width` columns: on the left when `right_aligned`.
std::string pad(std::string_view text, std::size_t width, bool right_aligned);

class TextTable {
 public:
  enum class Align { Left, Right };
  // Column alignments; columns past the list are right-aligned. Default: the
  // first column left (names), the rest right (figures).
  explicit TextTable(std::vector<Align> align = {Align::Left}) : align_(std::move(align)) {}

  // Adds a row; a row that does not size the columns (a note spanning the
  // table) is still laid out by line() but leaves the widths alone.
  std::size_t add(std::vector<std::string> cells, bool sizes_columns = true);
  std::size_t rows() const noexcept { return rows_.size(); }
  // Row `i` padded to the columns, cells two spaces apart, no trailing spaces.
  std::string line(std::size_t i) const;
  // Every line, each ending in a newline.
  std::string render() const;
  // The width of column `c` (its widest sizing cell).
  std::size_t width(std::size_t c) const noexcept { return c < width_.size() ? width_[c] : 0; }

 private:
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> width_;
};

}  // namespace iolab
