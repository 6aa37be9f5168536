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

TEST(FlagsFileTest, ReadsTheWordsOfTheFileAnAtWordNames) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trainflops_flags_file_test";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.flags").string(), passwords = (dir / "passwd").string();
  std::ofstream(model) << "--num-layers 4 \\\n  --hidden-size 64\n";
  std::ofstream(passwords) << "root:x:0:0:root:/root:/bin/bash\n";
  const Result<FlagsFile> file = read_flags_file("@" + model);
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file.value().path, model);
  EXPECT_EQ(file.value().words, (Words{"--num-layers", "4", "--hidden-size", "64"}));

  struct Case {
    std::string at_path, message;
  };
  const Case cases[] = {
      {"@" + (dir / "none").string(), (dir / "none").string() + ": cannot open (No such file or directory)"},
      {"@", "\"@\": a flags file is @PATH"},
      // Not a flags file: what it holds is not shown.
      {"@" + passwords, passwords + ": not a flags file: its first word is not a flag (flags start with --)"},
  };
  for (const Case& c : cases) {
    const Result<FlagsFile> bad = read_flags_file(c.at_path);
    ASSERT_FALSE(bad.ok()) << c.at_path;
    EXPECT_EQ(bad.error().message(), c.message);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainflops
