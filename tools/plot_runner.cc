#include "plot_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace trainflops::cli {
namespace {

// Debian's interpreter: it sees python3-matplotlib, where the python3 on PATH
// may be another interpreter without it.
constexpr const char* kPython = "/usr/bin/python3";

bool holds_plot_module(const std::filesystem::path& dir) {
  std::error_code ignored;
  return !dir.empty() && std::filesystem::is_regular_file(dir / "trainflops" / "plot.py", ignored);
}

// The directory to put first on the subprocess's PYTHONPATH.
Result<std::string> module_dir(std::string_view pythonpath) {
  std::error_code error;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / "python";
  if (!error && holds_plot_module(beside)) return beside.string();
  while (!pythonpath.empty()) {
    const std::size_t end = std::min(pythonpath.find(':'), pythonpath.size());
    if (holds_plot_module(pythonpath.substr(0, end))) return std::string(pythonpath.substr(0, end));
    pythonpath.remove_prefix(std::min(end + 1, pythonpath.size()));
  }
  return Error("the Python module trainflops.plot is neither in " + beside.string() +
               " nor on PYTHONPATH (build the CMake target trainflops_python_package)");
}

// One word for /bin/sh, whatever characters it holds.
std::string shell_quoted(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

Status draw_plot(const std::string& kind, const std::string& json, const std::string& file) {
  const char* inherited = std::getenv("PYTHONPATH");
  const std::string pythonpath = inherited ? inherited : "";
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string dir, module_dir(pythonpath));
  if (access(kPython, X_OK) != 0) {
    return Error(std::string(kPython) + " is missing: pictures need Debian's python3 and python3-matplotlib");
  }
  const std::string command = "PYTHONPATH=" + shell_quoted(pythonpath.empty() ? dir : dir + ":" + pythonpath) + " " +
                              kPython + " -m trainflops.plot " + kind + " - -o " + shell_quoted(file);
  // Python stops before reading its stdin when it rejects -o; writing to the
  // closed pipe then must fail, not kill trainflops before it says why.
  std::signal(SIGPIPE, SIG_IGN);
  FILE* pipe = popen(command.c_str(), "w");
  if (pipe == nullptr) return Error(std::string("cannot start ") + kPython);
  std::fwrite(json.data(), 1, json.size(), pipe);
  const int status = pclose(pipe);
  const std::string what = std::string(kPython) + " -m trainflops.plot ";
  if (status == -1) return Error(what + "could not be waited for");
  if (WIFSIGNALED(status)) return Error(what + "was killed by signal " + std::to_string(WTERMSIG(status)));
  if (WEXITSTATUS(status) != 0) return Error(what + "failed with exit status " + std::to_string(WEXITSTATUS(status)));
  return Ok{};
}

}  // namespace trainflops::cli
