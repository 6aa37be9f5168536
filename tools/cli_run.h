// For the command-line tests: runs `trainflops` as a user would, as a
// subprocess, and returns its exit status, stdout and stderr.
#ifndef TRAINFLOPS_TOOLS_CLI_RUN_H_
#define TRAINFLOPS_TOOLS_CLI_RUN_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trainflops::cli_test {

struct CliRun {
  int status;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A directory of this test process's own: ctest runs the tests in parallel.
inline std::string scratch_dir() {
  const std::string dir = testing::TempDir() + "trainflops_cli_" + std::to_string(getpid()) + "/";
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `trainflops <arguments>` (a shell word list) with `input` on stdin.
inline CliRun run(const std::string& arguments, const std::string& input = "") {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "cli_in") << input;
  const std::string command =
      std::string(TRAINFLOPS_CLI) + " " + arguments + " < " + dir + "cli_in > " + dir + "cli_out 2> " + dir + "cli_err";
  const int raw = std::system(command.c_str());
  return CliRun{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(dir + "cli_out"), slurp(dir + "cli_err")};
}

}  // namespace trainflops::cli_test

#endif  // TRAINFLOPS_TOOLS_CLI_RUN_H_
