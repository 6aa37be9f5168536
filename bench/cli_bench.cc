// The command line's cold start: a fresh process counts GLM-5 and exits.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "bench_models.h"

namespace trainflops::bench {
namespace {

// Runs the command line with `arguments`, its output to /dev/null; the exit status.
int run_cli(const std::vector<std::string>& arguments) {
  std::vector<char*> argv = {const_cast<char*>(TRAINFLOPS_CLI)};
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int status = -1;
  if (posix_spawn(&pid, TRAINFLOPS_CLI, &actions, nullptr, argv.data(), environ) == 0) waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&actions);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `count --preset glm-5` where the command line has presets, else the same
// model from its arguments file (`count --args`).
void CliColdStart(benchmark::State& state) {
  std::vector<std::string> arguments = {"count", "--preset", "glm-5", "--global-batch-size", "1024"};
  std::string label = "count --preset glm-5";
  if (run_cli(arguments) != 0) {
    arguments = {"count", "--args", glm5_args_path(), "--global-batch-size", "1024"};
    label = "count --args glm-5.args.json";
  }
  for (auto _ : state) {
    if (run_cli(arguments) != 0) fail(std::string(TRAINFLOPS_CLI) + " " + label + " failed");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(label);
}
BENCHMARK(CliColdStart)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace trainflops::bench
