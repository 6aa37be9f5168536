// Flags files as launch scripts write them.
#include "inputs/flags_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trainflops {
namespace {

using Words = std::vector<std::string>;

TEST(FlagsFileTest, SplitsAsAShellReadsALaunchScript) {
  const struct {
    std::string text;
    Words words;
  } cases[] = {
      {"--num-layers 4 --swiglu\n--hidden-size 64\n", {"--num-layers", "4", "--swiglu", "--hidden-size", "64"}},
      {"  --num-layers\t4 \\\n    --swiglu \\\n", {"--num-layers", "4", "--swiglu"}},
      {"# the model\n--num-layers 4 # after a flag\n#--swiglu\n", {"--num-layers", "4"}},
      {"--split 99,1,0 --data-path a#b", {"--split", "99,1,0", "--data-path", "a#b"}},
      {"--hybrid-layer-pattern \"M*M* E\" --spec 'a b' c\\ d",
       {"--hybrid-layer-pattern", "M*M* E", "--spec", "a b", "c d"}},
      {"--moe-layer-freq '([0]*3+[1]*58)'", {"--moe-layer-freq", "([0]*3+[1]*58)"}},
      {"--x \"a\\\"b\" --y ''", {"--x", "a\"b", "--y", ""}},
      {"", {}},
      {"\r\n--lr 1\r\n", {"--lr", "1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<Words> words = split_flags_file(c.text, "f");
    ASSERT_TRUE(words.ok()) << words.error().message();
    EXPECT_EQ(words.value(), c.words);
  }
}

TEST(FlagsFileTest, SaysWhatAShellWouldSupply) {
  const struct {
    std::string text, message;
  } cases[] = {
      {"--num-layers 4\n--hidden-size $HIDDEN\n",
       "f:2: \"$\": shell variables and commands are not expanded; write the value itself"},
      {"--num-layers \"${N}\"", "f:1: \"$\": shell variables and commands are not expanded; write the value itself"},
      {"--lr `cat lr`", "f:1: \"`\": shell variables and commands are not expanded; write the value itself"},
      {"--spec 'a\n\nb", "f:1: the quote ' is not closed"},
      {"--lr 1 \\", "f:1: ends with a backslash"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<Words> words = split_flags_file(c.text, "f");
    ASSERT_FALSE(words.ok());
    EXPECT_EQ(words.error().message(), c.message);
  }
}

TEST(FlagsFileTest, ExpandsAtWordsInPlace) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trainflops_flags_file_test";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.flags").string(), nested = (dir / "nested.flags").string();
  std::ofstream(model) << "--num-layers 4 \\\n  --hidden-size 64\n";
  std::ofstream(nested) << "--lr 1 @" << model << "\n";
  const Result<Words> expanded = expand_flags_files({"--seq-length", "8", "@" + model, "--swiglu"});
  ASSERT_TRUE(expanded.ok()) << expanded.error().message();
  EXPECT_EQ(expanded.value(), (Words{"--seq-length", "8", "--num-layers", "4", "--hidden-size", "64", "--swiglu"}));

  const Result<Words> twice = expand_flags_files({"@" + nested});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), nested + ": \"@" + model + "\": a flags file cannot name another flags file");
  const Result<Words> missing = expand_flags_files({"@" + (dir / "none").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), (dir / "none").string() + ": cannot open (No such file or directory)");
  EXPECT_EQ(expand_flags_files({"@"}).error().message(), "\"@\": a flags file is @PATH");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainflops
