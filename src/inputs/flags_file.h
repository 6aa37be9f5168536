// Internal: Megatron-LM flags kept in a file, as a launch script writes them.
#ifndef TRAINFLOPS_SRC_INPUTS_FLAGS_FILE_H_
#define TRAINFLOPS_SRC_INPUTS_FLAGS_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "trainflops/result.h"

namespace trainflops {

// Splits a flags file into words the way a shell reads a launch script's
// command line: words separated by blanks and newlines, "#" starting a comment
// at the start of a word, a backslash before a newline joining the lines,
// '...' and "..." quoting, a backslash escaping the next character. A shell
// variable ("$NUM_LAYERS") or command substitution cannot be known here:
// an error naming the line. `path` only labels errors ("PATH:LINE: ...").
Result<std::vector<std::string>> split_flags_file(std::string_view text, std::string_view path);

// The words of the flags file `at_path` ("@PATH") names, read with the
// config-file size limit. A file whose first word is not a flag ("--...") is
// not a flags file: the error says so without showing what it holds.
struct FlagsFile {
  std::string path;
  std::vector<std::string> words;
};
Result<FlagsFile> read_flags_file(std::string_view at_path);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_FLAGS_FILE_H_
