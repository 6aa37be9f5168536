#include "report/fixed_decimal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

namespace trainflops {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[kFixedDecimalCapacity];
  char* end = buffer + kFixedDecimalCapacity;
  return std::string(write_fixed_before(end, value, decimals), end);
}

std::string printf_fixed(double value, int decimals) {
  char buffer[kFixedDecimalCapacity + 8];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

TEST(FixedDecimalTest, WritesWhatPrintfWrites) {
  struct Case {
    double value;
    int decimals;
    std::string text;
  };
  const Case cases[] = {
      {0, 1, "0.0"},
      {0.05, 1, "0.1"},    // 0.05 is a little above 1/20
      {0.15, 1, "0.1"},    // 0.15 is a little below 3/20
      {0.25, 1, "0.2"},    // exactly halfway: to even
      {0.35, 1, "0.3"},    // a little below
      {2.675, 2, "2.67"},  // a little below
      {1.005, 2, "1.00"},
      {999.95, 1, "1000.0"},  // a little above
      {1e12 + 0.5, 0, "1000000000000"},
      {123.456, 0, "123"},
      {7, 3, "7.000"},
      {0.0001, 6, "0.000100"},
      {-1.25, 1, "-1.2"},
      {-0.0, 1, "-0.0"},
      {1e20, 1, "100000000000000000000.0"},
      {std::numeric_limits<double>::infinity(), 1, "inf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(printf_fixed(c.value, 17));
    EXPECT_EQ(fixed(c.value, c.decimals), c.text);
    EXPECT_EQ(printf_fixed(c.value, c.decimals), c.text);
  }
}

// Random values at every scale a table shows, and values on and next to every
// rounding boundary: printf is the oracle.
TEST(FixedDecimalTest, AgreesWithPrintfOnRandomAndBoundaryValues) {
  std::mt19937_64 rng(11);
  for (int decimals = 0; decimals <= kMaxFixedDecimals; ++decimals) {
    for (int i = 0; i < 20000; ++i) {
      const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(-8, 14)(rng));
      const double value = std::uniform_real_distribution<double>(0, magnitude)(rng);
      ASSERT_EQ(fixed(value, decimals), printf_fixed(value, decimals)) << printf_fixed(value, 20);
    }
    for (int units = 0; units < 2000; ++units) {
      const double boundary = (units + 0.5) / std::pow(10.0, decimals);
      for (double value : {std::nextafter(boundary, 0.0), boundary, std::nextafter(boundary, 1e300)}) {
        ASSERT_EQ(fixed(value, decimals), printf_fixed(value, decimals)) << printf_fixed(value, 20);
      }
    }
  }
}

TEST(FixedDecimalTest, WritesIntegersBackwards) {
  for (const std::uint64_t value : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{10}, std::uint64_t{1048576},
                                    std::numeric_limits<std::uint64_t>::max()}) {
    char buffer[24];
    char* end = buffer + sizeof buffer;
    EXPECT_EQ(std::string(write_integer_before(end, value), end), std::to_string(value));
  }
}

}  // namespace
}  // namespace trainflops
