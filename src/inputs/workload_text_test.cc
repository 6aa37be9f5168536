#include "trainflops/workload_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace trainflops {
namespace {

TEST(ParseSizeTest, ReadsDecimalsWithSuffixesAndNamesTheRuleBroken) {
  constexpr auto kWith = SizeSuffixes::kAccepted;
  constexpr auto kWithout = SizeSuffixes::kRejected;
  struct Case {
    std::string text;
    std::int64_t minimum;
    SizeSuffixes suffixes;
    std::int64_t value;   // when the text is valid
    std::string message;  // else
  };
  const std::string at_least_one = "must be an integer >= 1, optionally with k or m";
  const std::string too_large = "must be at most 9223372036854775807";
  const Case cases[] = {
      {"4096", 1, kWith, 4096, ""},
      {"4k", 1, kWith, 4096, ""},
      {"128K", 1, kWith, 131072, ""},
      {"2m", 1, kWith, 2097152, ""},
      {"0004k", 1, kWith, 4096, ""},
      {"0", 0, kWithout, 0, ""},
      {"9223372036854775807", 1, kWith, INT64_MAX, ""},
      {"8796093022207m", 1, kWith, 9223372036853727232, ""},  // (2^43 - 1) * 2^20
      {"9223372036854775808", 1, kWith, 0, too_large},
      {"99999999999999999999", 1, kWith, 0, too_large},
      {"8796093022208m", 1, kWith, 0, too_large},     // 2^43 * 2^20 = 2^63
      {"9007199254740992k", 1, kWith, 0, too_large},  // 2^53 * 2^10
      {"0", 1, kWith, 0, at_least_one},
      {"", 1, kWith, 0, at_least_one},
      {"k", 1, kWith, 0, at_least_one},
      {"-4", 1, kWith, 0, at_least_one},
      {"+4", 1, kWith, 0, at_least_one},
      {"1.5", 1, kWith, 0, at_least_one},
      {"4g", 1, kWith, 0, at_least_one},
      {"4k", 1, kWithout, 0, "must be an integer >= 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<std::int64_t> size = parse_size(c.text, "--size", c.minimum, c.suffixes);
    if (c.message.empty()) {
      ASSERT_TRUE(size.ok()) << size.error().message();
      EXPECT_EQ(size.value(), c.value);
    } else {
      ASSERT_FALSE(size.ok());
      EXPECT_EQ(size.error().message(), "--size = \"" + c.text + "\": " + c.message);
      EXPECT_EQ(size.error().code(), c.message == too_large ? ErrorCode::kOverflow : ErrorCode::kInvalidInput);
    }
  }
}

}  // namespace
}  // namespace trainflops
