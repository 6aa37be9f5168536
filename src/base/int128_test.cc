#include "trainflops/int128.h"

#include <gtest/gtest.h>

namespace trainflops {
namespace {

constexpr Int128 kMax = static_cast<Int128>(~static_cast<unsigned __int128>(0) >> 1);
constexpr Int128 kMin = -kMax - 1;

TEST(Int128Test, DecimalRoundTrip) {
  struct Case {
    Int128 value;
    const char* text;
  };
  const std::vector<Case> cases = {
      {0, "0"},
      {-7, "-7"},
      {Int128{1} << 64, "18446744073709551616"},
      {kMax, "170141183460469231731687303715884105727"},
      {kMin, "-170141183460469231731687303715884105728"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(to_decimal(c.value), c.text);
    EXPECT_EQ(parse_decimal(c.text), std::optional<Int128>(c.value)) << c.text;
  }
}

TEST(Int128Test, ParseRejects) {
  for (const char* text : {"", "-", "12a", "1.5", " 1", "170141183460469231731687303715884105728",
                           "-170141183460469231731687303715884105729"}) {
    EXPECT_FALSE(parse_decimal(text).has_value()) << text;
  }
  EXPECT_EQ(parse_decimal("+42"), std::optional<Int128>(42));
}

TEST(Int128Test, CheckedArithmeticDetectsOverflow) {
  EXPECT_EQ(checked_add(kMax - 1, 1), std::optional<Int128>(kMax));
  EXPECT_FALSE(checked_add(kMax, 1).has_value());
  EXPECT_FALSE(checked_add(kMin, -1).has_value());
  EXPECT_EQ(checked_mul(Int128{1} << 62, 4), std::optional<Int128>(Int128{1} << 64));
  EXPECT_FALSE(checked_mul(Int128{1} << 64, Int128{1} << 63).has_value());
  EXPECT_FALSE(checked_mul(kMin, -1).has_value());
  // Factors of 64 bits (the one-instruction product) at their extremes, and
  // one factor just past them.
  constexpr std::int64_t kMin64 = INT64_MIN, kMax64 = INT64_MAX;
  EXPECT_EQ(checked_mul(kMin64, kMin64), std::optional<Int128>(Int128{1} << 126));
  EXPECT_EQ(checked_mul(kMin64, kMax64), std::optional<Int128>(-(Int128{1} << 126) + (Int128{1} << 63)));
  EXPECT_EQ(checked_mul(-1, kMin64), std::optional<Int128>(Int128{1} << 63));
  EXPECT_EQ(checked_mul(Int128{kMax64} + 1, -3), std::optional<Int128>(-3 * (Int128{1} << 63)));
  EXPECT_EQ(checked_mul(Int128{1} << 63, Int128{1} << 63), std::optional<Int128>(Int128{1} << 126));
  EXPECT_FALSE(checked_mul(Int128{1} << 64, Int128{1} << 64).has_value());
}

TEST(Int128Test, ToDoubleRoundsToNearest) {
  EXPECT_EQ(to_double((Int128{1} << 100) + 1), 0x1p100);
  EXPECT_EQ(to_double(-(Int128{1} << 70)), -0x1p70);
  EXPECT_EQ(to_double(Int128{(1LL << 53) + 1}), 9007199254740992.0);  // tie rounds to even
}

}  // namespace
}  // namespace trainflops
