#include "trainflops/result.h"

#include <gtest/gtest.h>

#include <utility>

namespace trainflops {
namespace {

Status failing(const char* message) { return Error(ErrorCode::kOverflow, message); }

Status passing_through(bool fail) {
  TRAINFLOPS_RETURN_IF_ERROR(fail ? failing("x = 2^200: does not fit") : Status(Ok{}));
  return Ok{};
}

// A Status holds only its error; copies and moves keep what it says.
TEST(ResultTest, StatusKeepsItsErrorThroughCopiesAndMoves) {
  const Status ok = Ok{};
  EXPECT_TRUE(ok.ok());
  const Status error = failing("x = 3: must be even");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().message(), "x = 3: must be even");
  EXPECT_EQ(error.error().code(), ErrorCode::kOverflow);

  Status copy = error;
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().message(), "x = 3: must be even");
  EXPECT_EQ(copy.error().code(), ErrorCode::kOverflow);
  EXPECT_NE(&copy.error(), &error.error());  // its own error, not a shared one

  copy = ok;
  EXPECT_TRUE(copy.ok());
  copy = error;
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.error().message(), "x = 3: must be even");

  const Status moved = std::move(copy);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().message(), "x = 3: must be even");
}

TEST(ResultTest, ReturnIfErrorPassesTheErrorOn) {
  EXPECT_TRUE(passing_through(false).ok());
  const Status passed = passing_through(true);
  ASSERT_FALSE(passed.ok());
  EXPECT_EQ(passed.error().message(), "x = 2^200: does not fit");
  EXPECT_EQ(passed.error().code(), ErrorCode::kOverflow);
}

}  // namespace
}  // namespace trainflops
