// The decimal text of doubles against the standard library's own
// std::to_chars and std::from_chars, which this platform's library has.
#include "base/decimal_text.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace trainflops {
namespace {

std::string standard_shortest(double value) {
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

std::string standard_fixed(double value, int decimals) {
  char text[400];
  return std::string(text, std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals).ptr);
}

std::optional<double> standard_parse(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

double from_bits(std::uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Doubles of every kind: any bit pattern, integers, round decimals, and
// the edges of the notations and of the range.
std::vector<double> sample_doubles() {
  std::vector<double> values = {0.0,
                                -0.0,
                                1e15,
                                1e16,
                                1e21,
                                2.5e12,
                                1e-4,
                                1e-5,
                                0.1,
                                302592963584.0,
                                0.9283093991907119,
                                12345678901234568.0,
                                123456789012345680.0,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 random(20260801);
  for (int i = 0; i < 20000; ++i) {
    switch (i % 4) {
      case 0: values.push_back(from_bits(random())); break;
      case 1:
        values.push_back(std::ldexp(static_cast<double>(random() >> 11), static_cast<int>(random() % 200) - 100));
        break;
      case 2:
        values.push_back(static_cast<double>(random() % 100000) * std::pow(10.0, static_cast<int>(random() % 61) - 30));
        break;
      default: values.push_back(static_cast<double>(random() % 1000000000000000000ULL)); break;
    }
  }
  return values;
}

TEST(DecimalTextTest, ShortestRoundTripIsWhatToCharsWrites) {
  for (double value : sample_doubles()) {
    ASSERT_EQ(shortest_round_trip(value), standard_shortest(value)) << std::hexfloat << value;
  }
}

TEST(DecimalTextTest, FixedPointIsWhatToCharsWritesWithAPrecision) {
  for (double value : sample_doubles()) {
    for (int decimals : {0, 1, 2, 6}) {
      ASSERT_EQ(fixed_point_text(value, decimals), standard_fixed(value, decimals)) << std::hexfloat << value;
    }
  }
}

TEST(DecimalTextTest, ParseReadsWhatFromCharsReads) {
  const std::vector<std::string> texts = {"0", "-0", "2.2e-4", "40", "0.4", ".5", "5.", "1e3", "1E+3", "1e-3",
                                          "1.7976931348623157e308", "4.9e-324", "2.5e-324", "1e-310", "inf", "INF",
                                          "-Infinity", "nan", "-nan", "nan(123)",
                                          // not numbers, or not wholly
                                          "", "-", "+1", " 1", "1 ", "\t1", "0x10", "-0X1p3", "1e", "1e+", "1_0", "1,5",
                                          "in", "infinit", "--1", "- 1", "nan(",
                                          // out of range
                                          "1e400", "-1e400", "1.7976931348623159e308", "1e-400", "2.4e-324"};
  for (const std::string& text : texts) {
    const std::optional<double> expected = standard_parse(text);
    const std::optional<double> parsed = parse_double(text);
    ASSERT_EQ(parsed.has_value(), expected.has_value()) << '"' << text << '"';
    if (!expected) continue;
    if (std::isnan(*expected)) {
      EXPECT_TRUE(std::isnan(*parsed)) << text;
    } else {
      EXPECT_EQ(*parsed, *expected) << text;
    }
  }
  for (double value : sample_doubles()) {
    const std::string text = standard_shortest(value);
    const std::optional<double> parsed = parse_double(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    if (!std::isnan(value)) {
      ASSERT_EQ(*parsed, value) << text;
    }
  }
}

}  // namespace
}  // namespace trainflops
