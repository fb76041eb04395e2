#include "iolab/base/text_table.h"

#include <gtest/gtest.h>

namespace iolab {
namespace {

TEST(TextTable, WidthIsInColumnsNotBytes) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("1.2 µs"), 6u);        // µ is two bytes, one column
  EXPECT_EQ(display_width("a … b ± c"), 9u);     // … and ± likewise
  EXPECT_EQ(display_width("e\xcc\x81"), 1u);     // e + a combining acute accent
  EXPECT_EQ(display_width("\xe5\xad\x97"), 2u);  // a CJK character is two columns wide
  EXPECT_EQ(display_width("\xff"), 1u);          // a malformed byte still takes a column
}

TEST(TextTable, ColumnsLineUpWhateverTheBytes) {
  TextTable t;
  t.add({"METHOD", "P99"});
  t.add({"mmap", "1.2 µs"});
  t.add({"pread", "12 ms"});
  EXPECT_EQ(t.render(), "METHOD     P99\nmmap    1.2 µs\npread    12 ms\n");
}

TEST(TextTable, ANoteRowDoesNotWidenTheColumns) {
  TextTable t({TextTable::Align::Left, TextTable::Align::Left});
  t.add({"a", "b"});
  t.add({"a much longer note"}, false);
  EXPECT_EQ(t.width(0), 1u);
  EXPECT_EQ(t.line(1), "a much longer note");
}

}  // namespace
}  // namespace iolab
