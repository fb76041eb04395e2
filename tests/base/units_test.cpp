// Sizes as people write them, and figures as people read them.
#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/base/units.h"

namespace iolab {
namespace {

TEST(ParseSize, AcceptsNumbersAndBinaryUnits) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4k"), 4096u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("4kb"), 4096u);
  EXPECT_EQ(parse_size("512b"), 512u);
  EXPECT_EQ(parse_size("1m"), 1048576u);
  EXPECT_EQ(parse_size("10MiB"), 10485760u);
  EXPECT_EQ(parse_size("1.5g"), 1610612736u);
  EXPECT_EQ(parse_size("0.5k"), 512u);
  EXPECT_EQ(parse_size("2t"), std::uint64_t{2} << 40);
}

TEST(ParseSize, IsExactUpToTwoToTheSixtyFour) {
  EXPECT_EQ(parse_size("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_size("9007199254740993"), 9007199254740993u) << "no rounding through a double";
  EXPECT_EQ(parse_size("16777215t"), std::uint64_t{16777215} << 40);
  EXPECT_EQ(parse_size("1.25k"), 1280u);
  EXPECT_EQ(parse_size("0.001953125k"), 2u);
  EXPECT_EQ(parse_size("1.50000g"), 1610612736u);
}

TEST(ParseSize, NamesTheOptionItWasGivenFor) {
  try {
    parse_size("4q", "--bs");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "invalid --bs '4q': unknown unit; use b, k, m, g or t (powers of 1024)");
  }
}

TEST(ParseCount, DecimalOrHexWithinItsRange) {
  EXPECT_EQ(parse_count("0", "--seed"), 0u);
  EXPECT_EQ(parse_count("4267", "--seed"), 4267u);
  EXPECT_EQ(parse_count("0x10AB", "--seed"), 4267u);
  EXPECT_EQ(parse_count("0X10ab", "--seed"), 4267u);
  EXPECT_EQ(parse_count("18446744073709551615", "--seed"), UINT64_MAX);
  EXPECT_EQ(parse_count("0xffffffffffffffff", "--seed"), UINT64_MAX);
  EXPECT_EQ(parse_count("100000", "--reps", 1, 100000), 100000u);
  for (const char* bad : {"", "-5", "+5", "1.5", "1e3", " 7", "7 ", "0x", "0xg", "18446744073709551616",
                          "0x10000000000000000", "99999999999999999999", "4k", "nan"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    try {
      parse_count(bad, "--seed");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--seed '") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_count("0", "--reps", 1, 100000), UsageError);
  EXPECT_THROW(parse_count("100001", "--reps", 1, 100000), UsageError);
}

TEST(ParseSeconds, PlainSecondsOrAUnit) {
  EXPECT_DOUBLE_EQ(parse_seconds("0.1", "--min-time", 3600), 0.1);
  EXPECT_DOUBLE_EQ(parse_seconds("0", "--min-time", 3600), 0);
  EXPECT_DOUBLE_EQ(parse_seconds("2s", "--min-time", 3600), 2);
  EXPECT_DOUBLE_EQ(parse_seconds("100ms", "--min-time", 3600), 0.1);
  EXPECT_DOUBLE_EQ(parse_seconds("250us", "--min-time", 3600), 250e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("250\u00b5s", "--min-time", 3600), 250e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("5ns", "--min-time", 3600), 5e-9);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5min", "--min-time", 3600), 90);
  EXPECT_DOUBLE_EQ(parse_seconds("1h", "--min-time", 3600), 3600);
  for (const char* bad : {"", "nan", "inf", "-1", "1e999", "1e3", "5x", "1.", " 1", "1 s", "2h", "0x10"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    try {
      parse_seconds(bad, "--min-time", 3600);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--min-time '") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseSize, RejectsWithUsageErrorNamingTheText) {
  for (const char* bad : {"12q", "", "-1", "1.5", "k", "KiB", "1..5k", ".", "4 k", "1e3", "4kk", " 4k", "0x10",
                          "99999999999t", "18446744073709551616", "16777216t", "1.", ".5k", "4k ", "+4k", "1.3b",
                          "0.0001k", "nan", "inf"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    try {
      parse_size(bad);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
      EXPECT_EQ(e.error_number(), 0);
    }
  }
}

TEST(FormatBytes, Samples) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(format_bytes(10 * 1024 * 1024 + 300 * 1024), "10.3 MiB");
  EXPECT_EQ(format_bytes(256.0 * 1024 * 1024), "256 MiB");
  EXPECT_EQ(format_bytes(1.0 * (1 << 30) * 1.234), "1.23 GiB");
  EXPECT_EQ(format_bytes(3.0 * (std::uint64_t{1} << 40)), "3 TiB");
}

TEST(FormatRate, Samples) {
  EXPECT_EQ(format_rate(1.23 * (1 << 30)), "1.23 GiB/s");
  EXPECT_EQ(format_rate(512.0 * 1024 * 1024), "512 MiB/s");
  EXPECT_EQ(format_rate(100), "100 B/s");
  EXPECT_EQ(format_rate(2048), "2 KiB/s");
}

TEST(FormatOthers, Samples) {
  EXPECT_EQ(format_duration(850e-9), "850 ns");
  EXPECT_EQ(format_duration(12.3e-6), "12.3 µs");
  EXPECT_EQ(format_duration(4.56e-3), "4.56 ms");
  EXPECT_EQ(format_duration(1.23), "1.23 s");
  EXPECT_EQ(format_count(1.2e6), "1.2 M");
  EXPECT_EQ(format_count(950e3), "950 k");
  EXPECT_EQ(format_count(12), "12");
  EXPECT_EQ(size_label(4096), "4k");
  EXPECT_EQ(size_label(1 << 20), "1m");
  EXPECT_EQ(size_label(1 << 30), "1g");
  EXPECT_EQ(size_label(1000), "1000");
  EXPECT_EQ(size_label(0), "0");
  EXPECT_EQ(exact_size(63), "63 B");
  EXPECT_EQ(exact_size(4095), "4095 B");
  EXPECT_EQ(exact_size(4096), "4 KiB");
  EXPECT_EQ(exact_size(1020 * 1024), "1020 KiB");
  EXPECT_EQ(exact_size(8u << 20), "8 MiB");
  EXPECT_EQ(exact_size(0), "0 B");
}

TEST(Errors, OneLineWithOperationSubjectAndCause) {
  Error e("pwrite", "/tmp/x", ENOSPC);
  EXPECT_EQ(std::string(e.what()), "pwrite /tmp/x: No space left on device");
  EXPECT_EQ(e.operation(), "pwrite");
  EXPECT_EQ(e.subject(), "/tmp/x");
  EXPECT_EQ(e.error_number(), ENOSPC);
  Error d("verify", "/tmp/y", "digest mismatch at offset 4096");
  EXPECT_EQ(std::string(d.what()), "verify /tmp/y: digest mismatch at offset 4096");
  EXPECT_EQ(d.error_number(), 0);
  UsageError u("size '12q'", "unknown unit");
  EXPECT_EQ(std::string(u.what()), "invalid size '12q': unknown unit");
}

TEST(Errors, ControlCharactersFromOutsideAreEscaped) {
  Error e("open", "/tmp/a\nb\x1b[31m", "No such file or directory\r", ENOENT);
  EXPECT_EQ(std::string(e.what()), "open /tmp/a\\nb\\x1b[31m: No such file or directory\\r");
  EXPECT_EQ(e.subject(), "/tmp/a\nb\x1b[31m") << "the subject itself is kept as given";
  EXPECT_EQ(printable("tab\there \x7f del, \xc2\x9b csi, caf\xc3\xa9 \xe2\x82\xac"),
            "tab\\there \\x7f del, \\u009b csi, caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(one_line("CLI11 says:\n  something\n\x1b[0m\n"), "CLI11 says:   something \\x1b[0m");
  // Separators and bidirectional controls a terminal would act on (issue 29 item 15); other
  // characters of the same block (U+2014, the em dash) pass as they are.
  EXPECT_EQ(printable("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xe2\x80\xae" "d\xe2\x81\xa6" "e\xd8\x9c" "f\xe2\x80\x94"),
            "a\\u2028b\\u2029c\\u202ed\\u2066e\\u061cf\xe2\x80\x94");
}

}  // namespace
}  // namespace iolab
